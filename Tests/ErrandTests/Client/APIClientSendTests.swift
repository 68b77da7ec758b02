import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct APIClientSendTests {
  private func client(_ answer: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse)
    -> APIClient
  {
    APIClient(
      baseURL: url("https://api.example.com/v1"),
      transport: StubTransport { .response(try await answer($0)) })
  }

  @Test func sendsTheBuiltRequestAndDecodesTheAnswer() async throws {
    let client = client { request in
      HTTPResponse(status: 200, body: Data(#"[{"name":"Rex"}]"#.utf8), url: request.url)
    }
    let endpoint = Endpoint<[Dog]>(method: .get, path: "dogs")
    let full = try await client.response(for: endpoint)
    #expect(full.value == [Dog(name: "Rex")])
    #expect(full.request == (try client.makeRequest(for: endpoint)))
    #expect(full.response.url == url("https://api.example.com/v1/dogs"))
    #expect(try await client.send(endpoint) == [Dog(name: "Rex")])
  }

  @Test(arguments: [199, 300, 304, 400, 401, 404, 500, 503])
  func rejectsStatusesOutsideTheAcceptableRange(status: Int) async throws {
    let client = client { _ in HTTPResponse(status: status, body: Data("nope".utf8)) }
    let error = await #expect(throws: APIError.self) {
      try await client.send(Endpoint<Void>(path: "dogs"))
    }
    guard case .unacceptableStatus(let response) = error else {
      Issue.record("expected unacceptableStatus, got \(String(describing: error))")
      return
    }
    #expect(response.status == status)
    #expect(response.body == Data("nope".utf8))
  }

  @Test(arguments: [
    (URLError(.cancelled) as any Error, "cancelled"),
    (CancellationError(), "cancelled"),
    (URLError(.timedOut), "timedOut"),
    (URLError(.notConnectedToInternet), "transport"),
    (URLError(.cannotConnectToHost), "transport"),
    (APIError.invalidRequest("x"), "invalidRequest"),
  ])
  func mapsTransportErrors(thrown: any Error, expectedCase: String) async throws {
    let client = client { _ in throw thrown }
    let error = await #expect(throws: APIError.self) {
      try await client.send(Endpoint<Void>(path: "d"))
    }
    #expect(error?.kind.rawValue == expectedCase)
  }

  @Test func keepsTheUnderlyingTransportError() async throws {
    let client = client { _ in throw URLError(.networkConnectionLost) }
    let error = await #expect(throws: APIError.self) {
      try await client.send(Endpoint<Void>(path: "d"))
    }
    guard case .transport(let underlying) = error else {
      Issue.record("expected transport, got \(String(describing: error))")
      return
    }
    #expect((underlying as? URLError)?.code == .networkConnectionLost)
  }

  @Test func reportsUndecodableBodiesWithTheResponse() async throws {
    let client = client { _ in HTTPResponse(status: 200, body: Data("error".utf8)) }
    let error = await #expect(throws: APIError.self) {
      try await client.send(Endpoint<[Dog]>(path: "d"))
    }
    guard case .decoding(let underlying, let response) = error else {
      Issue.record("expected decoding, got \(String(describing: error))")
      return
    }
    #expect(underlying is DecodingError)
    #expect(response.body == Data("error".utf8))
  }

  @Test func acceptsTheClientsConfiguredStatuses() async throws {
    let client = APIClient(
      baseURL: url("https://api.example.com"),
      transport: StubTransport { _ in .status(304) },
      configuration: APIClient.Configuration(acceptableStatusCodes: 200..<400))
    try await client.send(Endpoint<Void>(path: "d"))
  }

  @Test func neverSendsAnInvalidRequest() async throws {
    let client = client { _ in
      Issue.record("the transport must not be called")
      return HTTPResponse(status: 200)
    }
    let error = await #expect(throws: APIError.self) {
      try await client.send(Endpoint<Void>(path: "d", headers: ["X": "a\r\nb"]))
    }
    #expect(error?.kind == .invalidRequest)
  }
}
