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
  /// A test that checks the failures itself expects the issue, as a known one:
  ///
  /// ```swift
  /// await stub.on(.get, "/v1/dogs", .json(dogs).times(2))
  /// // … the code under test calls it three times …
  /// await withKnownIssue {
  ///   #expect(await stub.verifyExpectations() == [
  ///     "StubTransport route GET /v1/dogs was expected 2 times and was called 3 times (registered at DogTests.swift:12)"
  ///   ])
  /// }
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
  /// (its `description`, such as `POST /v1/dogs JSON body {"name":"Rex"}`) answered. Secret
  /// values, which a description shows as `<redacted>`, are compared as written: a route that
  /// matches `Bearer a` is not counted for `.header("Authorization", "Bearer b")`.
  /// - Parameter matcher: The matcher, written as the routes were.
  /// - Returns: The calls, summed over every such route.
  public func callCount(for matcher: RequestMatcher) -> Int {
    routes.reduce(0) { sum, route in
      route.matcher.written == matcher.written ? sum + route.calls : sum
    }
  }
}

extension StubTransport {
  /// The stub of the test running now, when the test is marked `@Test(.stubbed)`: each test (and
  /// each case of a parameterized test) gets its own, so tests in parallel never share one, and
  /// the trait reports its unused routes and unmatched requests when the test ends.
  ///
  /// Read outside such a test, it records an issue saying so, at the declaration of the test
  /// that read it (a getter cannot know its caller's line), and returns a fresh stub.
  ///
  /// A client made with it belongs to that test: a request it sends while another `.stubbed`
  /// test runs (the client was kept in a `static` property, say) is refused with
  /// `APIError.invalidRequest`, and that test gets an issue saying so, instead of the first
  /// test's routes answering it. Once its test has ended, it refuses every request, a test's
  /// without the trait and a detached task's too. (While its test runs, a request from a task
  /// with no test's stub, a detached task, is answered: it may be its own test's.)
  public static var current: StubTransport {
    if let scoped {
      scoped.isTestScoped.withLock { $0 = true }
      return scoped
    }
    CallSite(fileID: #fileID, filePath: #filePath, line: #line, column: #column)
      .recordIssueAtRunningTest(
        "StubTransport.current is set only inside a test marked @Test(.stubbed)")
    return StubTransport()
  }

  /// The stub a `.stubbed` test runs with.
  @TaskLocal package static var scoped: StubTransport?

  /// The `.stubbed` test this stub belongs to has ended: from now on it refuses every request
  /// (see ``current``).
  package nonisolated func endTestScope() {
    hasTestEnded.withLock { $0 = true }
  }
}

extension Transport where Self == StubTransport {
  /// The stub of the test running now (``StubTransport/current``), for
  /// `APIClient(baseURL: base, transport: .stubbed)` in a test marked `@Test(.stubbed)`.
  public static var stubbed: StubTransport { StubTransport.current }
}

extension StubTransport.Route {
  /// The route's matcher as a report names it: on one line, with anything that could disguise
  /// the report (a line break, a bidirectional override) escaped as `\n` or `\u{202E}`, and cut
  /// to a few hundred characters, so that a report stays short whatever the route.
  var shownMatcher: String {
    shownMatcher(redactedBy: .default)
  }

  /// The route's matcher as ``shownMatcher`` names it, with the values `redaction` hides read
  /// `<redacted>`: how a report about one request names routes (with the request's redaction).
  func shownMatcher(redactedBy redaction: Redaction) -> String {
    DiagnosticText.cut(
      DiagnosticText.escaped(matcher.shownDescription(redactedBy: redaction)), to: 500)
  }
}
