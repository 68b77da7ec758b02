import Foundation

/// Which secrets to hide when Errand prints requests and responses: header values, query
/// parameter values and JSON or form body fields, each replaced by `<redacted>`.
///
/// It is the one engine behind everything Errand prints: `HTTPRequest.description`,
/// `cURLDescription`, ``LoggingMiddleware``, ``APIError`` descriptions and the test kit's
/// unmatched-request reports and cassettes. `Authorization`, `Proxy-Authorization`, `Cookie` and
/// `Set-Cookie` are always hidden. Names are compared ignoring case, however they are added.
///
/// ```swift
/// var redaction = Redaction.default
/// redaction.headers.insert("X-Session")
/// redaction.bodyFields.insert("pin")
/// ```
public struct Redaction: Sendable, Hashable {
  /// Header names to hide on top of `Authorization`, `Proxy-Authorization`, `Cookie` and
  /// `Set-Cookie`, which are always hidden; kept lowercased.
  public var headers: Set<String> {
    didSet { headers = Self.lowercased(headers) }
  }
  /// Query parameter names whose values are hidden; kept lowercased.
  public var queryParameters: Set<String> {
    didSet { queryParameters = Self.lowercased(queryParameters) }
  }
  /// JSON object keys (at any depth) and form field names whose values are hidden; kept
  /// lowercased.
  public var bodyFields: Set<String> {
    didSet { bodyFields = Self.lowercased(bodyFields) }
  }

  /// Create a redaction; names are compared ignoring case.
  /// - Parameters:
  ///   - headers: Header names to hide on top of the credential headers.
  ///   - queryParameters: Query parameter names to hide.
  ///   - bodyFields: JSON keys and form fields to hide.
  public init(
    headers: Set<String> = [], queryParameters: Set<String> = [], bodyFields: Set<String> = []
  ) {
    self.headers = Self.lowercased(headers)
    self.queryParameters = Self.lowercased(queryParameters)
    self.bodyFields = Self.lowercased(bodyFields)
  }

  /// The usual secrets: API key and token headers (`X-API-Key`, `PRIVATE-TOKEN`, …); `token`, `access_token`, `api_key`, `key`,
  /// `secret`, `password`, `signature` and similar query parameters and body fields; body fields
  /// in camel case too (`accessToken`, `refreshToken`, `idToken`, `clientSecret`, `apiKey`), as
  /// many JSON APIs name them; and the signature, credential and session token of an AWS or
  /// Google Cloud Storage presigned URL (`X-Amz-Signature`, `X-Amz-Security-Token`,
  /// `X-Goog-Signature`, …), which is a bearer credential on its own.
  public static let `default` = Redaction(
    headers: [
      "x-api-key", "api-key", "x-auth-token", "x-access-token", "x-csrf-token", "private-token",
    ],
    queryParameters: [
      "token", "access_token", "refresh_token", "id_token", "api_key", "apikey", "key", "secret",
      "client_secret", "password", "signature", "sig", "code",
      "x-amz-signature", "x-amz-security-token", "x-amz-credential",
      "x-goog-signature", "x-goog-credential",
    ],
    bodyFields: [
      "password", "token", "access_token", "refresh_token", "id_token", "secret", "client_secret",
      "api_key", "apikey", "accesstoken", "refreshtoken", "idtoken", "clientsecret",
    ])

  /// A redaction that hides everything this one or `other` hides.
  /// - Parameter other: Another redaction, such as a request's.
  /// - Returns: The union of both.
  public func merging(_ other: Redaction) -> Redaction {
    guard other != self else { return self }
    return Redaction(
      headers: headers.union(other.headers),
      queryParameters: queryParameters.union(other.queryParameters),
      bodyFields: bodyFields.union(other.bodyFields))
  }

  /// Whether a header's value is hidden: a credential header or one of ``headers``.
  /// - Parameter name: The header name, in any case.
  /// - Returns: `true` when its value is hidden.
  public func hidesHeader(_ name: String) -> Bool {
    let name = name.lowercased()
    return HTTPHeaders.sensitiveNames.contains(name) || headers.contains(name)
  }

  /// The headers with sensitive values hidden, and the secrets of URLs in `Location`,
  /// `Content-Location`, `Referer` and `Refresh` values and in each `<…>` of a `Link`.
  /// - Parameter headers: The headers.
  /// - Returns: The same names in the same order, secrets replaced.
  public func redact(_ headers: HTTPHeaders) -> HTTPHeaders {
    HTTPHeaders(
      headers.fields.map { field in
        // Lowercased once per field: `hidesHeader(_:)` and the checks below read the same name.
        let name = field.name.lowercased()
        if HTTPHeaders.sensitiveNames.contains(name) || self.headers.contains(name) {
          return HTTPHeaders.Field(name: field.name, value: HTTPHeaders.redactedValue)
        }
        if Self.urlHeaders.contains(name) {
          return HTTPHeaders.Field(name: field.name, value: redact(urlText: field.value))
        }
        if name == "link" {
          return HTTPHeaders.Field(name: field.name, value: redact(link: field.value))
        }
        return field
      })
  }

  /// Headers whose value is a URL, which can carry a secret query value or a password.
  private static let urlHeaders: Set<String> = [
    "location", "content-location", "referer", "refresh",
  ]

  /// A `Link` value (RFC 8288) with the URL in each `<…>` redacted, its parameters as written: a
  /// next page's URL often carries a token or a signature.
  private func redact(link value: String) -> String {
    var result = ""
    var rest = Substring(value)
    while let open = rest.firstIndex(of: "<"), let close = rest[open...].firstIndex(of: ">") {
      result += rest[...open]
      result += redact(urlText: String(rest[rest.index(after: open)..<close]))
      rest = rest[close...]
    }
    return result + rest
  }

  /// A request with sensitive headers, query values and body fields hidden.
  /// - Parameter request: The request.
  /// - Returns: The redacted request; its URL keeps its shape with `<redacted>` values.
  public func redact(_ request: HTTPRequest) -> HTTPRequest {
    var copy = request
    copy.headers = redact(request.headers)
    copy.body = request.body.map { redact(body: $0, contentType: request.headers["Content-Type"]) }
    copy.url = redactedURL(request.url)
    return copy
  }

  /// A response with sensitive headers and body fields hidden, and its URL's secrets too; every
  /// secret value its ``HTTPResponse/request`` carried (a token, an API key, a password) is
  /// scrubbed from the body and the header values wherever a server echoed it. A
  /// `Content-Length` follows the redacted body's length.
  /// - Parameter response: The response.
  /// - Returns: The redacted response.
  public func redact(_ response: HTTPResponse) -> HTTPResponse {
    var copy = response
    copy.headers = redact(response.headers)
    copy.body = redact(body: response.body, contentType: response.headers["Content-Type"])
    if let request = response.request {
      let secrets = secretValues(in: request)
      if !copy.body.isEmpty {
        copy.body = Self.scrub(secrets, from: copy.body)
      }
      copy.headers = Self.scrub(secrets, from: copy.headers)
    }
    if copy.body.count != response.body.count, copy.headers["Content-Length"] != nil {
      copy.headers["Content-Length"] = String(copy.body.count)
    }
    copy.url = response.url.map(redactedURL)
    return copy
  }

  /// A response's headers with sensitive ones hidden and every secret value `request` carried
  /// scrubbed from the rest, wherever a server echoed it (`WWW-Authenticate`'s
  /// `error_description`, a debugging header): what logs and events show of a response head.
  /// - Parameters:
  ///   - headers: The response's headers.
  ///   - request: The request it answered, as sent.
  /// - Returns: The headers as they may be shown.
  package func redact(_ headers: HTTPHeaders, answering request: HTTPRequest) -> HTTPHeaders {
    Self.scrub(secretValues(in: request), from: redact(headers))
  }

  /// `headers` with every occurrence of each secret value replaced by `<redacted>`, in the
  /// names as in the values: a server may make a header of what it got (`X-Echo-<token>`).
  package static func scrub(_ secrets: [String], from headers: HTTPHeaders) -> HTTPHeaders {
    guard !secrets.isEmpty else { return headers }
    return HTTPHeaders(
      headers.fields.map { field in
        HTTPHeaders.Field(
          name: scrub(secrets, from: field.name), value: scrub(secrets, from: field.value))
      })
  }

  /// `text` with every occurrence of each secret value replaced by `<redacted>`.
  package static func scrub(_ secrets: [String], from text: String) -> String {
    String(decoding: scrub(secrets, from: Data(text.utf8)), as: UTF8.self)
  }

  /// The URL with secrets replaced by a percent-encoded `<redacted>`, so that it stays a URL.
  func redactedURL(_ url: URL) -> URL {
    // Nothing to hide without a query, a fragment or user info: no parsing. (A fragment alone
    // carries OAuth's implicit-grant token: `redact(_:)` hides its pairs too.)
    guard url.query != nil || url.fragment != nil || url.user != nil || url.password != nil
    else {
      return url.absoluteURL
    }
    return URL(
      string: redact(url).replacingOccurrences(
        of: HTTPHeaders.redactedValue, with: "%3Credacted%3E"))
      ?? url
  }

  private static func lowercased(_ names: Set<String>) -> Set<String> {
    names.allSatisfy { $0 == $0.lowercased() } ? names : Set(names.map { $0.lowercased() })
  }
}
