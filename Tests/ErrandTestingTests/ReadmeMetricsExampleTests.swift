import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// README's "Why was this slow?" example, run as written against a stub whose server takes
/// 840 ms (on a test clock) over a connection a route describes.
@Suite(.timeLimit(.minutes(3))) struct ReadmeMetricsExampleTests {
  @Test func aSlowServerShowsUpAsTheTimeToTheFirstByte() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    let connection = TransferMetrics.tlsConnection(reused: false)
    let dogs = Data(repeating: 0x20, count: 12_398) + Data("[]".utf8)
    await stub.on(
      .get, "/v1/dogs",
      StubResponse.status(200, body: dogs).delayed(by: .milliseconds(852)).withMetrics(connection))
    let client = APIClient(
      baseURL: base, transport: stub, configuration: .init(clock: clock))
    let printed = Locked<[String]>([])
    func print(_ line: String) { printed.withLock { $0.append(line) } }
    let call = Task {
      // As in README:
      let response = try await client.response(for: Endpoint<[Dog]>(path: "dogs")).response
      if let metrics = response.metrics, (metrics.responseStart ?? .zero) > .milliseconds(500) {
        print("slow: \(metrics.summary)")
      }
    }
    try #require(await clock.waitForSleepers(2))
    await clock.advance(by: .milliseconds(852))
    try await call.value
    #expect(
      printed.withLock { $0 } == [
        "slow: dns 1 ms · connect 2 ms · tls 9 ms · ttfb 840 ms · body 0 ms · 12.4 KB · h2 · new connection"
      ])
  }
}
