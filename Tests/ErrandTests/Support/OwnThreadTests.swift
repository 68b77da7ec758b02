import Foundation
import TestSupport
import Testing

/// The `.ownThread` trait runs a test, sync or async, on its own queue and not on Swift's
/// cooperative pool; a test without it runs on the pool.
@Suite(.timeLimit(.minutes(3)))
struct OwnThreadTests {
  @Test(.ownThread) func aSynchronousTestRunsOnItsOwnQueue() {
    #expect(DispatchQueue.getSpecific(key: OwnThreadExecutor.key) == true)
  }

  @Test(.ownThread) func anAsynchronousTestStaysOnItsOwnQueueAfterASuspension() async {
    #expect(DispatchQueue.getSpecific(key: OwnThreadExecutor.key) == true)
    await Task.yield()
    #expect(DispatchQueue.getSpecific(key: OwnThreadExecutor.key) == true)
  }

  @Test(.ownThread, arguments: [1, 2])
  func eachCaseOfAParameterizedTestRunsOnItsOwnQueue(_ value: Int) {
    #expect(DispatchQueue.getSpecific(key: OwnThreadExecutor.key) == true, "case \(value)")
  }

  @Test func anUnmarkedTestRunsOnThePool() {
    #expect(DispatchQueue.getSpecific(key: OwnThreadExecutor.key) == nil)
  }
}
