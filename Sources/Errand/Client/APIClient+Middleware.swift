import Foundation

extension APIClient {
  /// Send a request through the middleware chain, outermost first, then the transport.
  nonisolated func send(
    _ request: HTTPRequest, through chain: ArraySlice<any Middleware>
  ) async throws -> HTTPResponse {
    guard let first = chain.first else {
      return try await exchange(request)
    }
    return try await first.intercept(request) { next in
      try await send(next, through: chain.dropFirst())
    }
  }

  /// Send a request through the transport within its timeout, mapping failures to ``APIError``.
  private nonisolated func exchange(_ request: HTTPRequest) async throws -> HTTPResponse {
    do {
      return try await withDeadline(request.timeout, on: configuration.clock) { [transport] in
        try await transport.send(request)
      }
    } catch {
      throw APIError(transportError: error, request: request)
    }
  }
}
