import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// `send` runs outside the client's actor, so two responses decode at the same time.
@Suite(
  .timeLimit(.minutes(3)),
  .enabled(if: ProcessInfo.processInfo.activeProcessorCount >= 2, "needs two cores"))
struct ParallelDecodingTests {
  /// Two parties that each wait, up to a limit, for the other to arrive.
  final class Rendezvous: @unchecked Sendable {
    private let condition = NSCondition()
    private var arrived = 0

    /// Arrive and wait for the other party; `false` when it did not come within `timeout`.
    func meet(timeout: TimeInterval) -> Bool {
      condition.lock()
      defer { condition.unlock() }
      arrived += 1
      condition.broadcast()
      let deadline = Date(timeIntervalSinceNow: timeout)
      while arrived < 2 {
        guard condition.wait(until: deadline) else { return false }
      }
      return true
    }
  }

  @Test func concurrentCallsDecodeInParallel() async throws {
    let rendezvous = Rendezvous()
    let client = APIClient(
      baseURL: URL(string: "https://api.example.com")!,
      transport: StubTransport { _ in .status(200, body: Data("{}".utf8)) })
    let endpoint = Endpoint<Bool>(
      path: "big", decoding: ResponseDecoding { _ in rendezvous.meet(timeout: 10) })
    async let first = client.send(endpoint)
    async let second = client.send(endpoint)
    let met = try await [first, second]
    #expect(met == [true, true], "a decode waited for the other: decoding is serialized")
  }
}
