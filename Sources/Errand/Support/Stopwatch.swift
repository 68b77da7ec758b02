/// Measures time on any clock, so that durations Errand reports follow an injected test clock.
struct Stopwatch: Sendable {
  private let read: @Sendable () -> Duration

  /// Start measuring now.
  /// - Parameter clock: The clock to read.
  init(_ clock: any Clock<Duration>) {
    read = Self.start(clock)
  }

  /// The time since the stopwatch started.
  var elapsed: Duration { read() }

  private static func start<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
    let start = clock.now
    return { start.duration(to: clock.now) }
  }
}
