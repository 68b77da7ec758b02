import Foundation
import Testing

@testable import Errand

/// What the session delegate's own observations add to the metrics URLSession reports.
@Suite(.timeLimit(.minutes(3))) struct ObservedTransferTests {
  /// A reported body of 0 bytes (a task whose metrics missed its data) is not believed over the
  /// bytes the delegate counted; any other reported count is.
  @Test(arguments: [(Int?.some(0), 10), (7, 7), (nil, 10)])
  func theBodySizeReportedIsKeptUnlessItIsZero(reported: Int?, expected: Int) {
    var observed = ObservedTransfer()
    observed.bodyBytes = 10
    var session = TransferMetrics()
    session.responseBodyBytes = reported
    observed.reported = session
    #expect(observed.metrics(ended: true).responseBodyBytes == expected)
  }
}
