import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct UnimplementedTransportTests {
  @Test func usingItRecordsAnIssueAndFailsTheCall() async throws {
    let client = APIClient(baseURL: base, transport: .unimplemented("dogs API"))
    await withKnownIssue {
      let error = await #expect(throws: APIError.self) {
        try await client.send(
          Endpoint<[Dog]>(path: "dogs", query: [URLQueryItem(name: "token", value: "s3cret")]))
      }
      #expect(error?.kind == .transport)
      let unimplemented = error?.underlyingError as? UnimplementedTransport.Unimplemented
      #expect(
        unimplemented?.description
          == "Unimplemented transport \"dogs API\" was asked to send GET https://api.example.com/v1/dogs?token=<redacted>"
      )
    } matching: { issue in
      issue.comments.contains { $0.rawValue.hasPrefix("Unimplemented transport \"dogs API\"") }
    }
  }

  @Test func buildingRequestsNeverTouchesIt() throws {
    let client = APIClient(baseURL: base, transport: .unimplemented)
    #expect(try client.makeRequest(for: Endpoint<[Dog]>(path: "dogs")).url.path == "/v1/dogs")
  }
}
