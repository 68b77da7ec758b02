import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// Hostile review, round three, over a real socket through every transport: repeated field lines
/// as a server sends them, a cookie from the wire, and a next page at another origin. Each test
/// asserts the safe behaviour, so a failure is a finding.
@Suite(.timeLimit(.minutes(3))) struct RoundThreeSocketReviewTests {
  struct Token: TokenProvider {
    let token: String
    func currentToken() async throws -> String? { token }
    func refreshToken() async throws -> String { token }
  }

  static let dogs = Endpoint<Data>(path: "dogs", decoding: .data)

  /// A client over `transport` with one cache and the given middleware inside it.
  static func client(
    _ transport: TransportKind, _ server: LoopbackServer, cache: HTTPCache = HTTPCache(),
    middleware: [any Middleware] = []
  ) -> APIClient {
    transport.client(
      server.baseURL,
      configuration: APIClient.Configuration(
        middleware: [CachingMiddleware(cache: cache)] + middleware))
  }

  /// `Age` on two field lines (which URLSession joins into one list): the first counts, so an
  /// answer 700 s old is stale under `max-age=600` (RFC 9111 §5.1).
  @Test(arguments: TransportKind.allCases)
  func anAgeOnTwoFieldLinesIsReadAsTheFirst(_ transport: TransportKind) async throws {
    let server = try LoopbackServer { _ in
      ScriptedResponse(
        headers: [("Cache-Control", "max-age=600"), ("Age", "700"), ("Age", "10")],
        body: Data("[]".utf8))
    }
    defer { server.stop() }
    let client = Self.client(transport, server)
    _ = try await client.send(Self.dogs)
    let second = try await client.response(for: Self.dogs)
    #expect(second.response.cacheStatus == .miss)
    #expect(server.requests.count == 2)
  }

  /// `no-store` on a second `Cache-Control` line is honoured, joined or not.
  @Test(arguments: TransportKind.allCases)
  func aNoStoreOnASecondCacheControlLineIsHonoured(_ transport: TransportKind) async throws {
    let server = try LoopbackServer { _ in
      ScriptedResponse(
        headers: [("Cache-Control", "max-age=600"), ("Cache-Control", "no-store")],
        body: Data("[]".utf8))
    }
    defer { server.stop() }
    let client = Self.client(transport, server)
    _ = try await client.send(Self.dogs)
    _ = try await client.send(Self.dogs)
    #expect(server.requests.count == 2)
  }

  /// A session cookie a server sets on a cacheable answer: the next visitor's hit does not carry it.
  @Test(arguments: TransportKind.allCases)
  func aSetCookieFromTheWireIsNotReplayed(_ transport: TransportKind) async throws {
    let server = try LoopbackServer { _ in
      ScriptedResponse(
        headers: [("Cache-Control", "max-age=600"), ("Set-Cookie", "session=ANN-1; HttpOnly")],
        body: Data("[]".utf8))
    }
    defer { server.stop() }
    let cache = HTTPCache()
    _ = try await Self.client(transport, server, cache: cache).send(Self.dogs)
    let hit = try await Self.client(transport, server, cache: cache).response(for: Self.dogs)
    #expect(hit.response.cacheStatus == .hit)
    #expect(hit.response.headers["Set-Cookie"] == nil)
  }

  /// `Vary: aUtHoRiZaTiOn` from a real server, two users sharing one cache.
  @Test(arguments: TransportKind.allCases)
  func aVaryOnAuthorizationInOddCaseKeepsUsersApart(_ transport: TransportKind) async throws {
    let server = try LoopbackServer { request in
      ScriptedResponse(
        headers: [("Cache-Control", "max-age=600"), ("Vary", "aUtHoRiZaTiOn")],
        body: Data("inbox of \(request.headers["Authorization"] ?? "-")".utf8))
    }
    defer { server.stop() }
    let cache = HTTPCache()
    let inbox = Endpoint<Data>(path: "inbox", requiresAuthentication: true, decoding: .data)
    func user(_ token: String) -> APIClient {
      Self.client(
        transport, server, cache: cache,
        middleware: [BearerAuthenticationMiddleware(provider: Token(token: token))])
    }
    _ = try await user("ann-tok").send(inbox)
    let bob = try await user("bob-tok").send(inbox)
    #expect(String(decoding: bob, as: UTF8.self) == "inbox of Bearer bob-tok")
    #expect(server.requests.count == 2)
  }

  /// A next page on another port (another origin): over the wire, it gets no token, no key and
  /// no header of the app's own, whoever added them.
  @Test(arguments: TransportKind.allCases)
  func aNextPageAtAnotherOriginGetsNothingSecretOverTheWire(_ transport: TransportKind)
    async throws
  {
    let other = try LoopbackServer { _ in ScriptedResponse(body: Data("[]".utf8)) }
    defer { other.stop() }
    let next = other.url("/v1/dogs?page=2")
    let api = try LoopbackServer { _ in
      ScriptedResponse(
        headers: [("Link", "<\(next.absoluteString)>; rel=\"next\"")], body: Data("[]".utf8))
    }
    defer { api.stop() }
    let client = transport.client(
      api.baseURL,
      configuration: APIClient.Configuration(
        headers: ["X-Tenant": "acme"],
        middleware: [
          CachingMiddleware(cache: HTTPCache()),
          BearerAuthenticationMiddleware(provider: Token(token: "tok-SECRET")),
        ]))
    var pages = 0
    for try await _ in client.pages(
      Endpoint<Data>(
        path: "dogs", headers: ["X-API-Key": "key-SECRET"], requiresAuthentication: true,
        decoding: .data))
    {
      pages += 1
    }
    #expect(pages == 2)
    let sent = try #require(other.requests.first)
    for name in ["Authorization", "X-API-Key", "X-Tenant"] {
      #expect(sent.headers[name] == nil, "\(name)")
    }
    #expect(api.requests.first?.headers["Authorization"] == "Bearer tok-SECRET")
  }
}
