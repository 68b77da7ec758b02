#if canImport(Testing)
  import Testing
#endif

/// Where a test double was created or a route registered, so that a report points at the test's
/// line rather than at ErrandTesting.
struct CallSite: Sendable {
  var fileID: String
  var filePath: String
  var line: Int
  var column: Int

  /// `File.swift:12`, for messages.
  var short: String {
    "\(fileID.split(separator: "/").last.map(String.init) ?? fileID):\(line)"
  }

  /// Record a failure at this place: a Swift Testing issue when Swift Testing runs the test,
  /// nothing otherwise (the caller also returns or throws what it reports).
  func recordIssue(_ message: String) {
    #if canImport(Testing)
      Issue.record(
        Comment(rawValue: message),
        sourceLocation: SourceLocation(
          fileID: fileID, filePath: filePath, line: line, column: column))
    #endif
  }
}
