import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// The request-building lines of the core API contract (the API that never changes), compiled as
/// written.
@Suite(.timeLimit(.minutes(3))) struct CoreAPIContractTests {
  @Test func createEndpointBuildsTheDocumentedRequest() throws {
    let client = APIClient(
      baseURL: URL(string: "https://api.example.com/v1")!, transport: .unimplemented())
    let create = Endpoint<Dog>(
      method: .post, path: "dogs", query: [URLQueryItem(name: "notify", value: "1")],
      headers: ["X-Trace": "abc"], body: .json(Dog(name: "Rex")))
    let request: HTTPRequest = try client.makeRequest(for: create)  // no await: nonisolated

    #expect(request.method == .post)
    #expect(request.url.absoluteString == "https://api.example.com/v1/dogs?notify=1")
    #expect(
      request.headers == [
        "Accept": "application/json", "User-Agent": "Errand/0.1.0",
        "Content-Type": "application/json",
        "X-Trace": "abc",
      ])
    #expect(request.body == Data(#"{"name":"Rex"}"#.utf8))
    #expect(request.timeout == .seconds(60))
  }

  @Test func listEndpointBuildsAGet() throws {
    let client = APIClient(
      baseURL: URL(string: "https://api.example.com/v1")!, transport: .unimplemented())
    let request = try client.makeRequest(for: Endpoint<[Dog]>(method: .get, path: "dogs"))
    #expect(request.method == .get)
    #expect(request.url.absoluteString == "https://api.example.com/v1/dogs")
    #expect(request.body == nil)
    #expect(request.description == "GET https://api.example.com/v1/dogs")
  }
}
