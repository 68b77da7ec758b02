import Errand
import ErrandTesting
import Foundation
import Testing

/// The public HTTP caching test suite (https://github.com/http-tests/cache-tests, the suite
/// behind https://cache-tests.fyi, at commit b55b8bda3dbb8c927c04e85bd8d496a8caa3e4ba of
/// 20 July 2026, ported by `scripts/convert-cache-tests.mjs` into `Fixtures/cache-tests/`), run
/// against `HTTPCache()` through `CachingMiddleware` over a `StubTransport` on a `TestClock`,
/// scored as the suite scores it. Every required test passes or is excused in `CacheTestSkips`
/// with its reason; optional tests and checks are recorded, and printed by `summary`.
@Suite(.timeLimit(.minutes(5))) struct CacheConformanceTests {
  /// The suite, read once.
  static let loaded = Result { try CacheTestSuite.load() }
  /// The commit of http-tests/cache-tests the fixture was converted from.
  static let commit = "b55b8bda3dbb8c927c04e85bd8d496a8caa3e4ba"

  /// The identifiers of the tests the port runs, in the suite's order.
  static func runIDs() throws -> [String] {
    try loaded.get().tests.filter { CacheTestSkips.outOfScope($0) == nil }.map(\.id)
  }

  /// The runner: the default cache, on the test's wall clock.
  static let runner = CacheTestRunner { wallClock in
    HTTPCache(now: { wallClock.date })
  }

  /// The outcomes of `ids` and of everything they depend on, each run once.
  static func outcomes(of ids: [String], in suite: CacheTestSuite) async -> [String:
    CacheTestOutcome]
  {
    let tests = Dictionary(suite.tests.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    var outcomes: [String: CacheTestOutcome] = [:]
    var pending = ids
    while let id = pending.popLast() {
      guard outcomes[id] == nil, let test = tests[id], CacheTestSkips.outOfScope(test) == nil
      else { continue }
      outcomes[id] = await runner.run(test)
      pending += test.dependsOn
    }
    return outcomes
  }

  /// A required test passes, or is excused for its reason: one that fails on purpose still
  /// fails (else it leaves the list), one whose prerequisite is answered the other way on purpose
  /// passes on its own.
  @Test(arguments: try runIDs())
  func requiredTestPassesOrIsExcused(_ id: String) async throws {
    let suite = try Self.loaded.get()
    let test = try #require(suite.tests.first { $0.id == id })
    let outcomes = await Self.outcomes(of: [id], in: suite)
    let scoring = CacheTestScoring(suite: suite, outcomes: outcomes)
    let result = scoring.result(id)
    let outcome = try #require(outcomes[id])
    guard test.kind == .required else { return }
    switch CacheTestSkips.deviations[id] {
    case nil:
      #expect(result == .passed, "\(id): \(result.rawValue), \(outcome) — \(test.name)")
    case .fails(let reason)?:
      #expect(result != .passed, "\(id) passes: take it off the list (\(reason))")
    case .notJudged(let reason)?:
      #expect(result == .notJudged, "\(id) is judged: take it off the list (\(reason))")
      #expect(outcome == .passed, "\(id) fails on its own: \(outcome)")
    }
  }

  /// Every test run, the figures printed beside the browsers' on the tests they run.
  @Test func summary() async throws {
    let suite = try Self.loaded.get()
    let ids = try Self.runIDs()
    let scoring = CacheTestScoring(suite: suite, outcomes: await Self.outcomes(of: ids, in: suite))
    let browserIDs = suite.tests.filter { !$0.cdnOnly && !$0.browserSkip }.map(\.id)
    let browsers = try CacheTestBrowserResults.load().browsers
    var lines = ["HTTP caching test suite \(suite.source.commit.prefix(12)), required tests:"]
    func line(_ name: String, _ scoring: CacheTestScoring, _ ids: [String]) -> String {
      let required = scoring.counts(of: ids, kind: .required)
      let optional = scoring.counts(of: ids, kind: .optimal)
      let checks = scoring.counts(of: ids, kind: .check)
      let notJudged = (required[.notJudged] ?? 0) + (required[.setupFailed] ?? 0)
      return
        "\(name): \(required[.passed] ?? 0) passed, \(required[.failed] ?? 0) failed, "
        + "\(notJudged) not judged; optional \(optional[.passed] ?? 0) passed, "
        + "\(optional[.optionalFailed] ?? 0) not; checks \(checks[.yes] ?? 0) yes, "
        + "\(checks[.no] ?? 0) no"
    }
    for browser in browsers {
      let browserScoring = CacheTestScoring(
        suite: suite, outcomes: browser.results.mapValues(\.outcome))
      lines.append(line("\(browser.name) \(browser.version)", browserScoring, browserIDs))
    }
    lines.append(line("Errand, the browsers' \(browserIDs.count) tests", scoring, browserIDs))
    lines.append(line("Errand, all \(ids.count) tests it runs", scoring, ids))
    for kind in [CacheTest.Kind.required, .optimal, .check] {
      lines.append("\(kind.rawValue) tests that did not pass:")
      for id in ids where scoring.tests[id]?.kind == kind {
        let result = scoring.result(id)
        if result != .passed && result != .yes {
          lines.append("  \(id): \(result.rawValue) \(scoring.outcomes[id].map { "\($0)" } ?? "")")
        }
      }
    }
    print(lines.joined(separator: "\n"))
    #expect(ids.count == 329)
    #expect(suite.source.commit == Self.commit)
    #expect(try CacheTestBrowserResults.load().source.commit == Self.commit)
  }
}
