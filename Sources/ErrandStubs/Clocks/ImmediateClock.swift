import Errand

/// A clock whose sleeps end at once, moving its time forward as if they had happened.
public final class ImmediateClock: Clock, Sendable {
  private let time = Locked(TestClock.Instant())

  /// Create a clock at offset zero.
  public init() {}

  /// The current instant: the sum of every sleep so far.
  public var now: TestClock.Instant {
    time.withLock { $0 }
  }

  /// The smallest step, zero.
  public var minimumResolution: Duration { .zero }

  /// Return at once (after a yield), moving the time to `deadline`; throws `CancellationError` when
  /// the task is cancelled.
  /// - Parameters:
  ///   - deadline: The instant to move to.
  ///   - tolerance: Ignored.
  /// - Throws: `CancellationError` when the task is cancelled.
  public func sleep(until deadline: TestClock.Instant, tolerance: Duration? = nil) async throws {
    try Task.checkCancellation()
    time.withLock { $0 = max($0, deadline) }
    await Task.yield()
  }
}

extension Clock where Self == ImmediateClock {
  /// A clock whose sleeps end at once.
  public static var immediate: ImmediateClock { ImmediateClock() }
}
