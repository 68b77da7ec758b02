import Foundation
import Testing

@testable import Errand

/// The one timer behind every deadline: answered requests do not leave their deadlines behind,
/// and what is still due fires in order.
@Suite(.timeLimit(.minutes(3))) struct DeadlineSchedulerTests {
  @Test func cancelledDeadlinesDoNotPileUp() {
    let scheduler = DeadlineScheduler()
    let ids = (0..<10_000).map { _ in scheduler.schedule(after: .seconds(3600)) {} }
    #expect(scheduler.pendingEntries == 10_000)
    for id in ids {
      scheduler.cancel(id)
    }
    #expect(scheduler.pendingEntries < 1024, "\(scheduler.pendingEntries) entries kept")
  }

  @Test func deadlinesLeftAfterCompactingFireInOrder() async {
    let scheduler = DeadlineScheduler()
    let fired = Locked<[Int]>([])
    let stale = (0..<4_000).map { _ in scheduler.schedule(after: .seconds(3600)) {} }
    // One start for all four, so that a pause between two calls (a loaded machine) cannot put
    // a later call's deadline after an earlier call's longer one.
    let start = DispatchTime.now()
    for (order, delay) in [(3, 90), (1, 30), (4, 120), (2, 60)] {
      _ = scheduler.schedule(after: .milliseconds(delay), from: start) {
        fired.withLock { $0.append(order) }
      }
    }
    for id in stale {
      scheduler.cancel(id)
    }
    #expect(scheduler.pendingEntries < 1024)
    let waiting = ContinuousClock.now
    while fired.withLock({ $0.count }) < 4, ContinuousClock.now - waiting < .seconds(30) {
      try? await Task.sleep(for: .milliseconds(10))
    }
    #expect(fired.withLock { $0 } == [1, 2, 3, 4])
  }
}
