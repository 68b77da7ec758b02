import ErrandStubs
import Testing

/// Gives a test its own `StubTransport` (reachable as `StubTransport.current`, or as the
/// transport `.stubbed`) and checks it when the test ends: every route no request used, every
/// route called more or fewer times than it expects (`.times(2)`, `.never()`; see
/// `StubTransport.verifyExpectations()`), and every request no route matched, is a test issue.
/// Nothing to call, nothing to forget.
///
/// ```swift
/// @Test(.stubbed) func listsDogs() async throws {
///   await StubTransport.current.on(.get, "/v1/dogs", .json([Dog(name: "Rex")]))
///   #expect(try await APIClient(baseURL: base, transport: .stubbed).send(Endpoint<[Dog]>(path: "dogs")) == [Dog(name: "Rex")])
/// }
/// ```
///
/// Each test, and each case of a parameterized test, gets a stub of its own (a task-local), so
/// tests running in parallel never share one. A route that may go unused says so with
/// `allowingUnused()`.
public struct StubbedTrait: TestTrait, TestScoping {
  let make: @Sendable () -> StubTransport

  /// Run the test with its own stub, then report what the stub saw that the test did not ask for.
  /// - Parameters:
  ///   - test: The test.
  ///   - testCase: The test case, for a parameterized test.
  ///   - function: The test.
  /// - Throws: What the test throws.
  public func provideScope(
    for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
  ) async throws {
    let stub = make()
    let outcome: Result<Void, any Error>
    do {
      try await StubTransport.$scoped.withValue(stub) { try await function() }
      outcome = .success(())
    } catch {
      outcome = .failure(error)
    }
    // A client kept past the test (in a `static`) is refused from now on, never answered.
    stub.endTestScope()
    await stub.verifyExpectations()
    for request in await stub.unmatchedRequests {
      Issue.record(
        "StubTransport has no route for \(request.reportedDescription)",
        sourceLocation: test.sourceLocation)
    }
    try outcome.get()
  }
}

extension Trait where Self == StubbedTrait {
  /// A stub for the test, checked when it ends; see ``StubbedTrait``.
  public static var stubbed: StubbedTrait { StubbedTrait { StubTransport() } }

  /// A stub for the test whose delays run on `clock`, checked when it ends.
  /// - Parameters:
  ///   - delay: The delay before every answer that sets none of its own.
  ///   - clock: The clock that delays and streams run on; `.immediate` or a `TestClock`.
  /// - Returns: The trait.
  public static func stubbed(delay: Duration = .zero, clock: any Clock<Duration>) -> StubbedTrait {
    StubbedTrait { StubTransport(delay: delay, clock: clock) }
  }
}
