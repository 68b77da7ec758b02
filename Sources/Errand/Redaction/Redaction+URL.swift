import Foundation

extension Redaction {
  /// The URL as text with the password and sensitive query values hidden.
  ///
  /// Every query item keeps its place and its spelling; empty items (`?a=1&`, `?&`, `?=`) are
  /// kept as written.
  /// - Parameter url: The URL.
  /// - Returns: The text, for example `https://x.example/a?token=<redacted>&page=2`.
  public func redact(_ url: URL) -> String {
    guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
      return url.absoluteString
    }
    if components.password != nil {
      components.password = "redacted"
    }
    let query = components.percentEncodedQuery
    components.percentEncodedQuery = nil
    var text = components.string ?? url.absoluteString
    if let query {
      let items = Self.redactPairs(query, hiding: queryParameters, plusIsSpace: false)
      if let hash = text.firstIndex(of: "#") {
        text.insert(contentsOf: "?" + items, at: hash)
      } else {
        text += "?" + items
      }
    }
    return text
  }

  /// `name=value` pairs joined by `&` (a query or a form body) with the values of hidden names
  /// replaced; anything else, empty pairs included, is kept as written.
  static func redactPairs(_ text: String, hiding names: Set<String>, plusIsSpace: Bool) -> String {
    text.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
      guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
      let rawName = String(pair[..<equals])
      let spaced = plusIsSpace ? rawName.replacingOccurrences(of: "+", with: " ") : rawName
      let name = spaced.removingPercentEncoding ?? spaced
      guard names.contains(name.lowercased()) else { return String(pair) }
      return "\(rawName)=\(HTTPHeaders.redactedValue)"
    }
    .joined(separator: "&")
  }
}
