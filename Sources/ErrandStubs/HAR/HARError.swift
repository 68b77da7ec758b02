import Foundation

/// Why a HAR could not be read, written or replayed; the message names the entry and the field.
///
/// ```swift
/// do {
///   let har = try HAR(data: data)
/// } catch {
///   print(error)  // HAR entry 3: log.entries[3].response.status: expected a whole number, found a string.
/// }
/// ```
///
/// Messages never quote a header value, a body or a secret query value.
public struct HARError: Error, Hashable, CustomStringConvertible, LocalizedError {
  /// What kind of problem it is.
  public enum Kind: Sendable, Hashable {
    /// The data is not JSON (truncated, or not a HAR at all).
    case invalidJSON
    /// A field is missing, has the wrong type or a value that cannot be replayed.
    case invalidField
    /// The document or a body is larger than ``HAR/Limits`` allow.
    case tooLarge
    /// The file could not be read.
    case unreadable
    /// The file could not be written.
    case unwritable
  }

  /// What kind of problem it is.
  public var kind: Kind
  /// The index of the entry in `log.entries`, when the problem is in an entry.
  public var entry: Int?
  /// Where the problem is, as a path such as `log.entries[3].response.status`; `nil` for the
  /// document as a whole.
  public var field: String?
  /// What is wrong there.
  public var reason: String

  /// Create an error.
  /// - Parameters:
  ///   - kind: What kind of problem it is.
  ///   - entry: The index of the entry, when the problem is in one.
  ///   - field: Where the problem is, as a path.
  ///   - reason: What is wrong there.
  public init(_ kind: Kind, entry: Int? = nil, field: String? = nil, reason: String) {
    self.kind = kind
    self.entry = entry
    self.field = field
    self.reason = reason
  }

  /// The entry, the field and the reason, for example `HAR entry 3:
  /// log.entries[3].response.status: 99999 is not an HTTP status (100 to 999).`
  public var description: String {
    var text = "HAR"
    if let entry {
      text += " entry \(entry)"
    }
    text += ": "
    if let field {
      text += "\(field): "
    }
    text += reason
    return text.hasSuffix(".") ? text : text + "."
  }

  /// The same text as ``description``.
  public var errorDescription: String? { description }

  /// An error in the field of an entry.
  static func field(_ index: Int, _ path: String, _ reason: String) -> HARError {
    HARError(.invalidField, entry: index, field: "log.entries[\(index)].\(path)", reason: reason)
  }

  /// An error from decoding, with its path written as `log.entries[3].response.status`.
  init(decoding error: DecodingError) {
    let context: DecodingError.Context
    switch error {
    case .typeMismatch(_, let found), .valueNotFound(_, let found), .keyNotFound(_, let found),
      .dataCorrupted(let found):
      context = found
    @unknown default:
      self.init(.invalidField, reason: "\(error)")
      return
    }
    let path = context.codingPath
    let entry: Int? =
      path.count >= 3 && path[0].stringValue == "log" && path[1].stringValue == "entries"
      ? path[2].intValue : nil
    self.init(
      .invalidField, entry: entry, field: path.isEmpty ? nil : Self.path(path),
      reason: context.debugDescription)
  }

  /// A coding path as `log.entries[3].response.status`.
  static func path(_ keys: [any CodingKey]) -> String {
    var text = ""
    for key in keys {
      if let index = key.intValue {
        text += "[\(index)]"
      } else {
        text += (text.isEmpty ? "" : ".") + key.stringValue
      }
    }
    return text
  }
}
