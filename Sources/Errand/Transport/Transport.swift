/// Sends one HTTP request and returns the whole response: the seam between ``APIClient`` and
/// the network.
///
/// `URLSessionTransport` is the production conformance and `StubTransport` (in `ErrandTesting`)
/// the test double. A transport returns every response it receives, whatever its status;
/// validation happens in the client.
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
}
