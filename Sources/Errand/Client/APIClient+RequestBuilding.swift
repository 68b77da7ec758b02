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
  ///   without scheme or host, a `.` or `..` path segment, a header name or value that is not
  ///   valid (a value with CR or LF could inject headers), a body that cannot be encoded, or a
  ///   timeout that is not positive.
  public nonisolated func makeRequest<Value>(for endpoint: Endpoint<Value>) throws -> HTTPRequest {
    func invalid(_ problem: String) -> APIError {
      .invalidRequest("\(endpoint.method) \(endpoint.path): \(problem)")
    }
    let url = try makeURL(path: endpoint.path, query: endpoint.query, invalid: invalid)

    var headers = HTTPHeaders()
    if let accept = endpoint.decoding.accept {
      headers["Accept"] = accept
    }
    if let userAgent = configuration.userAgent {
      headers["User-Agent"] = userAgent
    }
    var body: Data?
    if let requestBody = endpoint.body {
      do {
        let encoded = try requestBody.encoded(with: configuration.encoder)
        body = encoded.data
        headers["Content-Type"] = encoded.contentType
      } catch APIError.invalidRequest(let reason) {
        throw invalid(reason)
      } catch {
        throw invalid("the body could not be encoded: \(APIError.describe(error))")
      }
    }
    headers.merge(configuration.headers)
    headers.merge(endpoint.headers)
    if let problem = headers.validationProblem {
      throw invalid(problem)
    }

    let timeout = endpoint.timeout ?? configuration.timeout
    if let timeout, timeout <= .zero {
      throw invalid("the timeout must be positive, not \(timeout).")
    }
    return HTTPRequest(
      method: endpoint.method, url: url, headers: headers, body: body, timeout: timeout)
  }

  /// The base URL joined with a plain-text path and query.
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

    let items = query.map { item in
      let name = PercentEncoding.encode(item.name, allowing: PercentEncoding.queryComponent)
      guard let value = item.value else { return name }
      return name + "=" + PercentEncoding.encode(value, allowing: PercentEncoding.queryComponent)
    }
    let baseQuery = components.percentEncodedQuery.map { [$0] } ?? []
    let allQuery = (baseQuery + items).filter { !$0.isEmpty }
    components.percentEncodedQuery = allQuery.isEmpty ? nil : allQuery.joined(separator: "&")
    components.fragment = nil

    guard let url = components.url else {
      throw invalid("the path \"\(path)\" does not form a URL with \"\(baseURL.absoluteString)\".")
    }
    return url
  }
}

extension HTTPHeaders {
  /// Why these headers cannot be sent, or `nil` when they can: a name must be an RFC 9110 token,
  /// and a value must not hold control characters other than tab (CR or LF would inject headers).
  var validationProblem: String? {
    for field in fields {
      if field.name.isEmpty || !field.name.utf8.allSatisfy(Self.isTokenByte) {
        return "the header name \"\(field.name.debugEscaped)\" is not a valid token."
      }
      if field.value.utf8.contains(where: { $0 < 0x20 && $0 != 0x09 || $0 == 0x7F }),
        let bad = field.value.unicodeScalars.first(where: { $0.isForbiddenInHeaderValue })
      {
        return "the value of header \"\(field.name)\" contains \(bad.controlName); "
          + "header values must not contain control characters."
      }
    }
    return nil
  }

  /// RFC 9110 `tchar`: letters, digits and ``!#$%&'*+-.^_`|~``.
  private static func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      return true
    default:
      return "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
  }
}

extension Unicode.Scalar {
  /// Control characters other than tab, which a header value must not contain.
  fileprivate var isForbiddenInHeaderValue: Bool {
    (value < 0x20 && self != "\t") || value == 0x7F
  }

  /// A readable name, for example `a line feed (U+000A)`.
  fileprivate var controlName: String {
    let code = String(format: "U+%04X", value)
    switch self {
    case "\r": return "a carriage return (\(code))"
    case "\n": return "a line feed (\(code))"
    case "\0": return "a NUL character (\(code))"
    default: return "the control character \(code)"
    }
  }
}

extension String {
  /// The string with control characters escaped, safe to put in a message.
  fileprivate var debugEscaped: String {
    String(debugDescription.dropFirst().dropLast())
  }
}
