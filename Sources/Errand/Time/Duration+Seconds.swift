import Foundation

extension Duration {
  /// The duration in seconds, as `TimeInterval` APIs want it.
  var seconds: TimeInterval {
    let (seconds, attoseconds) = components
    return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
  }
}

extension Duration {
  /// The duration in seconds as a plain decimal, such as `2.5` or `30`, for command lines: the same
  /// in every locale (no grouping, always a `.`), to the microsecond, rounded up so that a short
  /// positive duration never reads as `0`. Zero and negative durations read `0`.
  var decimalSeconds: String {
    guard self > .zero else { return "0" }
    var (seconds, attoseconds) = components
    let attosecondsPerMicrosecond: Int64 = 1_000_000_000_000
    var microseconds = (attoseconds + attosecondsPerMicrosecond - 1) / attosecondsPerMicrosecond
    if microseconds == 1_000_000 {
      microseconds = 0
      seconds = seconds == .max ? seconds : seconds + 1
    }
    guard microseconds > 0 else { return String(seconds) }
    let digits = String(microseconds)
    var fraction = String(repeating: "0", count: 6 - digits.count) + digits  // "000001", "500000"
    while fraction.hasSuffix("0") {
      fraction.removeLast()
    }
    return "\(seconds).\(fraction)"
  }
}

extension Duration {
  /// The duration in whole milliseconds, rounded to the nearest, for text: zero for a negative
  /// duration, and `Int64.max` for one too long to count (a `retry` field of twenty digits, a test
  /// clock moved by centuries) instead of trapping.
  package var wholeMilliseconds: Int64 {
    guard self > .zero else { return 0 }
    let (seconds, attoseconds) = components
    let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000)
    let rounded = (attoseconds + 500_000_000_000_000) / 1_000_000_000_000_000
    let (total, carry) = milliseconds.addingReportingOverflow(rounded)
    return overflow || carry ? .max : total
  }
}

extension Duration {
  /// The longest a single sleep on a clock lasts: 2^60 seconds (some 36 billion years). The
  /// standard library's clocks trap ("Not enough bits to represent the passed value") when asked
  /// to sleep until an instant past `Int64.max` seconds, so a wait of `.seconds(Int64.max)` (an
  /// app's "no limit", or a server's 10^20-second `Retry-After` under a lifted cap) sleeps this
  /// long instead: for ever, in effect, until it is cancelled.
  package static let longestSleep: Duration = .seconds(Int64(1) << 60)

  /// This duration, at most ``longestSleep``: what to pass to `Clock.sleep(for:)`.
  package var sleepable: Duration { Swift.min(self, .longestSleep) }
}
