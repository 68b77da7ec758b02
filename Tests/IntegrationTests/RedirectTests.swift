import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// Redirects: followed within the origin with every header, and without credentials elsewhere.
@Suite(.timeLimit(.minutes(3))) struct RedirectTests {
  static let credentials: HTTPHeaders = [
    "Authorization": "Bearer s3cret", "Proxy-Authorization": "Basic s3cret",
    "Cookie": "session=s3cret", "X-API-Key": "k3y", "X-Auth-Token": "t0k3n",
    "X-Trace": "abc",
  ]

  @Test(arguments: [301, 302, 303, 307, 308], TransportKind.allCases)
  func sameOriginKeepsEveryHeader(status: Int, _ transport: TransportKind) async throws {
    let server = try LoopbackServer { request in
      request.path == "/start"
        ? .redirect(to: URL(string: "/end", relativeTo: nil)!, status: status) : .text("arrived")
    }
    defer { server.stop() }
    let endpoint = Endpoint<String>(path: "start", headers: Self.credentials)
    let full = try await transport.client(server.baseURL).response(for: endpoint)
    #expect(full.value == "arrived")
    #expect(full.response.url == server.url("/end"))
    let requests = server.requests
    #expect(requests.map(\.path) == ["/start", "/end"])
    for name in ["Authorization", "Proxy-Authorization", "Cookie", "X-API-Key", "X-Trace"] {
      #expect(requests.last?.headers[name] == Self.credentials[name], "\(name)")
    }
  }

  @Test(arguments: [301, 302, 307, 308], TransportKind.allCases)
  func anotherPortReceivesNoCredentials(status: Int, _ transport: TransportKind) async throws {
    let other = try LoopbackServer { _ in .text("elsewhere") }
    defer { other.stop() }
    let server = try LoopbackServer { _ in .redirect(to: other.url("/landing"), status: status) }
    defer { server.stop() }
    let endpoint = Endpoint<String>(path: "start", headers: Self.credentials)
    let full = try await transport.client(server.baseURL).response(for: endpoint)
    #expect(full.value == "elsewhere")
    #expect(server.requests.first?.headers["Authorization"] == "Bearer s3cret")
    let received = try #require(other.requests.first)
    #expect(received.path == "/landing")
    #expect(received.headers["Authorization"] == nil)
    #expect(received.headers["Proxy-Authorization"] == nil)
    #expect(received.headers["Cookie"] == nil)
    #expect(received.headers["X-API-Key"] == nil)
    #expect(received.headers["X-Auth-Token"] == nil)
    #expect(received.headers["X-Trace"] == "abc")
  }

  @Test(arguments: TransportKind.allCases)
  func credentialsStayOffAfterLeavingTheOrigin(_ transport: TransportKind) async throws {
    let home = Locked<URL?>(nil)
    let other = try LoopbackServer { _ in
      home.withLock { $0 }.map { .redirect(to: $0) } ?? ScriptedResponse(status: 500)
    }
    defer { other.stop() }
    let origin = try LoopbackServer { request in
      request.path == "/start" ? .redirect(to: other.url("/hop")) : .text("home")
    }
    defer { origin.stop() }
    home.withLock { $0 = origin.url("/back") }
    let endpoint = Endpoint<String>(path: "start", headers: Self.credentials)
    #expect(try await transport.client(origin.baseURL).send(endpoint) == "home")
    #expect(other.requests.first?.headers["Authorization"] == nil)
    #expect(origin.requests.map(\.path) == ["/start", "/back"])
  }
}
