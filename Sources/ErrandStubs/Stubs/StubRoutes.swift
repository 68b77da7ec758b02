import Errand

/// Routes collected before a ``StubTransport`` exists, for `Transport/stub(delay:clock:_:)`.
public struct StubRoutes: Sendable {
  var routes: [StubTransport.Route] = []

  /// Answer requests with this method and URL path.
  /// - Parameters:
  ///   - method: The method to match.
  ///   - path: The URL path, exact or a template such as `/v1/dogs/{id}`.
  ///   - response: The answer.
  ///   - fileID: Where the route is registered; filled in by the compiler.
  ///   - filePath: Where the route is registered; filled in by the compiler.
  ///   - line: Where the route is registered; filled in by the compiler.
  ///   - column: Where the route is registered; filled in by the compiler.
  public mutating func on(
    _ method: HTTPMethod, _ path: String, _ response: StubResponse, fileID: String = #fileID,
    filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) {
    on(
      .method(method) && .path(path), response, fileID: fileID, filePath: filePath, line: line,
      column: column)
  }

  /// Answer requests that a matcher accepts.
  /// - Parameters:
  ///   - matcher: Which requests to answer.
  ///   - response: The answer.
  ///   - fileID: Where the route is registered; filled in by the compiler.
  ///   - filePath: Where the route is registered; filled in by the compiler.
  ///   - line: Where the route is registered; filled in by the compiler.
  ///   - column: Where the route is registered; filled in by the compiler.
  public mutating func on(
    _ matcher: RequestMatcher, _ response: StubResponse, fileID: String = #fileID,
    filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) {
    let location = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    routes.append(StubTransport.Route(matcher: matcher, response: response, location: location))
  }
}

extension Transport where Self == StubTransport {
  /// A stub with routes, where a transport is expected:
  ///
  /// ```swift
  /// let client = APIClient(baseURL: base, transport: .stub { $0.on(.get, "/v1/dogs", .json(dogs)) })
  /// ```
  /// - Parameters:
  ///   - delay: The delay before every answer that sets none of its own.
  ///   - clock: The clock that delays run on.
  ///   - build: Adds the routes.
  /// - Returns: The stub.
  public static func stub(
    delay: Duration = .zero, clock: any Clock<Duration> = ContinuousClock(),
    _ build: (inout StubRoutes) -> Void = { _ in }
  ) -> StubTransport {
    var routes = StubRoutes()
    build(&routes)
    return StubTransport(
      routes: routes.routes, fallback: nil, delay: delay, clock: clock, samples: false)
  }
}
