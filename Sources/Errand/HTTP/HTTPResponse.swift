import Foundation

/// An HTTP response as a transport returns it: status, headers and the whole body.
///
/// Equality and hashing compare status, headers, body and URL; ``request`` and ``attempts`` are
/// context and do not take part.
public struct HTTPResponse: Sendable, Hashable {
  /// The status code, for example `200`.
  public var status: Int
  /// The header fields.
  public var headers: HTTPHeaders
  /// The body bytes; empty when the response has no body.
  public var body: Data
  /// The URL that produced the response, after redirects, where the transport knows it.
  public var url: URL?
  /// The request that produced the response, where known; ``APIClient`` fills it in, so error
  /// messages can name the method.
  public internal(set) var request: HTTPRequest?
  /// How many times the request was sent to get this response; retries raise it above 1.
  public internal(set) var attempts = 1

  /// Create a response.
  /// - Parameters:
  ///   - status: The status code.
  ///   - headers: The header fields.
  ///   - body: The body bytes.
  ///   - url: The final URL, where known.
  ///   - request: The request that produced the response, where known.
  public init(
    status: Int, headers: HTTPHeaders = [:], body: Data = Data(), url: URL? = nil,
    request: HTTPRequest? = nil
  ) {
    self.status = status
    self.headers = headers
    self.body = body
    self.url = url
    self.request = request
  }

  /// Compare status, headers, body and URL; the request is context, not part of the value.
  public static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
    lhs.status == rhs.status && lhs.headers == rhs.headers && lhs.body == rhs.body
      && lhs.url == rhs.url
  }

  /// Hash consistently with `==`.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(status)
    hasher.combine(headers)
    hasher.combine(body)
    hasher.combine(url)
  }
}

extension HTTPResponse: CustomStringConvertible {
  /// The status and body size, for example `HTTP 404 (12 bytes)`.
  public var description: String { "HTTP \(status) (\(body.count) bytes)" }
}
