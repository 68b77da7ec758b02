import Errand

extension StubTransport {
  /// The routes that no request has matched yet, with where they were registered; a route that
  /// may go unused (``StubResponse/allowingUnused()``, ``StubResponse/atMost(_:)``,
  /// ``StubResponse/never()``) is not listed.
  public var unusedRoutes: [String] {
    routes.filter { $0.calls == 0 && $0.response.terms.fewest > 0 }.map {
      "\($0.shownMatcher) (registered at \($0.location.short))"
    }
  }

  /// Report every route that no request has used: as a Swift Testing issue at the line that
  /// registered it, when Swift Testing is running the test (`StubTransport route GET /v1/dogs was
  /// never used`, or for a route with a count, what ``verifyExpectations()`` says of it).
  /// - Returns: The unused routes, as ``unusedRoutes`` lists them.
  @discardableResult
  public func verifyAllRoutesUsed() -> [String] {
    for index in routes.indices where routes[index].calls == 0 {
      let route = routes[index]
      guard route.response.terms.fewest > 0 else { continue }
      // The words verifyExpectations() uses, so that the trait does not report it again.
      report(
        route.response.terms.failure(of: route.shownMatcher, calls: 0)
          ?? "StubTransport route \(route.shownMatcher) was never used", at: index)
    }
    return unusedRoutes
  }

  /// Report every route called fewer or more times than it expects (WireMock's `verify`): an
  /// unused route (`StubTransport route GET /v1/dogs was never used`), and a route whose count
  /// modifier (``StubResponse/times(_:)``, ``StubResponse/atLeast(_:)``,
  /// ``StubResponse/atMost(_:)``, ``StubResponse/never()``) its calls break
  /// (`StubTransport route GET /v1/dogs was expected 2 times and was called 3 times`). Each is a
  /// Swift Testing issue at the line that registered the route, when Swift Testing is running the
  /// test; the `.stubbed` test trait calls this when the test ends.
  ///
  /// ```swift
  /// await stub.on(.get, "/v1/dogs", .json(dogs).times(2))
  /// // … the code under test calls it three times …
  /// #expect(await stub.verifyExpectations() == [
  ///   "StubTransport route GET /v1/dogs was expected 2 times and was called 3 times (registered at DogTests.swift:12)"
  /// ])
  /// ```
  ///
  /// A failure already reported, by an earlier call or by ``verifyAllRoutesUsed()``, is not
  /// reported again while it stays the same: a test that checks it inside `withKnownIssue` is
  /// not failed for it once more by the trait. It is still returned.
  /// - Returns: One line per failure, in the order the routes were registered, each ending with
  ///   where its route was registered; empty when every route was called as it expects.
  @discardableResult
  public func verifyExpectations() -> [String] {
    routes.indices.compactMap { index in
      let route = routes[index]
      guard let failure = route.response.terms.failure(of: route.shownMatcher, calls: route.calls)
      else { return nil }
      report(failure, at: index)
      return "\(failure) (registered at \(route.location.short))"
    }
  }

  /// Record `failure` as an issue at the line that registered the route, unless it is the very
  /// failure last recorded there.
  private func report(_ failure: String, at index: Int) {
    guard routes[index].reported != failure else { return }
    routes[index].reported = failure
    routes[index].location.recordIssue(failure)
  }

  /// How many calls the routes registered with this method and path answered: the count
  /// ``verifyExpectations()`` checks, for a test to assert itself. Requests that another route
  /// answered, or none did, are not counted (``requests(matching:)`` has every request).
  ///
  /// ```swift
  /// #expect(await stub.callCount(.get, "/v1/dogs") == 2)
  /// ```
  /// - Parameters:
  ///   - method: The method the routes were registered with.
  ///   - path: The path or path template they were registered with, as written.
  /// - Returns: The calls, summed over every such route (as scenario routes often share one).
  public func callCount(_ method: HTTPMethod, _ path: String) -> Int {
    callCount(for: .method(method) && .path(path))
  }

  /// How many calls the routes registered with a matcher that reads as this one
  /// (its `description`, such as `POST /v1/dogs JSON body {"name":"Rex"}`) answered.
  /// - Parameter matcher: The matcher, written as the routes were.
  /// - Returns: The calls, summed over every such route.
  public func callCount(for matcher: RequestMatcher) -> Int {
    routes.reduce(0) { sum, route in
      route.matcher.description == matcher.description ? sum + route.calls : sum
    }
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

extension StubTransport.Route {
  /// The route's matcher as a report names it: cut to a few hundred characters, so that a
  /// report stays short whatever the route.
  var shownMatcher: String {
    DiagnosticText.cut(matcher.description, to: 500)
  }
}
