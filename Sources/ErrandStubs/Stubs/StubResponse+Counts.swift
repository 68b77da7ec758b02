extension StubResponse {
  /// This answer, on a route that expects exactly `count` calls (WireMock's `verify(2, …)`).
  ///
  /// ```swift
  /// await stub.on(.get, "/v1/dogs", .json(dogs).times(2))
  /// // StubTransport route GET /v1/dogs was expected 2 times and was called 3 times
  /// ```
  /// A route called more often than it expects still answers every call, so the test sees what
  /// the app does; ``StubTransport/verifyExpectations()`` and the `.stubbed` test trait report
  /// the count at the line that registered the route. Without a count modifier a route expects
  /// at least one call. `.times(0)` is ``never()``; with ``allowingUnused()``, `.times(2)` is
  /// `.atMost(2)`. A later ``atLeast(_:)`` or ``atMost(_:)`` replaces that bound only. A
  /// negative count is reported as a mistake.
  ///
  /// The expectation is the route's: on an answer inside a ``sequence(_:)`` or returned by a
  /// ``handler(_:)`` it has no effect.
  /// - Parameter count: The number of calls.
  /// - Returns: The answer.
  public func times(_ count: Int) -> StubResponse {
    var copy = self
    copy.terms.least = count
    copy.terms.most = count
    return copy
  }

  /// This answer, on a route that expects `count` calls or more.
  ///
  /// ```swift
  /// await stub.on(.get, "/v1/feed", .json(feed).atLeast(2))
  /// // StubTransport route GET /v1/feed was expected at least 2 times and was called 1 time
  /// ```
  /// Combines with ``atMost(_:)``, in either order: `.atLeast(1).atMost(3)` expects one to three
  /// calls. ``allowingUnused()`` makes the fewest zero again. See ``times(_:)``.
  /// - Parameter count: The fewest calls.
  /// - Returns: The answer.
  public func atLeast(_ count: Int) -> StubResponse {
    var copy = self
    copy.terms.least = count
    return copy
  }

  /// This answer, on a route that expects `count` calls or fewer; it may go unused.
  ///
  /// ```swift
  /// await stub.on(.post, "/v1/refresh", .json(token).atMost(1))
  /// // StubTransport route POST /v1/refresh was expected at most 1 time and was called 2 times
  /// ```
  /// Calls past `count` still get the answer, and are reported when the stub is verified.
  /// Combines with ``atLeast(_:)``, in either order. See ``times(_:)``.
  /// - Parameter count: The most calls.
  /// - Returns: The answer.
  public func atMost(_ count: Int) -> StubResponse {
    var copy = self
    copy.terms.most = count
    return copy
  }

  /// This answer, on a route that must not be called: the registration documents a call the app
  /// must not make (a second payment, a request sent while offline). A call still gets this
  /// answer, so the test sees what the app does next, and is reported when the stub is verified,
  /// at the line that registered the route.
  ///
  /// ```swift
  /// await stub.on(.post, "/v1/payments", .status(201).never())
  /// // StubTransport route POST /v1/payments must not be called and was called 1 time
  /// ```
  /// The same as `.times(0)` and `.atMost(0)`. See ``times(_:)``.
  /// - Returns: The answer.
  public func never() -> StubResponse {
    times(0)
  }
}
