/// Something that turns a failure into a test-runner issue. ErrandTesting implements it with
/// Swift Testing; ErrandStubs never links a test framework, so apps and command-line tools can
/// use stubs and cassettes without one.
package protocol TestIssueReporter {
  /// Record `message` as a failure of the running test, at `site`.
  static func recordIssue(_ message: String, at site: CallSite)
  /// Record `message` as a failure of the running test, at the test's own declaration; at
  /// `site` when no test is running.
  static func recordIssueAtRunningTest(_ message: String, otherwiseAt site: CallSite)
}

/// Finds ErrandTesting's reporter at run time, when the process links it.
///
/// ErrandStubs cannot import ErrandTesting (ErrandTesting is built on it), and Swift has no module
/// initialisers through which ErrandTesting could install itself. So the reporter is looked up by
/// its mangled type name in the Swift runtime's type metadata, which covers every image loaded in
/// the process: a test binary that links ErrandTesting finds it, an app or tool does not. A test in
/// the package's own suite checks that the name resolves to that type, so a rename cannot silently
/// turn reports off.
package enum TestIssueReporting {
  /// The mangled name of `ErrandTesting.SwiftTestingIssueReporter` (written without the
  /// compiler's word substitutions, which the runtime accepts as well).
  package static let reporterTypeName = "13ErrandTesting25SwiftTestingIssueReporterV"

  /// The reporter, or `nil` in a process without ErrandTesting. Looked up on each report, which
  /// happens only when a test is failing.
  package static var reporter: (any TestIssueReporter.Type)? {
    _typeByName(reporterTypeName) as? any TestIssueReporter.Type
  }
}
