import Errand

extension StubTransport {
  /// The routes that no request has matched yet (except those that ``StubResponse/allowingUnused()``),
  /// with where they were registered.
  public var unusedRoutes: [String] {
    routes.filter { $0.calls == 0 && !$0.response.mayGoUnused }.map {
      "\($0.matcher) (registered at \($0.location.short))"
    }
  }

  /// Report every route that no request has used: as a Swift Testing issue at the line that
  /// registered it, when Swift Testing is running the test.
  /// - Returns: The unused routes, as ``unusedRoutes`` lists them.
  @discardableResult
  public func verifyAllRoutesUsed() -> [String] {
    for route in routes where route.calls == 0 && !route.response.mayGoUnused {
      route.location.recordIssue("StubTransport route \(route.matcher) was never used")
    }
    return unusedRoutes
  }
}

extension StubTransport {
  /// The stub of the test running now, when the test is marked `@Test(.stubbed)`: each test (and
  /// each case of a parameterized test) gets its own, so tests in parallel never share one, and
  /// the trait reports its unused routes and unmatched requests when the test ends.
  ///
  /// Read outside such a test, it records an issue saying so and returns a fresh stub.
  public static var current: StubTransport {
    if let scoped {
      return scoped
    }
    CallSite(fileID: "ErrandStubs/StubTransport.swift", filePath: #filePath, line: #line, column: 1)
      .recordIssue("StubTransport.current is set only inside a test marked @Test(.stubbed)")
    return StubTransport()
  }

  /// The stub a `.stubbed` test runs with.
  @TaskLocal package static var scoped: StubTransport?
}

extension Transport where Self == StubTransport {
  /// The stub of the test running now (``StubTransport/current``), for
  /// `APIClient(baseURL: base, transport: .stubbed)` in a test marked `@Test(.stubbed)`.
  public static var stubbed: StubTransport { StubTransport.current }
}
