import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// Redirects that would do what the caller did not ask for are refused or defused.
@Suite(.timeLimit(.minutes(3))) struct RedirectHardeningTests {
  @Test(
    arguments: ["file:///etc/passwd", "data:text/plain,hi", "javascript:alert(1)", "ftp://x/y"],
    TransportKind.allCases)
  func onlyHTTPLocationsAreFollowed(location: String, _ transport: TransportKind) async throws {
    let server = try LoopbackServer { request in
      request.path == "/start"
        ? ScriptedResponse(status: 302, headers: [("Location", location)]) : .text("LEAK")
    }
    defer { server.stop() }
    let error = await #expect(throws: APIError.self) {
      _ = try await transport.client(server.baseURL).send(Endpoint<String>(path: "start"))
    }
    let refused = try #require(error?.underlyingError as? RefusedRedirectError)
    #expect(refused.reason == .unsupportedScheme)
    #expect(server.requests.map(\.path) == ["/start"])
    #expect(error?.localizedDescription.hasPrefix("The request stopped at a redirect") == true)
  }

  @Test(arguments: [false, true], TransportKind.allCases)
  func aRefusedRedirectIsTheErrorOfAStreamedCallToo(streams: Bool, _ transport: TransportKind)
    async throws
  {
    let server = try LoopbackServer { _ in
      ScriptedResponse(
        status: 302, headers: [("Location", "file:///etc/passwd")], body: Data("moved".utf8))
    }
    defer { server.stop() }
    let client = transport.client(server.baseURL)
    let endpoint = Endpoint<Data>(path: "start", decoding: .data)
    let error = await #expect(throws: APIError.self) {
      if streams {
        for try await _ in try await client.stream(endpoint) {}
      } else {
        _ = try await client.send(endpoint)
      }
    }
    #expect((error?.underlyingError as? RefusedRedirectError)?.reason == .unsupportedScheme)
  }

  @Test(arguments: TransportKind.allCases)
  func aUserAndPasswordInALocationNeverBecomeCredentials(_ transport: TransportKind) async throws {
    let other = try LoopbackServer { _ in .text("elsewhere") }
    defer { other.stop() }
    let port = try #require(other.baseURL.port)
    let server = try LoopbackServer { _ in
      ScriptedResponse(status: 302, headers: [("Location", "http://user:pw@127.0.0.1:\(port)/in")])
    }
    defer { server.stop() }
    #expect(
      try await transport.client(server.baseURL).send(Endpoint<String>(path: "start"))
        == "elsewhere")
    let received = try #require(other.requests.first)
    #expect(received.path == "/in")
    #expect(received.headers["authorization"] == nil)
  }

  /// Redirects that keep the method, and so the body: 307 and 308 of anything, 301 and 302 of
  /// anything but POST (which becomes a GET without a body).
  static let bodyKeepingRedirects: [(Int, HTTPMethod)] = [
    (307, .post), (308, .post), (301, .put), (302, .put), (302, .patch),
  ]

  @Test(arguments: bodyKeepingRedirects, TransportKind.allCases)
  func aBodyIsNeverDroppedSilentlyAtAnotherOrigin(
    redirect: (status: Int, method: HTTPMethod), _ transport: TransportKind
  ) async throws {
    let other = try LoopbackServer { _ in .text("elsewhere") }
    defer { other.stop() }
    let server = try LoopbackServer { _ in
      .redirect(to: other.url("/posted"), status: redirect.status)
    }
    defer { server.stop() }
    let error = await #expect(throws: APIError.self) {
      _ = try await transport.client(server.baseURL).send(
        Endpoint<String>(
          method: redirect.method, path: "start", body: .data(Data("password=hunter22".utf8))))
    }
    let refused = try #require(error?.underlyingError as? RefusedRedirectError)
    #expect(refused.reason == .bodyWouldBeDropped)
    #expect(other.requests.isEmpty)
  }

  @Test(arguments: bodyKeepingRedirects, TransportKind.allCases)
  func withinTheOriginTheBodyIsResent(
    redirect: (status: Int, method: HTTPMethod), _ transport: TransportKind
  ) async throws {
    let server = try LoopbackServer { request in
      request.path == "/start"
        ? .redirect(to: URL(string: "/end", relativeTo: nil)!, status: redirect.status)
        : .text("kept")
    }
    defer { server.stop() }
    let answer = try await transport.client(server.baseURL).send(
      Endpoint<String>(
        method: redirect.method, path: "start", body: .data(Data("payload".utf8))))
    #expect(answer == "kept")
    #expect(server.requests.last?.path == "/end")
    #expect(server.requests.last?.method == redirect.method.rawValue)
    #expect(server.requests.last?.body == Data("payload".utf8))
  }

  @Test(arguments: TransportKind.allCases)
  func anAppsOwnSecretHeadersStayBehindAtAnotherOrigin(_ transport: TransportKind) async throws {
    let other = try LoopbackServer { _ in .text("elsewhere") }
    defer { other.stop() }
    let server = try LoopbackServer { _ in .redirect(to: other.url("/in")) }
    defer { server.stop() }
    var configuration = APIClient.Configuration(headers: ["PRIVATE-TOKEN": "glpat-s3cret"])
    configuration.redaction.headers.formUnion(["private-token", "DPoP"])
    let client = transport.client(server.baseURL, configuration: configuration)
    let answer = try await client.send(
      Endpoint<String>(path: "start", headers: ["DPoP": "proof", "X-Plain": "kept"]))
    #expect(answer == "elsewhere")
    #expect(server.requests.first?.headers["private-token"] == "glpat-s3cret")
    let received = try #require(other.requests.first)
    #expect(received.headers["private-token"] == nil)
    #expect(received.headers["dpop"] == nil)
    #expect(received.headers["x-plain"] == "kept")
  }

  /// A default header of the client's own that the redaction does not name (a tenant key) stays
  /// home too, unless the configuration lists it as safe at every origin; the safe ones go on.
  @Test(arguments: TransportKind.allCases)
  func aClientsOwnDefaultHeaderStaysBehindAtAnotherOrigin(_ transport: TransportKind) async throws {
    let other = try LoopbackServer { _ in .text("elsewhere") }
    defer { other.stop() }
    let server = try LoopbackServer { _ in .redirect(to: other.url("/in")) }
    defer { server.stop() }
    var configuration = APIClient.Configuration(headers: [
      "X-Tenant-Key": "tenant-7f3a", "X-Client-Version": "4.2", "Accept-Language": "fr",
    ])
    configuration.crossOriginHeaders.insert("X-Client-Version")
    let client = transport.client(server.baseURL, configuration: configuration)
    #expect(try await client.send(Endpoint<String>(path: "start")) == "elsewhere")
    #expect(server.requests.first?.headers["x-tenant-key"] == "tenant-7f3a")
    let received = try #require(other.requests.first)
    #expect(received.headers["x-tenant-key"] == nil)
    #expect(received.headers["x-client-version"] == "4.2")
    #expect(received.headers["accept-language"] == "fr")
  }

  @Test(arguments: TransportKind.allCases)
  func endless307sWithABodyAreTooManyRedirects(_ transport: TransportKind) async throws {
    let server = try LoopbackServer { request in
      .redirect(to: URL(string: "/again\(request.path.count)")!, status: 307)
    }
    defer { server.stop() }
    let error = await #expect(throws: APIError.self) {
      _ = try await transport.client(server.baseURL).send(
        Endpoint<Data>(method: .post, path: "start", body: .data(Data("x".utf8)), decoding: .data))
    }
    #expect(error?.urlError?.code == .httpTooManyRedirects)
  }

  @Test(arguments: TransportKind.allCases)
  func aTrustedHostReceivesCredentialsAcrossOrigins(_ transport: TransportKind) async throws {
    let other = try LoopbackServer { _ in .text("cdn") }
    defer { other.stop() }
    // Same host, another port: another origin, but a trusted host.
    let server = try LoopbackServer { _ in .redirect(to: other.url("/asset")) }
    defer { server.stop() }
    let transport = transport.make(trustedRedirectHosts: ["127.0.0.1"])
    let client = APIClient(baseURL: server.baseURL, transport: transport)
    _ = try await client.send(
      Endpoint<String>(path: "start", headers: ["Authorization": "Bearer s3cret"]))
    #expect(other.requests.first?.headers["authorization"] == "Bearer s3cret")
  }

  @Test(arguments: TransportKind.allCases)
  func aTrustedHostReceivesTheBodyAfterA307(_ transport: TransportKind) async throws {
    let other = try LoopbackServer { _ in .text("stored") }
    defer { other.stop() }
    let server = try LoopbackServer { _ in .redirect(to: other.url("/upload"), status: 307) }
    defer { server.stop() }
    let transport = transport.make(trustedRedirectHosts: ["127.0.0.1"])
    let client = APIClient(baseURL: server.baseURL, transport: transport)
    let answer = try await client.send(
      Endpoint<String>(method: .put, path: "start", body: .data(Data("payload".utf8))))
    #expect(answer == "stored")
    #expect(other.requests.first?.method == "PUT")
    #expect(other.requests.first?.body == Data("payload".utf8))
  }
}

/// Buffered calls are bounded by default; streams are not. (Malformed answers are rows of the
/// fault matrix.)
@Suite(.timeLimit(.minutes(3))) struct DefaultSizeLimitTests {
  @Test(arguments: TransportKind.allCases)
  func bufferedCallsGetADefaultSizeLimitAndStreamsDoNot(_ transport: TransportKind) async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/x", .status(200))
    _ = try await client(stub).send(Endpoint<Data>(path: "x", decoding: .data))
    for try await _ in try await client(stub).stream(Endpoint<Data>(path: "x", decoding: .data)) {}
    #expect(
      await stub.requests.map(\.maximumResponseSize) == [
        APIClient.Configuration.defaultBufferedResponseLimit, nil,
      ])
    #expect(APIClient.Configuration.defaultBufferedResponseLimit == 100_000_000)
  }
}
