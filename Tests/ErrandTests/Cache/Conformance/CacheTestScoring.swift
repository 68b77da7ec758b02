import ErrandTesting
import Foundation

/// The suite's scoring (`determineTestResult` in `test-engine/lib/results.mjs`): what an outcome
/// means for a test of its kind, and a test whose prerequisite (`depends_on`, recursively) did
/// not pass is not judged.
enum CacheTestResult: String, Sendable, CaseIterable {
  case passed
  /// A required test failed.
  case failed
  /// An optimal test failed: not a conformance problem.
  case optionalFailed
  /// A check answered yes.
  case yes
  /// A check answered no.
  case no
  /// The test could not be set up.
  case setupFailed
  /// A prerequisite did not pass: not judged.
  case notJudged
  /// The cache retried a request.
  case retried
  /// The harness failed (the suite's `AbortError`).
  case harnessFailed
  /// Not run.
  case untested
}

struct CacheTestScoring {
  let tests: [String: CacheTest]
  let outcomes: [String: CacheTestOutcome]

  init(suite: CacheTestSuite, outcomes: [String: CacheTestOutcome]) {
    tests = Dictionary(suite.tests.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    self.outcomes = outcomes
  }

  /// The result of test `id`.
  func result(_ id: String) -> CacheTestResult {
    guard let test = tests[id], let outcome = outcomes[id] else { return .untested }
    for prerequisite in test.dependsOn where ![.passed, .yes].contains(result(prerequisite)) {
      return .notJudged
    }
    switch outcome {
    case .setupFailed: return .setupFailed
    case .retried: return .retried
    case .error(let message) where message.hasPrefix("AbortError"): return .harnessFailed
    case .passed, .failed, .error: break
    }
    let passed = outcome == .passed
    switch test.kind {
    case .required: return passed ? .passed : .failed
    case .optimal: return passed ? .passed : .optionalFailed
    case .check: return passed ? .yes : .no
    }
  }

  /// How many of `ids` (of kind `kind`) came to each result.
  func counts(of ids: [String], kind: CacheTest.Kind) -> [CacheTestResult: Int] {
    var counts: [CacheTestResult: Int] = [:]
    for id in ids where tests[id]?.kind == kind {
      counts[result(id), default: 0] += 1
    }
    return counts
  }
}

/// The browsers' published results (`Fixtures/cache-tests/browser-results.json`).
struct CacheTestBrowserResults: Decodable, Sendable {
  struct Browser: Decodable, Sendable {
    struct Result: Decodable, Sendable {
      var passed: Bool
      var error: String?
      var message: String?

      /// The result as this port's outcome.
      var outcome: CacheTestOutcome {
        if passed { return .passed }
        let message = self.message ?? ""
        switch error {
        case "Setup": return message == "retry" ? .retried : .setupFailed(message)
        case "Assertion": return .failed(message)
        default: return .error("\(error ?? "unknown"): \(message)")
        }
      }
    }

    var name: String
    var version: String
    var results: [String: Result]
  }

  var source: CacheTestSuite.Source
  var browsers: [Browser]

  static func load() throws -> CacheTestBrowserResults {
    try Fixtures.nearest().decode(
      CacheTestBrowserResults.self, from: "cache-tests/browser-results.json")
  }
}
