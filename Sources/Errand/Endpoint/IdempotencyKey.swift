import Foundation

/// The `Idempotency-Key` an endpoint sends, so that a server can tell a retry of a call from a
/// new call and act on it once: see ``Endpoint/withIdempotencyKey(_:)``.
///
/// The field is defined by the IETF draft *The Idempotency-Key HTTP Header Field*
/// (draft-ietf-httpapi-idempotency-key-header-06). Its value is a Structured Field String
/// (section 2.1, RFC 8941 section 3.3.3), so Errand sends it in double quotes:
///
/// ```
/// Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"
/// ```
///
/// The key is not a credential (the draft asks servers not to let a key alone reach another
/// client's answers, section 5), so it is printed in logs and kept in cassettes like any other
/// header, which lets a log line be matched with the server's record. An app that treats it as a
/// secret adds `idempotency-key` to its ``Redaction/headers``.
public struct IdempotencyKey: Sendable, Hashable {
  private enum Source: Hashable {
    case generated
    case fixed(String)
  }

  private let source: Source

  /// A new key for every call: a random UUID in lowercase, as the draft recommends (section 2.2)
  /// and shows (section 6). Every attempt of one call sends the same key (a retry, a replay
  /// after a token refresh); no other call sends it.
  public static var generated: IdempotencyKey { IdempotencyKey(source: .generated) }

  /// The same key for every call made with it: for an operation the app keeps across launches
  /// (an order saved while offline, sent again after a restart), so that the server acts on it
  /// once however many times it arrives. Give each operation a key of its own: the draft forbids
  /// reusing one with another request payload (section 2.2), and a server answers such a reuse
  /// with `422`.
  ///
  /// The key is sent as a Structured Field String: printable ASCII (space to `~`), `"` and `\`
  /// escaped; a key that is empty or holds anything else fails the call with
  /// ``APIError/invalidRequest(_:)`` before anything is sent.
  /// - Parameter key: The key, unquoted, for example a UUID the app stored.
  /// - Returns: The key.
  public static func fixed(_ key: String) -> IdempotencyKey {
    IdempotencyKey(source: .fixed(key))
  }

  /// The field value for one call: a new UUID for ``generated``, the fixed key otherwise, as a
  /// Structured Field String.
  /// - Throws: The problem, in words, with a fixed key that cannot be sent.
  func fieldValue() throws(Problem) -> String {
    switch source {
    case .generated:
      return Self.quoted(UUID().uuidString.lowercased())
    case .fixed(let key):
      guard !key.isEmpty else {
        throw Problem(text: "the idempotency key is empty.")
      }
      guard key.unicodeScalars.allSatisfy({ (0x20...0x7E).contains($0.value) }) else {
        throw Problem(
          text: "the idempotency key \(String(reflecting: key)) holds a character that a "
            + "Structured Field String cannot carry (only printable ASCII, space to ~).")
      }
      return Self.quoted(key)
    }
  }

  /// A key that cannot be sent, in words.
  struct Problem: Error {
    var text: String
  }

  /// `text` (printable ASCII) as an `sf-string`: in double quotes, with `"` and `\` escaped by a
  /// backslash (RFC 8941 section 4.1.6).
  private static func quoted(_ text: String) -> String {
    var result = "\""
    for character in text {
      if character == "\"" || character == "\\" {
        result.append("\\")
      }
      result.append(character)
    }
    result.append("\"")
    return result
  }
}

extension IdempotencyKey: CustomStringConvertible {
  /// `generated`, or `fixed("…")` with the key: a key is not a secret.
  public var description: String {
    switch source {
    case .generated: "generated"
    case .fixed(let key): "fixed(\(String(reflecting: key)))"
    }
  }
}
