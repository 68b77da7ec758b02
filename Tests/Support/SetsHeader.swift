import Errand

/// A middleware of the app's own that sets one header (an API key, a signature, a trace ID), for
/// tests of what Errand does with headers a middleware adds.
package struct SetsHeader: Middleware {
  package let name: String
  package let value: String

  package init(name: String, value: String) {
    self.name = name
    self.value = value
  }

  package func intercept(
    _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    var request = request
    request.headers[name] = value
    return try await next(request)
  }
}
