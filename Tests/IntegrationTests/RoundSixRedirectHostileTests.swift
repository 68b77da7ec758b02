import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// Round six: the client's own default headers on redirect chains over real transports. A hop
/// that left a default header behind at another origin must not have it come back: not at a
/// second hop within that other origin, and not back at the client's own.
@Suite(.timeLimit(.minutes(2))) struct RoundSixRedirectHostileTests {
  static let tenant = "tenant-R6-int-4e1a"

  /// A → B/x → B/y: the second hop is within B's origin, where URLSession proposes the request
  /// it would send; the tenant key must not reappear there.
  @Test(arguments: TransportKind.allCases)
  func aSecondHopWithinTheOtherOriginCarriesNoDefault(_ transport: TransportKind) async throws {
    let other = try LoopbackServer { request in
      request.path == "/x" ? .redirect(to: URL(string: "/y")!) : .text("elsewhere")
    }
    defer { other.stop() }
    let server = try LoopbackServer { _ in .redirect(to: other.url("/x")) }
    defer { server.stop() }
    let client = transport.client(
      server.baseURL,
      configuration: APIClient.Configuration(headers: [
        "X-Tenant-Key": Self.tenant, "Authorization": "Bearer tok-R6-int",
      ]))
    #expect(try await client.send(Endpoint<String>(path: "start")) == "elsewhere")
    #expect(server.requests.first?.headers["x-tenant-key"] == Self.tenant)
    #expect(other.requests.map(\.path) == ["/x", "/y"])
    for received in other.requests {
      #expect(received.headers["x-tenant-key"] == nil, "\(received.path)")
      #expect(received.headers["authorization"] == nil, "\(received.path)")
    }
  }

  /// A → B → A: back at its own origin, the header that was left behind stays behind (as
  /// `Cookie` does: the documented rule for secrets on a chain).
  @Test(arguments: TransportKind.allCases)
  func aDefaultLeftBehindDoesNotComeBackAtHome(_ transport: TransportKind) async throws {
    let home = Locked<URL?>(nil)
    let other = try LoopbackServer { _ in
      .redirect(to: home.withLock { $0 }!.appendingPathComponent("end"))
    }
    defer { other.stop() }
    let server = try LoopbackServer { request in
      request.path == "/end" ? .text("home") : .redirect(to: other.url("/hop"))
    }
    defer { server.stop() }
    home.withLock { $0 = server.baseURL }
    let client = transport.client(
      server.baseURL,
      configuration: APIClient.Configuration(headers: ["X-Tenant-Key": Self.tenant]))
    #expect(try await client.send(Endpoint<String>(path: "start")) == "home")
    #expect(other.requests.first?.headers["x-tenant-key"] == nil)
    #expect(server.requests.map(\.path) == ["/start", "/end"])
    #expect(server.requests.last?.headers["x-tenant-key"] == nil)
  }

  /// A `303` after a `POST` to another origin: a `GET`, no body, no tenant key.
  @Test(arguments: TransportKind.allCases)
  func aSeeOtherToAnotherOriginLeavesBodyAndDefaultsBehind(_ transport: TransportKind)
    async throws
  {
    let other = try LoopbackServer { _ in .text("done") }
    defer { other.stop() }
    let server = try LoopbackServer { _ in .redirect(to: other.url("/done"), status: 303) }
    defer { server.stop() }
    let client = transport.client(
      server.baseURL,
      configuration: APIClient.Configuration(headers: ["X-Tenant-Key": Self.tenant]))
    let answer = try await client.send(
      Endpoint<String>(method: .post, path: "start", body: .data(Data("password=hunter22".utf8))))
    #expect(answer == "done")
    let received = try #require(other.requests.first)
    #expect(received.method == "GET")
    #expect(received.body.isEmpty)
    #expect(received.headers["x-tenant-key"] == nil)
  }

  /// A server that puts the bearer token it got into the `Location` it redirects to, under a
  /// query name the redaction does not know: the listener's `redirectFollowed` must not print
  /// it, on either transport (URLSession's delegate posts it from a queue of its own).
  @Test(arguments: TransportKind.allCases)
  func aTokenEchoedInAFollowedLocationIsNotHeard(_ transport: TransportKind) async throws {
    let server = try LoopbackServer { request in
      guard request.path == "/start" else { return .text("done") }
      let token = String(request.headers["authorization"]?.dropFirst(7) ?? "")
      return .redirect(to: URL(string: "/done?state=\(token)")!)
    }
    defer { server.stop() }
    let listener = RecordingListener()
    let client = transport.client(
      server.baseURL,
      configuration: APIClient.Configuration(
        headers: ["Authorization": "Bearer tokR6intloc9"], eventListeners: [listener]))
    #expect(try await client.send(Endpoint<String>(path: "start")) == "done")
    let events = await listener.eventsOfOneCall()
    #expect(
      events.contains {
        if case .redirectFollowed = $0.kind { return true }
        return false
      })
    for form in printedForms(of: events) {
      #expect(!form.contains("tokR6intloc9"), "\(form)")
    }
  }
}
