/// Where a test double was created or a route registered, so that a report points at the test's
/// line rather than at the test kit.
package struct CallSite: Sendable, Hashable {
  package var fileID: String
  package var filePath: String
  package var line: Int
  package var column: Int

  package init(fileID: String, filePath: String, line: Int, column: Int) {
    self.fileID = fileID
    self.filePath = filePath
    self.line = line
    self.column = column
  }

  /// `File.swift:12`, for messages.
  package var short: String {
    "\(fileID.split(separator: "/").last.map(String.init) ?? fileID):\(line)"
  }

  /// Record a failure at this place: a Swift Testing issue when the process links ErrandTesting
  /// (test targets do), nothing otherwise (the caller also returns or throws what it reports).
  func recordIssue(_ message: String) {
    TestIssueReporting.reporter?.recordIssue(message, at: self)
  }

  /// Record a failure at the running test's declaration (its `@Test` line), or at this place
  /// when no test is running: for a failure whose caller's line cannot be known, such as one in
  /// a property's getter.
  func recordIssueAtRunningTest(_ message: String) {
    TestIssueReporting.reporter?.recordIssueAtRunningTest(message, otherwiseAt: self)
  }
}
