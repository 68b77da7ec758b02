import ErrandTesting
import Foundation
import Testing

extension CacheConformanceTests {
  /// Required tests passed, failed and not judged (a prerequisite or the setup did not pass).
  static func figures(_ scoring: CacheTestScoring, _ ids: [String]) -> [Int] {
    let required = scoring.counts(of: ids, kind: .required)
    return [
      required[.passed] ?? 0, required[.failed] ?? 0,
      (required[.notJudged] ?? 0) + (required[.setupFailed] ?? 0),
    ]
  }

  /// README's table holds the figures of this run and of the browsers' results, on the tests
  /// the suite runs in browsers.
  @Test func theReadmeTableHoldsTheseFigures() async throws {
    let suite = try Self.loaded.get()
    let browserIDs = suite.tests.filter { !$0.cdnOnly && !$0.browserSkip }.map(\.id)
    let readme = try String(
      contentsOf: Fixtures.nearest().directory.deletingLastPathComponent()
        .appendingPathComponent("README.md"),
      encoding: .utf8)
    func row(_ label: String) -> [Int]? {
      readme.split(separator: "\n").first { $0.hasPrefix("| \(label) ") }
        .map {
          $0.split(separator: "|").dropFirst().compactMap {
            Int($0.trimmingCharacters(in: .whitespaces))
          }
        }
    }
    var expected: [(String, [Int])] = []
    for browser in try CacheTestBrowserResults.load().browsers {
      let scoring = CacheTestScoring(suite: suite, outcomes: browser.results.mapValues(\.outcome))
      expected.append((browser.name, Self.figures(scoring, browserIDs)))
    }
    let scoring = CacheTestScoring(
      suite: suite, outcomes: await Self.outcomes(of: browserIDs, in: suite))
    expected.append(("Errand", Self.figures(scoring, browserIDs)))
    for (label, figures) in expected {
      #expect(row(label) == figures, "README's row for \(label)")
    }
    #expect(readme.contains("| Required tests (\(Self.requiredCount(browserIDs, suite)))"))
  }

  /// How many of `ids` are required.
  static func requiredCount(_ ids: [String], _ suite: CacheTestSuite) -> Int {
    ids.filter { id in suite.tests.first { $0.id == id }?.kind == .required }.count
  }
}
