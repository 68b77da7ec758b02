import Foundation

/// Sends one HTTP request and returns the whole response: the seam between ``APIClient`` and
/// the network.
///
/// `URLSessionTransport` is the production conformance and `StubTransport` (in `ErrandStubs`,
/// which `ErrandTesting` re-exports) the test double. A transport returns every response it
/// receives, whatever its status; validation happens in the client.
///
/// ## Implement a custom transport
///
/// ```swift
/// struct EchoTransport: Transport {
///   func send(_ request: HTTPRequest) async throws -> HTTPResponse {
///     HTTPResponse(status: 200, headers: request.headers, body: request.body ?? Data(), url: request.url)
///   }
/// }
/// ```
public protocol Transport: Sendable {
  /// Send a request and wait for its whole response.
  /// - Parameter request: The request to send.
  /// - Returns: The response, whatever its status.
  /// - Throws: An error when no response arrives: a `URLError`, `CancellationError`, or
  ///   an ``APIError``.
  func send(_ request: HTTPRequest) async throws -> HTTPResponse

  /// Send a request and return as soon as the response's head arrives, with the body following
  /// in ``HTTPResponse/bodyStream``.
  ///
  /// Transports that only implement ``send(_:)`` get a default that waits for the whole response
  /// and streams it as one chunk.
  /// - Parameter request: The request to send.
  /// - Returns: The head of the response, whatever its status, with its body stream.
  /// - Throws: An error when no response head arrives; errors after the head end the body stream.
  func stream(_ request: HTTPRequest) async throws -> HTTPResponse
}

extension Transport {
  /// Wait for the whole response, then stream its body as one chunk.
  /// - Parameter request: The request to send.
  /// - Returns: The response, its body in ``HTTPResponse/bodyStream``.
  /// - Throws: What ``send(_:)`` throws.
  public func stream(_ request: HTTPRequest) async throws -> HTTPResponse {
    try await send(request).streamingBody()
  }
}
