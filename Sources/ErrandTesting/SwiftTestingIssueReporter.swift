import ErrandStubs
import Testing

/// Records ErrandStubs' failures as Swift Testing issues, at the test's own line.
///
/// ErrandStubs finds this type at run time by its mangled name (see `TestIssueReporting`): keep
/// its name and module, or update `TestIssueReporting.reporterTypeName` with it.
package struct SwiftTestingIssueReporter: TestIssueReporter {
  package static func recordIssue(_ message: String, at site: CallSite) {
    Issue.record(
      Comment(rawValue: message),
      sourceLocation: SourceLocation(
        fileID: site.fileID, filePath: site.filePath, line: site.line, column: site.column))
  }

  package static func recordIssueAtRunningTest(_ message: String, otherwiseAt site: CallSite) {
    guard let test = Test.current else {
      recordIssue(message, at: site)
      return
    }
    Issue.record(Comment(rawValue: message), sourceLocation: test.sourceLocation)
  }
}
