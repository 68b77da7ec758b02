import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// One clock: middleware created without a clock of its own waits and measures on the calling
/// client's, so a test hands its `TestClock` to the client alone.
@Suite(.timeLimit(.minutes(3))) struct ClientClockTests {
  @Test func retriesWaitAndLogsMeasureOnTheClientsClock() async throws {
    let clock = TestClock()
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/dogs",
      .sequence([.status(503, headers: ["Retry-After": "30"]), .json([Dog(name: "Rex")])]))
    let events = Locked<[LogEvent]>([])
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        timeout: .seconds(120),
        middleware: [
          LoggingMiddleware { event in events.withLock { $0.append(event) } }, RetryMiddleware(),
        ], clock: clock))
    let call = Task { try await client.send(Endpoint<[Dog]>(path: "dogs")) }
    // The retry's 30-second wait is on the test clock: it takes no wall time.
    try #require(await clock.waitForSleeper(dueIn: .seconds(30)))
    await clock.advance(by: .seconds(30))
    #expect(try await call.cancellableValue == [Dog(name: "Rex")])
    let received = events.withLock { $0 }.filter { $0.kind == .responseReceived }
    #expect(received.map(\.duration) == [.seconds(30)])
  }

  @Test func aMiddlewareGivenAClockKeepsIt() async throws {
    let own = TestClock()
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/dogs",
      .sequence([.status(503, headers: ["Retry-After": "5"]), .json([Dog(name: "Rex")])]))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        middleware: [RetryMiddleware(clock: own)], clock: TestClock()))
    let call = Task { try await client.send(Endpoint<[Dog]>(path: "dogs")) }
    try #require(await own.waitForSleeper(dueIn: .seconds(5)))
    await own.advance(by: .seconds(5))
    #expect(try await call.cancellableValue == [Dog(name: "Rex")])
  }
}
