import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// The listener of the "Observing calls" article, as written (with `print` collected).
@Suite(.timeLimit(.minutes(3))) struct ObservingCallsExampleTests {
  @Test func theArticlesListenerHearsARetry() async throws {
    // Each listener is called on a thread of its own: the test waits for the reporter's own
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

  /// The article's failure reporter, as written, over an outage, a 503 retried and a 404.
  @Test func theArticlesFailureReporterReadsTheFailure() async throws {
    let (printed, printer) = AsyncStream.makeStream(of: String.self)
    struct OutageReporter: EventListener {
      let print: @Sendable (Any) -> Void
      func callFailed(_ event: CallEvent, failure: CallFailure) {
        switch (failure.kind, failure.urlErrorCode) {
        case (.transport, .notConnectedToInternet?): print("offline: \(event.endpoint)")
        case (.unacceptableStatus, _) where (failure.status ?? 0) >= 500:
          print("\(event.endpoint): HTTP \(failure.status ?? 0) after \(failure.attempts) attempts")
        default: print(failure)  // the description
        }
      }
    }
    let reporter = OutageReporter { line in printer.yield("\(line)") }
    let stub = StubTransport()
    await stub.on(.get, "/v1/offline", .notConnected)
    await stub.on(.get, "/v1/busy", .status(503))
    await stub.on(.get, "/v1/missing", .status(404))
    let client = APIClient(
      baseURL: url("https://api.example.com/v1/"), transport: stub,
      configuration: .init(
        middleware: [
          RetryMiddleware(
            policy: RetryPolicy(maxAttempts: 2, retryableErrors: []), clock: ImmediateClock())
        ],
        eventListeners: [reporter]))
    for path in ["offline", "busy", "missing"] {
      _ = try? await client.send(Endpoint<Data>(path: path))
    }
    var lines: [String] = []
    for await line in printed.prefix(3) { lines.append(line) }
    #expect(
      lines == [
        "offline: GET offline", "GET busy: HTTP 503 after 2 attempts",
        "The server answered GET https://api.example.com/v1/missing with HTTP 404 Not Found.",
      ])
  }
}
