/// Measures time on any clock, so that durations Errand reports follow an injected test clock.
package struct Stopwatch: Sendable {
  private let read: @Sendable () -> Duration

  /// Start measuring now.
  /// - Parameter clock: The clock to read.
  package init(_ clock: any Clock<Duration>) {
    read = Self.start(clock)
  }

  /// The time since the stopwatch started.
  package var elapsed: Duration { read() }

  private static func start<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
    let start = clock.now
    return { start.duration(to: clock.now) }
  }
}
