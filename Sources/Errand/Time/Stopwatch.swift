import Foundation

/// Measures time on any clock, so that durations Errand reports follow an injected test clock.
package struct Stopwatch: Sendable {
  private let origin: any Origin

  /// Start measuring now.
  /// - Parameter clock: The clock to read.
  package init(_ clock: any Clock<Duration>) {
    // The continuous clock (every call's deadline, unless a test gives the client a clock of its
    // own) is read through a concrete type, without the generic `Start`'s metadata; its type is
    // compared as a pointer, for a dynamic cast (`is`) costs several times more.
    if type(of: clock) == ContinuousClock.self {
      origin = ContinuousStart(instant: .now)
    } else {
      origin = Self.start(clock)
    }
  }

  /// The time since the stopwatch started.
  package var elapsed: Duration { origin.elapsed }

  /// Run `handler` once `duration` has passed since the stopwatch started, unless the returned
  /// function is called first.
  ///
  /// The instant is fixed by the stopwatch's start, never by the moment this is called: a test
  /// clock advanced while the caller computes how long is left cannot push the alarm later (it
  /// fires at once when that instant has passed). On the continuous clock every alarm in the
  /// process shares one Dispatch timer (``DeadlineScheduler``).
  /// - Parameters:
  ///   - duration: How long after the start to run `handler`.
  ///   - handler: What to run; it runs once at most, on no particular thread.
  /// - Returns: What cancels the alarm.
  package func whenElapsed(
    _ duration: Duration, _ handler: @escaping @Sendable () -> Void
  ) -> @Sendable () -> Void {
    origin.whenElapsed(duration, handler)
  }

  private static func start<C: Clock<Duration>>(_ clock: C) -> any Origin {
    Start(clock: clock, instant: clock.now)
  }
}

/// Where a stopwatch started, on its clock.
private protocol Origin: Sendable {
  var elapsed: Duration { get }
  func whenElapsed(_ duration: Duration, _ handler: @escaping @Sendable () -> Void)
    -> @Sendable () -> Void
}

private struct Start<C: Clock<Duration>>: Origin {
  let clock: C
  let instant: C.Instant

  var elapsed: Duration { instant.duration(to: clock.now) }

  func whenElapsed(
    _ duration: Duration, _ handler: @escaping @Sendable () -> Void
  ) -> @Sendable () -> Void {
    // A deadline of centuries is "never": a standard clock traps past `Int64.max` seconds.
    let deadline = instant.advanced(by: duration.sleepable)
    let sleeper = Task { [clock] in
      do {
        try await clock.sleep(until: deadline, tolerance: nil)
        handler()
      } catch {
        // Cancelled: the alarm is no longer wanted.
      }
    }
    return { sleeper.cancel() }
  }
}

/// Where a stopwatch on the continuous clock started.
private struct ContinuousStart: Origin {
  let instant: ContinuousClock.Instant

  var elapsed: Duration { instant.duration(to: .now) }

  func whenElapsed(
    _ duration: Duration, _ handler: @escaping @Sendable () -> Void
  ) -> @Sendable () -> Void {
    // A real clock: only latency lies between reading it and arming the timer.
    let scheduler = DeadlineScheduler.shared
    let id = scheduler.schedule(after: duration - elapsed, handler)
    return { scheduler.cancel(id) }
  }
}
