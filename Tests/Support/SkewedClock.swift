import Errand
import ErrandTesting
import Foundation

/// A `TestClock` as a loaded machine shows it to code that schedules timers, for tests of that
/// code; `advance(by:)` and `waitForSleeper(dueIn:)` go to the test clock underneath.
///
/// - `lag`: a task the test has not marked as on time (``markOnTime()``) reads the clock `lag`
///   later, as a task that starts late does: a timer that reads the time once its task runs,
///   instead of when it was armed, is late by `lag`.
/// - `pastDeadlinesWait`: a sleep until an instant already passed ends only when the clock next
///   moves, as a timer that fires late does: code that needs it to end at once to keep a promise
///   (a deadline) is caught.
package struct SkewedClock: Clock {
  package typealias Instant = TestClock.Instant

  package let base: TestClock
  private let lag: Duration
  private let pastDeadlinesWait: Bool
  private let onTime = Locked<Set<Int>>([])

  package init(_ base: TestClock, lag: Duration = .zero, pastDeadlinesWait: Bool = false) {
    self.base = base
    self.lag = lag
    self.pastDeadlinesWait = pastDeadlinesWait
  }

  /// Reads of the clock from the calling task are on time.
  package func markOnTime() {
    guard let task = withUnsafeCurrentTask(body: { $0?.hashValue }) else { return }
    onTime.withLock { _ = $0.insert(task) }
  }

  package var now: Instant {
    let task = withUnsafeCurrentTask { $0?.hashValue }
    let late = task.map { task in !onTime.withLock { $0.contains(task) } } ?? true
    return late ? base.now.advanced(by: lag) : base.now
  }

  package var minimumResolution: Duration { .zero }

  package func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    let next = base.now.advanced(by: .nanoseconds(1))
    try await base.sleep(
      until: pastDeadlinesWait && deadline < next ? next : deadline, tolerance: tolerance)
  }
}
