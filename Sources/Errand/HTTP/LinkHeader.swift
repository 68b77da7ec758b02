import Foundation

/// The links of a `Link` header (RFC 8288): `<https://api.example.com/dogs?page=2>; rel="next"`.
///
/// It follows the parsing algorithm of RFC 8288, appendix B, in one pass: a `;` or `,` inside a
/// quoted parameter value does not split it, only the first `rel` parameter of a link counts, its
/// relation types are separated by spaces or tabs, an empty target (`<>`) is the base URL, and
/// parsing stops at the first text that is not a link (such as a parameter without its `;`).
public struct LinkHeader: Sendable, Hashable {
  /// One link: where it points and how it relates to the response.
  public struct Link: Sendable, Hashable {
    /// The target, resolved against the response's URL when it is relative.
    public var url: URL
    /// The relation types of the link's first `rel` parameter, lowercased: `next`, `prev`...
    public var relations: Set<String>
    /// The link's parameters by lowercased name, unquoted; the first of a repeated name wins.
    public var parameters: [String: String] = [:]
  }

  /// The links, in order.
  public var links: [Link]

  /// Parse a `Link` header value; a link whose target does not form a URL is skipped.
  /// - Parameters:
  ///   - value: The header value (several `Link` fields may be joined with `, `).
  ///   - base: The URL relative targets resolve against.
  public init(_ value: String, relativeTo base: URL? = nil) {
    var parser = Parser(Array(value.utf8))
    var links: [Link] = []
    while let (target, parameters) = parser.nextLink() {
      let url: URL?
      if target.isEmpty {
        url = base?.absoluteURL
      } else {
        url = URL(string: target, relativeTo: base)?.absoluteURL
      }
      guard let url else { continue }
      var firstParameters: [String: String] = [:]
      for (name, value) in parameters where firstParameters[name] == nil {
        firstParameters[name] = value
      }
      let relations = (firstParameters["rel"] ?? "")
        .split(whereSeparator: { $0 == " " || $0 == "\t" }).map { $0.lowercased() }
      links.append(Link(url: url, relations: Set(relations), parameters: firstParameters))
    }
    self.links = links
  }

  /// Parse every `Link` field of a response, in order, as RFC 8288 appendix B.1 does: each
  /// field on its own, so that a field that does not parse does not hide the others.
  /// - Parameters:
  ///   - headers: The response's headers.
  ///   - base: The URL relative targets resolve against.
  public init(_ headers: HTTPHeaders, relativeTo base: URL? = nil) {
    links = headers.values(for: "Link").flatMap { LinkHeader($0, relativeTo: base).links }
  }

  /// The first link with this relation, such as `next`.
  /// - Parameter relation: The relation type.
  /// - Returns: Its URL, or `nil`.
  public func url(for relation: String) -> URL? {
    links.first { $0.relations.contains(relation.lowercased()) }?.url
  }
}

extension LinkHeader {
  /// RFC 8288 appendix B.2 to B.4 over UTF-8 bytes, each byte looked at once or twice.
  private struct Parser {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
      while let byte = current, byte == 0x20 || byte == 0x09 { index += 1 }
    }

    /// Consume bytes up to (not including) one of `stops`, or the end.
    private mutating func take(until stops: Set<UInt8>) -> String {
      let start = index
      while let byte = current, !stops.contains(byte) { index += 1 }
      return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// The next link's target and parameters, or `nil` at the end or at text that is not one.
    mutating func nextLink() -> (String, [(String, String)])? {
      // Empty list elements (`, ,`) are allowed around links.
      while let byte = current, byte == 0x20 || byte == 0x09 || byte == UInt8(ascii: ",") {
        index += 1
      }
      guard current == UInt8(ascii: "<") else { return nil }
      index += 1
      let target = take(until: [UInt8(ascii: ">")])
      guard current == UInt8(ascii: ">") else { return nil }
      index += 1
      let parameters = nextParameters()
      skipWhitespace()
      if let byte = current, byte != UInt8(ascii: ",") {
        index = bytes.count  // a link ends at a comma; anything else ends the field
      }
      return (target, parameters)
    }

    private mutating func nextParameters() -> [(String, String)] {
      var parameters: [(String, String)] = []
      while true {
        skipWhitespace()
        guard current == UInt8(ascii: ";") else { return parameters }
        index += 1
        skipWhitespace()
        let name = take(until: [UInt8(ascii: "="), UInt8(ascii: ";"), UInt8(ascii: ",")])
          .trimmingCharacters(in: .whitespaces).lowercased()
        skipWhitespace()
        var value = ""
        if current == UInt8(ascii: "=") {
          index += 1
          skipWhitespace()
          if current == UInt8(ascii: "\"") {
            value = quotedString()
          } else {
            value = take(until: [UInt8(ascii: ";"), UInt8(ascii: ",")])
              .trimmingCharacters(in: .whitespaces)
          }
        }
        if !name.isEmpty {
          parameters.append((name, value))
        }
      }
    }

    /// A quoted string's content, with `\` escapes undone; the index is past its closing quote.
    private mutating func quotedString() -> String {
      index += 1
      var content: [UInt8] = []
      while let byte = current {
        index += 1
        if byte == UInt8(ascii: "\\") {
          if let escaped = current {
            content.append(escaped)
            index += 1
          }
        } else if byte == UInt8(ascii: "\"") {
          break
        } else {
          content.append(byte)
        }
      }
      return String(decoding: content, as: UTF8.self)
    }
  }
}
