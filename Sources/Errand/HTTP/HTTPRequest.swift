import Foundation

/// An HTTP request as Errand sends it: a plain value that tests can build, compare and inspect.
///
/// ``APIClient/makeRequest(for:)`` builds one from an ``Endpoint``; middleware and transports pass
/// it along. It converts to and from `URLRequest` (see `HTTPRequest+URLRequest.swift`).
public struct HTTPRequest: Sendable, Hashable {
  /// The request method.
  public var method: HTTPMethod
  /// The full URL, with the query.
  public var url: URL
  /// The header fields, in the order they will be sent.
  public var headers: HTTPHeaders
  /// The body bytes, or `nil` for a request without a body.
  public var body: Data?
  /// A file whose contents are the body, streamed from disk by `URLSessionTransport` and
  /// `CurlTransport` (test doubles read it); set instead of ``body`` by
  /// ``RequestBody/file(_:contentType:)``.
  public var bodyFile: URL?
  /// The longest the whole exchange may take, or `nil` for the transport's default.
  public var timeout: Duration?
  /// The longest response body to accept, in bytes, or `nil` for no limit. Transports stop the
  /// transfer as soon as a body crosses it, with `URLError(.dataLengthExceedsMaximum)`.
  public var maximumResponseSize: Int?
  /// Which of this request's headers, query values and body fields are secret: hidden wherever
  /// the request or its response is printed, scrubbed from an error body that echoes them, and
  /// stripped (headers) when a redirect or a next page leads to another origin that is not
  /// trusted. ``APIClient`` sets it from ``APIClient/Configuration/redaction``.
  public var redaction: Redaction

  /// Create a request.
  /// - Parameters:
  ///   - method: The request method.
  ///   - url: The full URL, with the query.
  ///   - headers: The header fields.
  ///   - body: The body bytes, if any.
  ///   - timeout: The longest the whole exchange may take, or `nil` for the transport's default.
  ///   - maximumResponseSize: The longest response body to accept, or `nil` for no limit.
  ///   - bodyFile: A file whose contents are the body, instead of `body`.
  ///   - redaction: Which headers, query values and body fields are secret.
  public init(
    method: HTTPMethod = .get, url: URL, headers: HTTPHeaders = [:], body: Data? = nil,
    timeout: Duration? = nil, maximumResponseSize: Int? = nil, bodyFile: URL? = nil,
    redaction: Redaction = .default
  ) {
    self.redaction = redaction
    self.method = method
    self.url = url
    self.headers = headers
    self.body = body
    self.timeout = timeout
    self.maximumResponseSize = maximumResponseSize
    self.bodyFile = bodyFile
  }

  /// This request with its ``bodyFile`` read into ``body``, for transports and test doubles that
  /// need the bytes; unchanged when it has no body file.
  /// - Returns: The request with its body in memory.
  /// - Throws: The error reading the file.
  public func readingBodyFile() throws -> HTTPRequest {
    guard let bodyFile, body == nil else { return self }
    var read = self
    read.body = try Data(contentsOf: bodyFile)
    read.bodyFile = nil
    return read
  }
}

extension HTTPRequest: CustomStringConvertible {
  /// The method and URL, for example `GET https://api.example.com/v1/dogs`, with the URL's user
  /// info (user name and password) and secret query values (see ``redaction``) hidden.
  public var description: String { "\(method) \(redaction.redact(url))" }
}

extension URL {
  /// The URL as text with its user info and secret query values hidden.
  var redactedString: String {
    Redaction.default.redact(self)
  }
}
