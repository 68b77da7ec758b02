import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct StubTimingTests {
  @Test func thirtySecondDelayTakesNoWallTimeWithTheTestClock() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.get, "/v1/slow", StubResponse.json(Dog(name: "Rex")).delayed(by: .seconds(30)))
    let client = client(stub)
    let call = Task { try await client.send(Endpoint<Dog>(path: "slow", timeout: .seconds(60))) }
    try #require(await clock.waitForSleepers())
    await clock.advance(by: .seconds(29))
    #expect(clock.sleeperCount == 1)
    await clock.advance(by: .seconds(1))
    #expect(try await call.cancellableValue == Dog(name: "Rex"))
    #expect(clock.now == TestClock.Instant(offset: .seconds(30)))
  }

  @Test func defaultDelayAppliesToEveryAnswerOnTheImmediateClock() async throws {
    let clock = ImmediateClock()
    let stub = StubTransport(delay: .seconds(5), clock: clock)
    await stub.on(.get, "/v1/dogs", .json([Dog(name: "Rex")]))
    await stub.on(.get, "/v1/cats", StubResponse.status(204).delayed(by: .seconds(1)))
    _ = try await stub.send(request(.get, "/v1/dogs"))
    #expect(clock.now == TestClock.Instant(offset: .seconds(5)))
    _ = try await stub.send(request(.get, "/v1/cats"))
    #expect(clock.now == TestClock.Instant(offset: .seconds(6)))
  }

  @Test func aDelayedAnswerEndsWhenTheTaskIsCancelled() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.get, "/v1/slow", StubResponse.status(200).delayed(by: .seconds(30)))
    let call = Task { try await stub.send(request(.get, "/v1/slow")) }
    try #require(await clock.waitForSleepers())
    call.cancel()
    await #expect(throws: CancellationError.self) { _ = try await call.cancellableValue }
    #expect(clock.sleeperCount == 0)
  }

  @Test func hangEndsOnlyWhenCancelled() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/never", .hang)
    let client = client(stub)
    let call = Task { try await client.send(Endpoint<Void>(path: "never", timeout: .seconds(60))) }
    _ = try await stub.nextRequest()
    call.cancel()
    let error = await #expect(throws: APIError.self) { try await call.cancellableValue }
    #expect(error?.kind == .cancelled)
  }

  @Test func hangMeetsTheClientsTimeout() async throws {
    let clock = TestClock()
    let client = APIClient(
      baseURL: base, transport: StubTransport { _ in .hang },
      configuration: APIClient.Configuration(clock: clock))
    let call = Task { try await client.send(Endpoint<Void>(path: "never", timeout: .seconds(50))) }
    try #require(await clock.waitForSleepers())
    await clock.advance(by: .seconds(50))
    let error = await #expect(throws: APIError.self) { try await call.cancellableValue }
    #expect(error?.kind == .timedOut)
  }
}
