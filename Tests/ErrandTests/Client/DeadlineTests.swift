import Errand
import ErrandTesting
import TestSupport
import Testing

/// Timeouts run on the client's clock: a test clock fires a 60-second or one-hour timeout the
/// moment the test advances it, with no wall time spent.
@Suite(.timeLimit(.minutes(3))) struct DeadlineTests {
  /// Where the timeout is set.
  enum Source: String, CaseIterable {
    case endpoint, client
  }

  private func hangingClient(timeout: Duration?, clock: TestClock) -> APIClient {
    APIClient(
      baseURL: base, transport: .stub { $0.on(.get, "/v1/never", .hang) },
      configuration: APIClient.Configuration(timeout: timeout, clock: clock))
  }

  @Test(arguments: [Duration.seconds(1), .seconds(60), .seconds(3600)], Source.allCases)
  func timeoutFiresWhenTheClockReachesIt(timeout: Duration, source: Source) async throws {
    let clock = TestClock()
    let client = hangingClient(
      timeout: source == .client ? timeout : .seconds(86_400), clock: clock)
    let endpoint = Endpoint<Void>(path: "never", timeout: source == .endpoint ? timeout : nil)
    let call = Task { try await client.send(endpoint) }
    try #require(await clock.waitForSleepers())

    await clock.advance(by: timeout - .nanoseconds(1))
    #expect(clock.sleeperCount == 1, "the deadline fired early")

    await clock.advance(by: .nanoseconds(1))
    let error = await #expect(throws: APIError.self) { try await call.cancellableValue }
    #expect(error?.kind == .timedOut)
    #expect(clock.now == TestClock.Instant(offset: timeout))
  }

  @Test func anAnswerBeforeTheDeadlineWins() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.get, "/v1/dogs", StubResponse.json([Dog(name: "Rex")]).delayed(by: .seconds(59)))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(timeout: .seconds(60), clock: clock))
    let call = Task { try await client.send(Endpoint<[Dog]>(path: "dogs")) }
    try #require(await clock.waitForSleepers(2))
    await clock.advance(by: .seconds(59))
    #expect(try await call.cancellableValue == [Dog(name: "Rex")])
  }

  /// The timeout bounds the whole answer, not each wait in it: a 40-second delay, then a handler
  /// whose answer waits 40 seconds more, times out at 60 seconds.
  @Test func everyWaitInAStubSharesOneDeadline() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    let second = StubResponse.json([Dog(name: "Rex")]).delayed(by: .seconds(40))
    await stub.on(
      .get, "/v1/dogs", StubResponse.handler { _, _ in second }.delayed(by: .seconds(40)))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(timeout: .seconds(60), clock: clock))
    let call = Task { try await client.send(Endpoint<[Dog]>(path: "dogs")) }
    try #require(await clock.waitForSleepers(2))
    await clock.advance(by: .seconds(40))
    try #require(await clock.waitForSleepers(2))
    await clock.advance(by: .seconds(20) - .nanoseconds(1))
    #expect(clock.sleeperCount == 2, "the deadline fired early")
    await clock.advance(by: .nanoseconds(1))
    // Were the deadline counted again for each wait, the call would wait forever: end it.
    let watchdog = Task {
      try await Task.sleep(for: .seconds(10))
      call.cancel()
    }
    defer { watchdog.cancel() }
    let error = await #expect(throws: APIError.self) { try await call.cancellableValue }
    #expect(error?.kind == .timedOut, "\(String(describing: error))")
    #expect(clock.now == TestClock.Instant(offset: .seconds(60)))
  }

  @Test func noTimeoutWaitsForTheTransport() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(
      .get, "/v1/dogs", StubResponse.json([Dog(name: "Rex")]).delayed(by: .seconds(7200)))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(timeout: nil, clock: clock))
    let call = Task { try await client.send(Endpoint<[Dog]>(path: "dogs")) }
    try #require(await clock.waitForSleepers())
    #expect(clock.sleeperCount == 1, "only the stub's delay sleeps; no deadline is registered")
    await clock.advance(by: .seconds(7200))
    #expect(try await call.cancellableValue == [Dog(name: "Rex")])
  }

  /// A timeout of centuries on the continuous clock means "never", not a crash.
  @Test(arguments: [Duration.seconds(Int64.max), .seconds(Int64.max / 1_000), .seconds(1 << 40)])
  func hugeTimeoutsSaturate(timeout: Duration) async throws {
    let client = APIClient(
      baseURL: base, transport: .stub { $0.on(.get, "/v1/dogs", .json([Dog(name: "Rex")])) },
      configuration: APIClient.Configuration(timeout: timeout))
    #expect(try await client.send(Endpoint<[Dog]>(path: "dogs")) == [Dog(name: "Rex")])
  }
}
