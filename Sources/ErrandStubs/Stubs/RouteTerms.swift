/// What a route asks of the test beyond its answer: how often it is called
/// (``StubResponse/allowingUnused()``, ``StubResponse/times(_:)`` and the others) and the
/// scenario state it requires and moves to (``StubResponse/inScenario(_:requires:movesTo:)``).
///
/// The fewest and the most calls are kept apart, so the modifiers combine in any order:
/// `.atLeast(1).atMost(3)` is one to three calls, whichever is written first; a later modifier
/// for the same bound replaces an earlier one. `allowingUnused()` makes the fewest zero,
/// whatever else says.
struct RouteTerms: Sendable {
  /// Whether the route may go unused (``StubResponse/allowingUnused()``).
  var mayGoUnused = false
  /// The fewest calls, as a modifier set it; `nil` when none did.
  var least: Int?
  /// The most calls; `nil` for no limit.
  var most: Int?
  /// The scenario the route belongs to, if any.
  var scenario: StubScenario.Step?

  /// The fewest calls the route expects: zero when it may go unused, else as set, else zero for
  /// a route with a most (`.atMost(3)` may go unused) and one for any other.
  var fewest: Int {
    mayGoUnused ? 0 : least ?? (most == nil ? 1 : 0)
  }

  /// What is wrong with `calls` calls to the route, as a sentence that names it, or `nil` when
  /// they are what it expects.
  /// - Parameters:
  ///   - route: The route, as its matcher reads.
  ///   - calls: How often it answered.
  /// - Returns: The failure, or `nil`.
  func failure(of route: String, calls: Int) -> String? {
    let named = "StubTransport route \(route)"
    let called = "was called \(Self.times(calls))"
    if fewest < 0 || most.map({ $0 < 0 }) == true {
      return "\(named) was expected \(expected): a number of calls cannot be negative"
    }
    if let most, fewest > most {
      return "\(named) was expected \(expected), which no number of calls can be; it \(called)"
    }
    guard calls < fewest || most.map({ calls > $0 }) == true else { return nil }
    if most == 0 {
      return "\(named) must not be called and \(called)"
    }
    if least == nil, most == nil, !mayGoUnused {
      return "\(named) was never used"
    }
    return "\(named) was expected \(expected) and \(called)"
  }

  /// The calls expected, as a sentence says them: `2 times`, `at least 1 time`,
  /// `at most 3 times`, `1 to 3 times`, `at least 3 and at most 1 times`.
  var expected: String {
    guard let most else { return "at least \(Self.times(fewest))" }
    if fewest == most { return Self.times(most) }
    if fewest == 0 { return "at most \(Self.times(most))" }
    if fewest > most { return "at least \(fewest) and at most \(Self.times(most))" }
    return "\(fewest) to \(Self.times(most))"
  }

  /// `1 time`, `2 times`.
  static func times(_ count: Int) -> String {
    count == 1 ? "1 time" : "\(count) times"
  }
}
