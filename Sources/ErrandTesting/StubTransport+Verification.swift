import Errand

#if canImport(Testing)
  import Testing
#endif

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
    #if canImport(Testing)
      for route in routes where route.calls == 0 {
        let location = route.location
        Issue.record(
          Comment(rawValue: "StubTransport route \(route.matcher) was never used"),
          sourceLocation: SourceLocation(
            fileID: location.fileID, filePath: location.filePath, line: location.line,
            column: location.column))
      }
    #endif
    return unusedRoutes
  }
}
