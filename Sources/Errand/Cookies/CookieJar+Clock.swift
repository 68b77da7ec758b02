import Foundation

extension CookieJar {
  /// An empty jar whose time runs on `clock`: `epoch` when it is made, later by as much as
  /// `clock` moves. Give it the clock you give the client, so that its cookies expire as the
  /// client's other timers fire; in tests a `TestClock`, advanced past a cookie's `Max-Age`.
  ///
  /// ```swift
  /// let clock = TestClock()
  /// var configuration = APIClient.Configuration(clock: clock)
  /// configuration.cookieJar = CookieJar(clock: clock)
  /// // … a call answered with `Set-Cookie: session=abc; Max-Age=60` …
  /// await clock.advance(by: .seconds(61))  // the session cookie has expired
  /// ```
  /// - Parameters:
  ///   - publicSuffixes: The public suffixes no cookie may be set for; the bundled snapshot by
  ///     default.
  ///   - limits: How much the jar keeps.
  ///   - clock: The clock the jar's time runs on.
  ///   - epoch: The date when the jar is made; the system's now by default.
  public convenience init(
    publicSuffixes: PublicSuffixList = .bundled, limits: Limits = Limits(),
    clock: any Clock<Duration>, epoch: Date = Date()
  ) {
    let stopwatch = Stopwatch(clock)
    self.init(publicSuffixes: publicSuffixes, limits: limits) {
      let elapsed = stopwatch.elapsed.components
      return epoch.addingTimeInterval(
        Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18)
    }
  }
}
