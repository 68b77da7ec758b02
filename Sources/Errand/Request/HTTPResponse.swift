import Foundation

/// An HTTP response as a transport returns it: status, headers and the whole body.
public struct HTTPResponse: Sendable, Hashable {
  /// The status code, for example `200`.
  public var status: Int
  /// The header fields.
  public var headers: HTTPHeaders
  /// The body bytes; empty when the response has no body.
  public var body: Data
  /// The URL that produced the response, after redirects, where the transport knows it.
  public var url: URL?

  /// Create a response.
  /// - Parameters:
  ///   - status: The status code.
  ///   - headers: The header fields.
  ///   - body: The body bytes.
  ///   - url: The final URL, where known.
  public init(status: Int, headers: HTTPHeaders = [:], body: Data = Data(), url: URL? = nil) {
    self.status = status
    self.headers = headers
    self.body = body
    self.url = url
  }
}

extension HTTPResponse: CustomStringConvertible {
  /// The status and body size, for example `HTTP 404 (12 bytes)`.
  public var description: String { "HTTP \(status) (\(body.count) bytes)" }
}
