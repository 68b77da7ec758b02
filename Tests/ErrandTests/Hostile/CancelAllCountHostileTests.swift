import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Probes of the number `cancelAll()` returns, against calls that end as it runs: every call it
/// counts must end as cancelled, and every call cancelled must have been counted, whichever
/// comes first of the call's end and the cancel, with several `cancelAll()` at once.
@Suite(.timeLimit(.minutes(3))) struct CancelAllCountHostileTests {
  /// Fifty calls answered at once, with five `cancelAll()` made among them from another task,
  /// round after round: the counts add up to the calls that threw `.cancelled`, exactly, and
  /// none is left listed.
  @Test(arguments: [false, true])
  func theCountsAreTheCallsThatEndCancelled(streams: Bool) async throws {
    let stub = StubTransport()
    await stub.on(.any, .status(200, body: Data("ok".utf8)))
    let client = APIClient(
      baseURL: base, transport: stub, configuration: APIClient.Configuration(timeout: nil))
    let endpoint = Endpoint<Data>(path: "dogs", decoding: .data)
    for round in 0..<TestSize.count(small: 20, full: 200) {
      let outcomes = Locked((cancelled: 0, succeeded: 0, other: [String]()))
      let counted = Locked(0)
      await withTaskGroup(of: Void.self) { group in
        for _ in 0..<50 {
          group.addTask {
            do {
              if streams {
                _ = try await client.stream(endpoint).collect()
              } else {
                _ = try await client.send(endpoint)
              }
              outcomes.withLock { $0.succeeded += 1 }
            } catch let error as APIError where error.kind == .cancelled {
              outcomes.withLock { $0.cancelled += 1 }
            } catch {
              outcomes.withLock { $0.other.append("\(error)") }
            }
          }
        }
        group.addTask {
          for _ in 0..<5 {
            await Task.yield()
            let count = client.cancelAll()
            counted.withLock { $0 += count }
          }
        }
      }
      let ended = outcomes.withLock { $0 }
      #expect(ended.other.isEmpty, "round \(round)")
      #expect(ended.cancelled + ended.succeeded == 50, "round \(round)")
      #expect(counted.withLock { $0 } == ended.cancelled, "round \(round)")
      #expect(client.inFlight.isEmpty, "round \(round)")
    }
  }
}
