import Foundation

extension APIClient {
  /// Build the request for an endpoint without sending it.
  ///
  /// It joins the base URL and the endpoint's path, percent-encodes path segments and query
  /// items, and sets headers in this order, later ones winning: `Accept` (from the decoding
  /// strategy), `User-Agent`, the body's `Content-Type`, the client's default headers and the
  /// endpoint's headers. The timeout is the endpoint's, else the client's.
  /// - Parameter endpoint: The endpoint to build.
  /// - Returns: The request, ready for a transport.
  /// - Throws: ``APIError/invalidRequest(_:)`` naming the endpoint and the problem: a base URL
  ///   without scheme or host, a method that is not an RFC 9110 token, a `.` or `..` path segment, a header name or value that is not
  ///   valid (a value with CR or LF could inject headers), a body that cannot be encoded, or a
  ///   timeout that is not positive.
  public nonisolated func makeRequest<Value>(for endpoint: Endpoint<Value>) throws -> HTTPRequest {
    func invalid(_ problem: String) -> APIError {
      .invalidRequest("\(endpoint): \(problem)")
    }
    guard endpoint.method.isValidToken else {
      throw APIError.invalidRequest(
        "\(String(reflecting: endpoint.method.rawValue)) \(endpoint.url?.redactedString ?? endpoint.path): the method is not a valid token."
      )
    }
    let url: URL
    if let absolute = endpoint.url {
      url = try makeURL(absolute: absolute, query: endpoint.query, invalid: invalid)
    } else {
      url = try makeURL(path: endpoint.path, query: endpoint.query, invalid: invalid)
    }

    var headers = HTTPHeaders()
    if let accept = endpoint.decoding.accept {
      headers["Accept"] = accept
    }
    if let userAgent = configuration.userAgent {
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
    if endpoint.leavesOrigin(of: baseURL) {
      // Another origin never receives the client's API keys and tokens.
      headers.merge(
        HTTPHeaders(configuration.headers.fields.filter { !Redaction.default.hidesHeader($0.name) })
      )
    } else {
      headers.merge(configuration.headers)
    }
    headers.merge(endpoint.headers)
    if let problem = headers.validationProblem {
      throw invalid(problem)
    }

    let timeout = endpoint.timeout ?? configuration.timeout
    if let timeout, timeout <= .zero {
      throw invalid("the timeout must be positive, not \(timeout).")
    }
    let maximumResponseSize = endpoint.maximumResponseSize ?? configuration.maximumResponseSize
    if let maximumResponseSize, maximumResponseSize < 0 {
      throw invalid("the maximum response size must not be negative, not \(maximumResponseSize).")
    }
    return HTTPRequest(
      method: endpoint.method, url: url, headers: headers, body: body, timeout: timeout,
      maximumResponseSize: maximumResponseSize, bodyFile: bodyFile)
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
    Self.append(query, to: &components)
    guard let url = components.url else {
      throw invalid("the query does not form a URL.")
    }
    return url
  }

  /// Add query items (plain text, percent-encoded here) after the URL's own, and drop the
  /// fragment.
  private static func append(_ query: [URLQueryItem], to components: inout URLComponents) {
    let items = query.map { item in
      let name = PercentEncoding.encode(item.name, allowing: PercentEncoding.queryComponent)
      guard let value = item.value else { return name }
      return name + "=" + PercentEncoding.encode(value, allowing: PercentEncoding.queryComponent)
    }
    let baseQuery = components.percentEncodedQuery.map { [$0] } ?? []
    let allQuery = (baseQuery + items).filter { !$0.isEmpty }
    components.percentEncodedQuery = allQuery.isEmpty ? nil : allQuery.joined(separator: "&")
    components.fragment = nil
  }

  private nonisolated func makeURL(
    path: String, query: [URLQueryItem], invalid: (String) -> APIError
  ) throws -> URL {
    guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: true),
      let scheme = components.scheme, !scheme.isEmpty,
      let host = components.host, !host.isEmpty
    else {
      throw invalid(
        "the base URL \"\(baseURL.absoluteString)\" needs a scheme and a host, such as https://api.example.com."
      )
    }

    var relative = Substring(path)
    while relative.first == "/" {
      relative = relative.dropFirst()
    }
    if !relative.isEmpty {
      let segments = relative.split(separator: "/", omittingEmptySubsequences: false)
      if let dot = segments.first(where: { $0 == "." || $0 == ".." }) {
        throw invalid(
          "the path segment \"\(dot)\" would leave the endpoint's path; use a full path.")
      }
      let encoded = segments.map {
        PercentEncoding.encode(String($0), allowing: PercentEncoding.pathSegment)
      }
      var basePath = Substring(components.percentEncodedPath)
      while basePath.last == "/" {
        basePath = basePath.dropLast()
      }
      components.percentEncodedPath = basePath + "/" + encoded.joined(separator: "/")
    } else if components.percentEncodedPath.isEmpty {
      components.percentEncodedPath = "/"
    }

    Self.append(query, to: &components)

    guard let url = components.url else {
      throw invalid("the path \"\(path)\" does not form a URL with \"\(baseURL.absoluteString)\".")
    }
    return url
  }
}
