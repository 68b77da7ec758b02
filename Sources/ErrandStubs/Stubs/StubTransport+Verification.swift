import Errand

extension StubTransport {
  /// The routes that no request has matched yet, with where they were registered.
  public var unusedRoutes: [String] {
    routes.filter { $0.calls == 0 }.map { "\($0.matcher) (registered at \($0.location.short))" }
  }

  /// Report every route that no request has used: as a Swift Testing issue at the line that
  /// registered it, when Swift Testing is running the test.
  /// - Returns: The unused routes, as ``unusedRoutes`` lists them.
  @discardableResult
  public func verifyAllRoutesUsed() -> [String] {
    for route in routes where route.calls == 0 {
      route.location.recordIssue("StubTransport route \(route.matcher) was never used")
    }
    return unusedRoutes
  }
}
