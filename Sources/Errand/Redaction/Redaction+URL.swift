import Foundation

extension Redaction {
  /// The URL as text with the credentials and sensitive query values hidden: its user info
  /// whole (user name and password, since an API key is often the user name), and the values
  /// of ``queryParameters``.
  ///
  /// Every query item keeps its place and its spelling; empty items (`?a=1&`, `?&`, `?=`) are
  /// kept as written. `name=value` pairs in the fragment are redacted as in the query (tokens of
  /// OAuth's implicit grant travel there), after the fragment's own `?` when it has one.
  /// - Parameter url: The URL.
  /// - Returns: The text, for example `https://x.example/a?token=<redacted>&page=2`.
  public func redact(_ url: URL) -> String {
    guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
      return url.absoluteString
    }
    if components.user != nil || components.password != nil {
      // The whole user info: an API key is often sent as the user name (`https://KEY@host/`).
      components.password = nil
      components.percentEncodedUser = "redacted"
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
    return redactingFragment(text)
  }

  /// `text` with the `name=value` pairs after its first `#` redacted as a query's are (after
  /// the fragment's own `?`, when it has one: a hash route such as `#/callback?access_token=`).
  private func redactingFragment(_ text: String) -> String {
    guard let hash = text.firstIndex(of: "#") else { return text }
    let (route, pairs) = Self.fragmentPairs(text[text.index(after: hash)...])
    return String(text[...hash]) + route
      + Self.redactPairs(String(pairs), hiding: queryParameters, plusIsSpace: false)
  }

  /// A fragment split into what comes before its `name=value` pairs (a hash route up to and
  /// including its first `?`, or nothing) and the pairs.
  static func fragmentPairs(_ fragment: Substring) -> (route: Substring, pairs: Substring) {
    guard let question = fragment.firstIndex(of: "?") else { return (fragment.prefix(0), fragment) }
    let start = fragment.index(after: question)
    return (fragment[..<start], fragment[start...])
  }

  /// URL text (a `Location`, a link in a body) with the user info and secret query values
  /// hidden, as written: it is not parsed as a URL (older Apple systems reject spaces and
  /// non-ASCII), so the user info between `://` and `@` and the `name=value` pairs between `?`
  /// and `#` are redacted where they stand, and everything else keeps its spelling.
  /// - Parameter text: The URL as written.
  /// - Returns: The text with its secrets hidden.
  public func redact(urlText text: String) -> String {
    var result = text
    if let schemeEnd = result.range(of: "://") {
      let rest = result[schemeEnd.upperBound...]
      let authority = rest[..<(rest.firstIndex(where: { "/?#".contains($0) }) ?? rest.endIndex)]
      if let at = authority.lastIndex(of: "@") {
        result.replaceSubrange(authority.startIndex..<at, with: "redacted")
      }
    }
    result = redactingFragment(result)
    let fragment = result.firstIndex(of: "#") ?? result.endIndex
    guard let question = result[..<fragment].firstIndex(of: "?") else { return result }
    let start = result.index(after: question)
    let query = String(result[start..<fragment])
    result.replaceSubrange(
      start..<fragment, with: Self.redactPairs(query, hiding: queryParameters, plusIsSpace: false))
    return result
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
