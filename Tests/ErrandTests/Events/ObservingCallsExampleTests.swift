import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// The listener of the "Observing calls" article, as written (with `print` collected).
@Suite(.timeLimit(.minutes(1))) struct ObservingCallsExampleTests {
  @Test func theArticlesListenerHearsARetry() async throws {
    // Each listener is called on a queue of its own: the test waits for the reporter's own
    // lines, not for another listener's events.
    let (printed, printer) = AsyncStream.makeStream(of: String.self)
    struct SlowCallReporter: EventListener {
      let print: @Sendable (String) -> Void
      func retryScheduled(_ event: CallEvent, afterAttempt: Int, reason: String, wait: Duration) {
        print("\(event.endpoint): attempt \(afterAttempt) failed (\(reason)), next in \(wait)")
      }
      func callEnded(_ event: CallEvent, status: Int, metrics: TransferMetrics?) {
        if event.elapsed > .seconds(1) { print("\(event.endpoint) took \(event.elapsed)") }
      }
    }
    let reporter = SlowCallReporter { line in printer.yield(line) }
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs", .sequence([.status(503), .json(["Rex"])]))
    let client = APIClient(
      baseURL: url("https://api.example.com/v1/"), transport: stub,
      configuration: .init(
        middleware: [RetryMiddleware(policy: RetryPolicy(baseDelay: .seconds(2), jitter: .none))],
        clock: ImmediateClock(), eventListeners: [reporter]))
    #expect(try await client.send(Endpoint<[String]>(path: "dogs")) == ["Rex"])
    var lines: [String] = []
    for await line in printed.prefix(2) { lines.append(line) }
    // The immediate clock moves by the waits it skips: the call took the retry's 2 seconds.
    #expect(
      lines == [
        "GET dogs: attempt 1 failed (status 503), next in 2.0 seconds", "GET dogs took 2.0 seconds",
      ])
  }
}
