import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// Status codes pass through `URLSessionTransport` unchanged, and the client accepts 2xx only.
/// 1xx codes are not final responses in HTTP/1.1, so they are not tested as answers.
@Suite(.timeLimit(.minutes(3))) struct StatusCodeTests {
  static let successes = [200, 201, 202, 203, 205, 206]
  static let failures = [
    300, 304, 400, 401, 403, 404, 405, 409, 410, 418, 422, 429, 500, 501, 502, 503, 504,
  ]

  @Test(arguments: successes + failures + [204])
  func transportPassesTheStatusThrough(status: Int) async throws {
    let server = try LoopbackServer { _ in ScriptedResponse(status: status) }
    defer { server.stop() }
    let response = try await URLSessionTransport().send(HTTPRequest(url: server.url("/status")))
    #expect(response.status == status)
    #expect(response.body.isEmpty)
  }

  @Test(arguments: successes)
  func clientAcceptsSuccess(status: Int) async throws {
    let server = try LoopbackServer { _ in .text("ok", status: status) }
    defer { server.stop() }
    let full = try await liveClient(server.baseURL).response(for: Endpoint<String>(path: "s"))
    #expect(full.response.status == status)
  }

  @Test(arguments: failures)
  func clientRejectsOtherStatusesKeepingTheBody(status: Int) async throws {
    let server = try LoopbackServer { _ in .json(#"{"error":"status \#(status)"}"#, status: status)
    }
    defer { server.stop() }
    let error = await #expect(throws: APIError.self) {
      _ = try await liveClient(server.baseURL).send(Endpoint<Dog>(path: "dogs/1"))
    }
    let response = try #require(error?.response)
    #expect(response.status == status)
    #expect(
      response.body == (status == 304 ? Data() : Data(#"{"error":"status \#(status)"}"#.utf8)))
    #expect(
      error?.localizedDescription.contains("GET \(server.url("/dogs/1").absoluteString)") == true)
  }

  /// On Linux, URLSession turns a 401 with `WWW-Authenticate` into a challenge that never ends
  /// without a stored credential; Errand's transport returns the 401 instead.
  @Test(arguments: [
    "Basic realm=\"dogs\"", "Bearer realm=\"dogs\"", "Digest realm=\"dogs\", nonce=\"1\"",
  ])
  func unauthorizedWithAChallengeComesBack(challenge: String) async throws {
    let server = try LoopbackServer { _ in
      ScriptedResponse(
        status: 401, headers: [("WWW-Authenticate", challenge)], body: Data("token expired".utf8))
    }
    defer { server.stop() }
    let client = liveClient(
      server.baseURL, configuration: APIClient.Configuration(timeout: .seconds(10)))
    let error = await #expect(throws: APIError.self) {
      _ = try await client.send(Endpoint<Dog>(path: "dogs/1"))
    }
    let response = try #require(error?.response, "\(String(describing: error))")
    #expect(response.status == 401)
    #expect(response.body == Data("token expired".utf8))
    #expect(response.headers["WWW-Authenticate"] == challenge)
  }

  @Test(arguments: [204, 205])
  func noContentDecodesToVoidAndNil(status: Int) async throws {
    let server = try LoopbackServer { _ in ScriptedResponse(status: status) }
    defer { server.stop() }
    let client = liveClient(server.baseURL)
    try await client.send(Endpoint<Void>(method: .delete, path: "dogs/1"))
    #expect(try await client.send(Endpoint<Dog?>(path: "dogs/1")) == nil)
  }

  @Test func headDecodesToNilAndVoid() async throws {
    let server = try LoopbackServer { _ in .json(#"{"name":"Rex"}"#) }
    defer { server.stop() }
    let client = liveClient(server.baseURL)
    #expect(try await client.send(Endpoint<Dog?>(method: .head, path: "dogs/1")) == nil)
    try await client.send(Endpoint<Void>(method: .head, path: "dogs/1"))
    #expect(server.requests.map(\.method) == ["HEAD", "HEAD"])
  }

  @Test func emptyBodyForADecodableSaysSo() async throws {
    let server = try LoopbackServer { _ in ScriptedResponse(status: 200) }
    defer { server.stop() }
    let error = await #expect(throws: APIError.self) {
      _ = try await liveClient(server.baseURL).send(Endpoint<Dog>(path: "dogs/1"))
    }
    guard case .decoding(_, let response) = error else {
      Issue.record("expected decoding, got \(String(describing: error))")
      return
    }
    #expect(response.body.isEmpty)
    #expect(
      error?.localizedDescription.hasSuffix(
        "body: the response body is empty; expected JSON for Dog") == true)
  }

  @Test func endpointCanAcceptMoreStatuses() async throws {
    let server = try LoopbackServer { _ in .json(#"{"name":"Rex"}"#, status: 409) }
    defer { server.stop() }
    let endpoint = Endpoint<Dog>(path: "dogs/1").accepting(200..<500)
    #expect(try await liveClient(server.baseURL).send(endpoint) == Dog(name: "Rex"))
  }

  /// A redirect status without `Location` is the answer. CurlTransport delivers its body; on
  /// Linux URLSession keeps the body of every 301–308 aside for a redirect it then never makes,
  /// so URLSessionTransport can only deliver the status and headers there (pinned here, and
  /// documented on `URLSessionTransport`). Apple's URLSession delivers the body.
  @Test(arguments: [301, 302, 303, 307, 308], TransportKind.allCases)
  func aRedirectWithoutLocationIsTheAnswer(status: Int, _ transport: TransportKind) async throws {
    let server = try LoopbackServer { _ in
      ScriptedResponse(status: status, body: Data("moved, but where?".utf8))
    }
    defer { server.stop() }
    let response = try await transport.make().send(HTTPRequest(url: server.url("/x")))
    #expect(response.status == status)
    #expect(response.headers["Content-Length"] == "17")
    #if canImport(FoundationNetworking)
      let delivered = transport == .urlSession ? Data() : Data("moved, but where?".utf8)
    #else
      let delivered = Data("moved, but where?".utf8)
    #endif
    #expect(response.body == delivered)
    #expect(server.requests.count == 1)
  }
}
