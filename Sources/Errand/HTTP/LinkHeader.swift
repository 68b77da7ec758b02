import Foundation

/// The links of a `Link` header (RFC 8288): `<https://api.example.com/dogs?page=2>; rel="next"`.
public struct LinkHeader: Sendable, Hashable {
  /// One link: where it points and how it relates to the response.
  public struct Link: Sendable, Hashable {
    /// The target, resolved against the response's URL when it is relative.
    public var url: URL
    /// The relation types (`rel`), lowercased: `next`, `prev`, `last`...
    public var relations: Set<String>
  }

  /// The links, in order.
  public var links: [Link]

  /// Parse a `Link` header value; links that do not parse are skipped.
  /// - Parameters:
  ///   - value: The header value (several `Link` fields joined with `, `).
  ///   - base: The URL relative targets resolve against.
  public init(_ value: String, relativeTo base: URL? = nil) {
    var links: [Link] = []
    var rest = Substring(value)
    while let open = rest.firstIndex(of: "<") {
      guard let close = rest[open...].firstIndex(of: ">") else { break }
      let target = String(rest[rest.index(after: open)..<close])
      // The parameters run to the next link, which starts at a `<` after a comma.
      var parameters = rest[rest.index(after: close)...]
      if let next = parameters.range(of: ",\\s*<", options: .regularExpression) {
        rest = parameters[parameters.index(before: next.upperBound)...]
        parameters = parameters[..<next.lowerBound]
      } else {
        rest = ""
      }
      var relations: Set<String> = []
      for parameter in parameters.split(separator: ";") {
        let pair = parameter.split(separator: "=", maxSplits: 1).map {
          $0.trimmingCharacters(in: .whitespaces)
        }
        guard pair.count == 2, pair[0].lowercased() == "rel" else { continue }
        let names = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        relations.formUnion(names.split(separator: " ").map { $0.lowercased() })
      }
      if let url = URL(string: target, relativeTo: base)?.absoluteURL {
        links.append(Link(url: url, relations: relations))
      }
    }
    self.links = links
  }

  /// The first link with this relation, such as `next`.
  /// - Parameter relation: The relation type.
  /// - Returns: Its URL, or `nil`.
  public func url(for relation: String) -> URL? {
    links.first { $0.relations.contains(relation.lowercased()) }?.url
  }
}
