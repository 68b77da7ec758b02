import Foundation

extension APIClient {
  /// Build the request for an endpoint without sending it.
  ///
  /// It joins the base URL and the endpoint's path, percent-encodes path segments and query
  /// items, and sets headers in this order, later ones winning: `Accept` (from the decoding
  /// strategy), `User-Agent`, the body's `Content-Type`, the client's default headers and the
  /// endpoint's headers. The timeout is the endpoint's, else the client's. An endpoint with an
  /// ``Endpoint/idempotencyKey`` gets its `Idempotency-Key` here: a
  /// ``IdempotencyKey/generated`` one is new at every call of this method, which is once per call
  /// of the client.
  /// - Parameter endpoint: The endpoint to build.
  /// - Returns: The request, ready for a transport.
  /// - Throws: ``APIError/invalidRequest(_:)`` naming the endpoint and the problem: a base URL
  ///   whose scheme is not `http` or `https` (in any case) or that has no host, a method that is
  ///   not an RFC 9110 token, a `.` or `..` path segment, a header name or value that is not
  ///   valid (a value with CR or LF could inject headers), a framing header such as
  ///   `Content-Length` (see ``HTTPRequest/framingHeaderNames``), a body that cannot be encoded,
  ///   a timeout that is not positive, or an idempotency key on a safe method or that cannot be
  ///   sent (see ``Endpoint/withIdempotencyKey(_:)``).
  public nonisolated func makeRequest<Value>(for endpoint: Endpoint<Value>) throws -> HTTPRequest {
    func invalid(_ problem: String) -> APIError {
      .invalidRequest("\(endpoint): \(problem)")
    }
    if let problem = endpoint.method.validationProblem {
      throw APIError.invalidRequest(
        "\(String(reflecting: endpoint.method.rawValue)) \(endpoint.url?.redactedString ?? endpoint.path): \(problem)"
      )
    }
    let url: URL
    if let absolute = endpoint.url {
      url = try makeURL(absolute: absolute, query: endpoint.query, invalid: invalid)
    } else if endpoint.query.isEmpty {
      url = try builtURLs.url(for: endpoint.path) {
        try makeURL(path: endpoint.path, query: [], invalid: invalid)
      }
    } else {
      url = try makeURL(path: endpoint.path, query: endpoint.query, invalid: invalid)
    }

    var headers = HTTPHeaders()
    if let accept = endpoint.decoding.accept {
      headers["Accept"] = accept
    }
    let leavesOrigin = endpoint.leavesOrigin(
      of: baseURL, trustedHosts: configuration.trustedHosts)
    // The user agent is a default header like the others: at another origin, only when
    // `crossOriginHeaders` names it (as it does unless changed).
    if let userAgent = configuration.userAgent,
      !leavesOrigin || configuration.crossOriginHeaders.contains("user-agent")
    {
      headers["User-Agent"] = userAgent
    }
    var body: Data?
    var bodyFile: URL?
    if let requestBody = endpoint.body {
      do {
        let encoded = try requestBody.encoded(with: configuration.encoder)
        body = encoded.file == nil ? encoded.data : nil
        bodyFile = encoded.file
        headers["Content-Type"] = encoded.contentType
      } catch APIError.invalidRequest(let reason) {
        throw invalid(reason)
      } catch {
        throw invalid("the body could not be encoded: \(APIError.describe(error))")
      }
    }
    if leavesOrigin {
      // Another origin gets only the default headers that are safe anywhere: deny by default.
      headers.merge(
        HTTPHeaders(configuration.headers.fields.filter(configuration.goesToOtherOrigins)))
    } else {
      headers.merge(configuration.headers)
    }
    headers.merge(endpoint.headers)
    if endpoint.idempotencyKey != nil, let key = try endpoint.idempotencyKeyValue(invalid: invalid)
    {
      headers[IdempotencyKey.fieldName] = key
    }

    let timeout = endpoint.timeout ?? configuration.timeout
    if let timeout, timeout <= .zero {
      throw invalid("the timeout must be positive, not \(timeout).")
    }
    let maximumResponseSize = endpoint.maximumResponseSize ?? configuration.maximumResponseSize
    if let maximumResponseSize, maximumResponseSize < 0 {
      throw invalid("the maximum response size must not be negative, not \(maximumResponseSize).")
    }
    let request = HTTPRequest(
      method: endpoint.method, url: url, headers: headers, body: body, timeout: timeout,
      maximumResponseSize: maximumResponseSize, bodyFile: bodyFile,
      redaction: configuration.redaction)
    if let problem = request.validationProblem {
      throw invalid(problem)
    }
    return request
  }

  /// The base URL joined with a plain-text path and query.
  /// An absolute URL with more query items: `http` or `https`, with a host.
  private nonisolated func makeURL(
    absolute: URL, query: [URLQueryItem], invalid: (String) -> APIError
  ) throws -> URL {
    guard var components = URLComponents(url: absolute, resolvingAgainstBaseURL: true),
      let scheme = components.scheme?.lowercased(), ["http", "https"].contains(scheme),
      let host = components.host, !host.isEmpty
    else {
      throw invalid("the URL needs an http or https scheme and a host.")
    }
    components.scheme = scheme
    Self.append(query, to: &components)
    guard let url = components.url else {
      throw invalid("the query does not form a URL.")
    }
    return url
  }

  /// Add query items (plain text, percent-encoded here) after the URL's own, and drop the
  /// fragment.
  private static func append(_ query: [URLQueryItem], to components: inout URLComponents) {
    components.percentEncodedQuery = encodedQuery(components.percentEncodedQuery, query)
    components.fragment = nil
  }

  /// A percent-encoded query and plain-text items (percent-encoded here) joined with `&`, empty
  /// parts dropped; `nil` when nothing is left.
  private static func encodedQuery(_ base: String?, _ query: [URLQueryItem]) -> String? {
    var parts: [String] = []
    if let base, !base.isEmpty {
      parts.append(base)
    }
    for item in query {
      var part = PercentEncoding.encode(item.name, allowing: PercentEncoding.queryComponent)
      if let value = item.value {
        part += "="
        part += PercentEncoding.encode(value, allowing: PercentEncoding.queryComponent)
      }
      if !part.isEmpty {
        parts.append(part)
      }
    }
    return parts.isEmpty ? nil : parts.joined(separator: "&")
  }

  private nonisolated func makeURL(
    path: String, query: [URLQueryItem], invalid: (String) -> APIError
  ) throws -> URL {
    guard let base = baseParts else {
      throw invalid(
        "the base URL \"\(baseURL.absoluteString)\" needs an http or https scheme and a host, such as https://api.example.com."
      )
    }
    var relative = Substring(path)
    while relative.first == "/" {
      relative = relative.dropFirst()
    }
    var address = base.origin
    if !relative.isEmpty {
      address += base.trimmedPath
      for segment in relative.split(separator: "/", omittingEmptySubsequences: false) {
        if segment == "." || segment == ".." {
          throw invalid(
            "the path segment \"\(segment)\" would leave the endpoint's path; use a full path.")
        }
        address += "/"
        address += PercentEncoding.encode(String(segment), allowing: PercentEncoding.pathSegment)
      }
    } else {
      address += base.path.isEmpty ? "/" : base.path
    }
    if let query = Self.encodedQuery(base.query, query) {
      address += "?"
      address += query
    }
    guard let url = URL(string: address) else {
      throw invalid("the path \"\(path)\" does not form a URL with \"\(baseURL.absoluteString)\".")
    }
    return url
  }
}

/// The parts of a client's base URL that every request reuses, split once.
struct BaseURLParts: Sendable {
  /// Scheme, credentials, host and port, percent-encoded as `URLComponents` writes them.
  let origin: String
  /// The percent-encoded path, as given.
  let path: String
  /// The path without trailing slashes, to which endpoint paths are joined.
  let trimmedPath: Substring
  /// The percent-encoded query, if any.
  let query: String?

  /// Split a base URL; `nil` when its scheme is not `http` or `https` (in any case; it is written
  /// in lowercase) or it has no host.
  init?(_ url: URL) {
    guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true),
      let scheme = components.scheme?.lowercased(), ["http", "https"].contains(scheme),
      let host = components.host, !host.isEmpty
    else { return nil }
    components.scheme = scheme
    path = components.percentEncodedPath
    var trimmed = Substring(path)
    while trimmed.last == "/" {
      trimmed = trimmed.dropLast()
    }
    trimmedPath = trimmed
    query = components.percentEncodedQuery
    components.percentEncodedPath = ""
    components.percentEncodedQuery = nil
    components.fragment = nil
    guard let origin = components.string else { return nil }
    self.origin = origin
  }
}

extension APIClient.Configuration {
  /// Whether a header may go to an origin the app did not choose or trust: it is one of
  /// ``crossOriginHeaders``, and ``redaction`` does not hide it.
  func goesToOtherOrigins(_ field: HTTPHeaders.Field) -> Bool {
    crossOriginHeaders.contains(field.name.lowercased()) && !redaction.hidesHeader(field.name)
  }
}
