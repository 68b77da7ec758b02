import Errand
import ErrandTesting
import Foundation
import Testing

/// ErrandStubs links no test framework; it finds ErrandTesting's Swift Testing reporter at run
/// time. These tests fail if the two drift apart.
@Suite(.timeLimit(.minutes(3))) struct IssueReportingTests {
  @Test func theNameErrandStubsLooksUpIsTheReporter() throws {
    let reporter = try #require(TestIssueReporting.reporter)
    #expect(ObjectIdentifier(reporter) == ObjectIdentifier(SwiftTestingIssueReporter.self))
  }

  @Test func anUnusedRouteIsReportedAtTheLineThatRegisteredIt() async {
    let stub = StubTransport()
    let line = #line + 1
    await stub.on(.get, "/v1/never", .status(204))
    await withKnownIssue {
      _ = await stub.verifyAllRoutesUsed()
    } matching: { issue in
      issue.sourceLocation?.line == line
        && issue.sourceLocation?.fileID == #fileID
        && issue.comments.contains { $0.rawValue.contains("was never used") }
    }
  }
}
