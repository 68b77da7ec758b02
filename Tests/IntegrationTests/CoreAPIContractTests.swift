import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// The core API contract (the API that never changes), run as written against the stub and
/// against a real URLSession.
@Suite(.timeLimit(.minutes(3))) struct CoreAPIContractTests {
  enum Backend: String, CaseIterable, Sendable {
    case stub, urlSession
  }

  /// A client whose API answers as the contract says, and a way to read the paths it received.
  private func makeBackend(_ backend: Backend) async throws -> (
    APIClient, @Sendable () async -> [String], LoopbackServer?
  ) {
    switch backend {
    case .stub:
      let stub = StubTransport()
      await stub.on(.get, "/v1/dogs", .json([Dog(name: "Rex")]))
      await stub.on(.get, "/v1/broken", .status(500))
      await stub.on(.get, "/v1/offline", .error(URLError(.notConnectedToInternet)))
      let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, transport: stub)
      return (client, { await stub.requests.map(\.url.path) }, nil)
    case .urlSession:
      let server = try LoopbackServer { request in
        switch request.path {
        case "/v1/dogs": .json(#"[{"name":"Rex"}]"#)
        case "/v1/broken": ScriptedResponse(status: 500)
        default: ScriptedResponse(ending: .closeWithoutResponse)
        }
      }
      let client = APIClient(baseURL: server.url("/v1"), transport: URLSessionTransport())
      return (client, { server.requests.map(\.path) }, server)
    }
  }

  @Test(arguments: Backend.allCases)
  func contractBehavesAsWritten(backend: Backend) async throws {
    let (client, receivedPaths, server) = try await makeBackend(backend)
    defer { server?.stop() }

    let dogs: [Dog] = try await client.send(Endpoint<[Dog]>(method: .get, path: "dogs"))
    #expect(dogs == [Dog(name: "Rex")])

    let full: Response<[Dog]> = try await client.response(
      for: Endpoint<[Dog]>(method: .get, path: "dogs"))
    #expect(full.value == [Dog(name: "Rex")])
    #expect(full.response.status == 200)
    #expect(full.response.headers["Content-Type"] == "application/json")
    #expect(full.request.url == client.baseURL.appendingPathComponent("dogs"))

    let create = Endpoint<Dog>(
      method: .post, path: "dogs", query: [URLQueryItem(name: "notify", value: "1")],
      headers: ["X-Trace": "abc"], body: .json(Dog(name: "Rex")))
    let request: HTTPRequest = try client.makeRequest(for: create)
    #expect(request.url.absoluteString == client.baseURL.absoluteString + "/dogs?notify=1")

    var outcomes: [String] = []
    for path in ["broken", "offline"] {
      do {
        _ = try await client.send(Endpoint<Dog>(method: .get, path: path))
      } catch let error as APIError {
        switch error {
        case .invalidRequest(let reason): outcomes.append("invalidRequest \(reason)")
        case .transport(let underlying): outcomes.append("transport \(underlying is URLError)")
        case .unacceptableStatus(let response):
          outcomes.append("status \(response.status) \(response.body.count)")
        case .decoding(let underlying, let response):
          outcomes.append("decoding \(underlying) \(response.status)")
        case .timedOut: outcomes.append("timed out")
        case .cancelled: outcomes.append("cancelled")
        }
      }
    }
    #expect(outcomes == ["status 500 0", "transport true"])
    #expect(await receivedPaths() == ["/v1/dogs", "/v1/dogs", "/v1/broken", "/v1/offline"])
  }

  @Test func liveClientLineCompiles() throws {
    let live = APIClient(
      baseURL: URL(string: "http://127.0.0.1:8080")!, transport: URLSessionTransport())
    #expect(
      try live.makeRequest(for: Endpoint<[Dog]>(path: "dogs")).url.absoluteString
        == "http://127.0.0.1:8080/dogs")
    #expect(live.transport is URLSessionTransport)
  }
}
