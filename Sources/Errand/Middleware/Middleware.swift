/// A step between ``APIClient`` and its ``Transport`` that can change a request, answer it, retry
/// it or observe it.
///
/// A client runs its ``APIClient/Configuration/middleware`` outermost first, then the endpoint's
/// own ``Endpoint/middleware``, then the transport. `next` sends the request on down the chain;
/// it throws ``APIError`` for transport failures and returns every response, whatever its status
/// (the client validates statuses after the chain). ``RequestContext/current`` tells which
/// endpoint is being sent and whether it needs credentials.
///
/// ```swift
/// struct TraceID: Middleware {
///   func intercept(
///     _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
///   ) async throws -> HTTPResponse {
///     var request = request
///     request.headers["X-Trace-ID"] = UUID().uuidString
///     return try await next(request)
///   }
/// }
/// ```
public protocol Middleware: Sendable {
  /// Handle a request, usually by calling `next` with it (changed or not).
  /// - Parameters:
  ///   - request: The request on its way to the transport.
  ///   - next: Sends a request through the rest of the chain; may be called more than once.
  /// - Returns: The response to pass back up the chain.
  /// - Throws: An ``APIError``, or an error of the middleware's own, which the client reports as
  ///   ``APIError/transport(_:)``.
  func intercept(
    _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
  ) async throws -> HTTPResponse
}
