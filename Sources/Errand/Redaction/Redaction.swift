import Foundation

/// Which secrets to hide when Errand prints requests and responses: header values, query
/// parameter values and JSON or form body fields, each replaced by `<redacted>`.
///
/// `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie` are always hidden.
///
/// ```swift
/// var redaction = Redaction.default
/// redaction.headers.insert("x-session")
/// redaction.bodyFields.insert("pin")
/// ```
public struct Redaction: Sendable, Hashable {
  /// Header names to hide on top of ``HTTPHeaders/sensitiveNames``, lowercased.
  public var headers: Set<String>
  /// Query parameter names whose values are hidden, lowercased.
  public var queryParameters: Set<String>
  /// JSON object keys (at any depth) and form field names whose values are hidden, lowercased.
  public var bodyFields: Set<String>

  /// Create a redaction; names are compared ignoring case.
  /// - Parameters:
  ///   - headers: Header names to hide on top of the credential headers.
  ///   - queryParameters: Query parameter names to hide.
  ///   - bodyFields: JSON keys and form fields to hide.
  public init(
    headers: Set<String> = [], queryParameters: Set<String> = [], bodyFields: Set<String> = []
  ) {
    self.headers = Set(headers.map { $0.lowercased() })
    self.queryParameters = Set(queryParameters.map { $0.lowercased() })
    self.bodyFields = Set(bodyFields.map { $0.lowercased() })
  }

  /// The usual secrets: API key and token headers; `token`, `access_token`, `api_key`, `key`,
  /// `secret`, `password`, `signature` and similar query parameters and body fields.
  public static let `default` = Redaction(
    headers: ["x-api-key", "api-key", "x-auth-token", "x-access-token", "x-csrf-token"],
    queryParameters: [
      "token", "access_token", "refresh_token", "id_token", "api_key", "apikey", "key", "secret",
      "client_secret", "password", "signature", "sig", "code",
    ],
    bodyFields: [
      "password", "token", "access_token", "refresh_token", "id_token", "secret", "client_secret",
      "api_key", "apikey",
    ])

  /// The headers with sensitive values hidden.
  /// - Parameter headers: The headers.
  /// - Returns: The same names in the same order, secrets replaced.
  public func redact(_ headers: HTTPHeaders) -> HTTPHeaders {
    headers.redacted(self.headers)
  }

  /// The URL as text with the password and sensitive query values hidden.
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
      let items = query.split(separator: "&", omittingEmptySubsequences: false).map {
        item -> String in
        let parts = item.split(separator: "=", maxSplits: 1)
        let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
        guard parts.count == 2, queryParameters.contains(name.lowercased()) else {
          return String(item)
        }
        return "\(parts[0])=\(HTTPHeaders.redactedValue)"
      }
      if let hash = text.firstIndex(of: "#") {
        text.insert(contentsOf: "?" + items.joined(separator: "&"), at: hash)
      } else {
        text += "?" + items.joined(separator: "&")
      }
    }
    return text
  }

  /// A body with sensitive JSON or form fields hidden; other bodies are returned unchanged.
  /// - Parameters:
  ///   - body: The body.
  ///   - contentType: The `Content-Type` header value, which tells a form from JSON.
  /// - Returns: The redacted body.
  public func redact(body: Data, contentType: String?) -> Data {
    if contentType?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true {
      return redactForm(body)
    }
    guard let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])
    else {
      return body
    }
    let redacted = redactJSON(object)
    return
      (try? JSONSerialization.data(
        withJSONObject: redacted, options: [.sortedKeys, .fragmentsAllowed]))
      ?? body
  }

  /// A request with sensitive headers, query values and body fields hidden.
  /// - Parameter request: The request.
  /// - Returns: The redacted request; its URL keeps its shape with `<redacted>` values.
  public func redact(_ request: HTTPRequest) -> HTTPRequest {
    var copy = request
    copy.headers = redact(request.headers)
    copy.body = request.body.map { redact(body: $0, contentType: request.headers["Content-Type"]) }
    if let url = URL(
      string: redact(request.url).replacingOccurrences(
        of: HTTPHeaders.redactedValue, with: "%3Credacted%3E"))
    {
      copy.url = url
    }
    return copy
  }

  private func redactJSON(_ value: Any) -> Any {
    if let object = value as? [String: Any] {
      var result: [String: Any] = [:]
      for (key, inner) in object {
        result[key] =
          bodyFields.contains(key.lowercased()) ? HTTPHeaders.redactedValue : redactJSON(inner)
      }
      return result
    }
    if let array = value as? [Any] {
      return array.map(redactJSON)
    }
    return value
  }

  private func redactForm(_ body: Data) -> Data {
    guard let text = String(data: body, encoding: .utf8) else { return body }
    let pairs = text.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
      let parts = pair.split(separator: "=", maxSplits: 1)
      let name =
        String(parts[0]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
      guard parts.count == 2, bodyFields.contains(name.lowercased()) else { return String(pair) }
      return "\(parts[0])=\(HTTPHeaders.redactedValue)"
    }
    return Data(pairs.joined(separator: "&").utf8)
  }
}
