import Errand
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// Hostile probes of the client's cookie jar over real sockets, on every transport: two
/// loopback servers are two sites (`127.0.0.1` and `localhost`, each bound to 127.0.0.1, port 0),
/// and each probe asserts what RFC 6265bis and RFC 9110 ask, the same on each transport.
@Suite(.timeLimit(.minutes(3))) struct CookieJarWiringSocketHostileTests {
  static let appSecret = "APPCOOKIEVALUE7d1"
  static let jarSecret = "JARCOOKIEVALUE3f9"
  static let token = "Bearer TOKENVALUE9a4"

  /// `server`'s URL for `path` at the host name `localhost`: another site than `127.0.0.1`.
  static func other(_ server: LoopbackServer, _ path: String) -> URL {
    URL(string: "http://localhost:\(server.port)\(path)")!
  }

  static func answer(redirectingTo location: URL, status: Int = 302, cookies: [String] = [])
    -> ScriptedResponse
  {
    var answer = ScriptedResponse.redirect(to: location, status: status)
    answer.headers += cookies.map { ("Set-Cookie", $0) }
    return answer
  }

  static func client(
    _ transport: TransportKind, _ base: URL, jar: CookieJar, headers: HTTPHeaders = [:]
  ) -> APIClient {
    var configuration = APIClient.Configuration(headers: headers)
    configuration.cookieJar = jar
    return transport.client(base, configuration: configuration)
  }

  /// A→B→A: B gets neither the app's cookie nor A's; back at A, A's jar cookies only.
  @Test(arguments: TransportKind.allCases)
  func aToBToAKeepsEachSitesCookiesWithIt(_ transport: TransportKind) async throws {
    let back = Locked<URL?>(nil)
    let b = try LoopbackServer { _ in
      Self.answer(redirectingTo: back.withLock { $0 }!, cookies: ["fromB=1"])
    }
    defer { b.stop() }
    let a = try LoopbackServer { request in
      request.path == "/start"
        ? Self.answer(redirectingTo: Self.other(b, "/bounce"), cookies: ["fromA=1"])
        : .text(request.headers["Cookie"] ?? "")
    }
    defer { a.stop() }
    back.withLock { $0 = a.url("/back") }
    let jar = CookieJar()
    jar.store(["mine=\(Self.jarSecret)"], from: a.url("/"))
    let client = Self.client(
      transport, a.baseURL, jar: jar, headers: ["Cookie": "app=\(Self.appSecret)"])
    let echoed = try await client.send(Endpoint<String>(path: "start"))
    #expect(b.requests.map(\.path) == ["/bounce"])
    #expect(b.requests.first?.headers["Cookie"] == nil)
    #expect(a.requests.map(\.path) == ["/start", "/back"])
    #expect(a.requests.first?.headers["Cookie"] == "app=\(Self.appSecret); mine=\(Self.jarSecret)")
    #expect(echoed == "mine=\(Self.jarSecret); fromA=1")
    #expect(Set(jar.allCookies.map(\.domain)) == ["127.0.0.1", "localhost"])
  }

  /// A→B, then within B after B's redirect set a cookie: the app's cookie, left behind at the
  /// first hop, is not sent to B at the second.
  @Test(arguments: TransportKind.allCases)
  func theAppsCookieDoesNotReachAnotherSiteOnItsSecondHop(_ transport: TransportKind)
    async throws
  {
    let b = try LoopbackServer { request in
      request.path == "/one"
        ? Self.answer(redirectingTo: URL(string: "/two")!, cookies: ["tracker=1; Path=/"])
        : .text(request.headers["Cookie"] ?? "")
    }
    defer { b.stop() }
    let a = try LoopbackServer { _ in Self.answer(redirectingTo: Self.other(b, "/one")) }
    defer { a.stop() }
    let jar = CookieJar()
    jar.store(["mine=\(Self.jarSecret)"], from: a.url("/"))
    // B set a cookie of its own before (on an earlier visit): its first hop carries it.
    jar.store(["theirs=1"], from: Self.other(b, "/"))
    let client = Self.client(
      transport, a.baseURL, jar: jar, headers: ["Cookie": "app=\(Self.appSecret)"])
    let echoed = try await client.send(Endpoint<String>(path: "go"))
    #expect(b.requests.map(\.path) == ["/one", "/two"])
    #expect(b.requests.first?.headers["Cookie"] == "theirs=1")
    #expect(echoed == "theirs=1; tracker=1")
  }

  /// A POST with a body, the app's cookie and a token, sent by a `303` to another site as a
  /// `GET` (its secrets left behind), then redirected by a `307` within that site: the `307`
  /// keeps the method of the request it answers, a `GET` without a body (RFC 9110 §15.4.8), so
  /// the other site gets neither the body nor the secrets.
  @Test(arguments: TransportKind.allCases)
  func aTemporaryRedirectAfterASeeOtherNeverResendsTheOriginalPost(_ transport: TransportKind)
    async throws
  {
    let b = try LoopbackServer { request in
      request.path == "/see"
        ? Self.answer(redirectingTo: URL(string: "/again")!, status: 307)
        : .text("landed")
    }
    defer { b.stop() }
    let a = try LoopbackServer { _ in
      Self.answer(redirectingTo: Self.other(b, "/see"), status: 303)
    }
    defer { a.stop() }
    let client = Self.client(
      transport, a.baseURL, jar: CookieJar(),
      headers: ["Cookie": "app=\(Self.appSecret)", "Authorization": Self.token])
    let body = Data("secret-form=\(Self.jarSecret)".utf8)
    let answer = try await client.send(
      Endpoint<String>(method: .post, path: "post", body: .data(body)))
    #expect(answer == "landed")
    #expect(a.requests.map(\.method) == ["POST"])
    #expect(b.requests.map(\.path) == ["/see", "/again"])
    for request in b.requests {
      #expect(request.method == "GET")
      #expect(request.body.isEmpty)
      #expect(request.headers["Authorization"] == nil)
      #expect(request.headers["Cookie"] == nil)
    }
  }

  /// Adds `X-Signature` over every header (the `Cookie` field included).
  struct HeaderSigner: RequestSigner {
    func sign(_ request: HTTPRequest, at date: Date) async throws -> HTTPRequest {
      var request = request
      let canonical = request.headers.fields.map { "\($0.name.lowercased()):\($0.value)" }
        .sorted().joined(separator: ",")
      let mac = RequestSigning.hmacSHA256(key: Data("SIGNINGKEY5c0".utf8), Data(canonical.utf8))
      request.headers["X-Signature"] = mac.base64EncodedString()
      return request
    }
  }

  /// A signed call redirected to another site: the signature stays home on every transport
  /// (URLSession's redirect delegate reads what the signer added from the request's redaction).
  @Test(arguments: TransportKind.allCases)
  func aSignatureAndTheAppsCookieStayHomeOnARedirect(_ transport: TransportKind) async throws {
    let b = try LoopbackServer { _ in .text("b") }
    defer { b.stop() }
    let a = try LoopbackServer { _ in Self.answer(redirectingTo: Self.other(b, "/landing")) }
    defer { a.stop() }
    var configuration = APIClient.Configuration(
      headers: ["Cookie": "app=\(Self.appSecret)"], middleware: [SigningMiddleware(HeaderSigner())])
    configuration.cookieJar = CookieJar()
    let client = transport.client(a.baseURL, configuration: configuration)
    #expect(try await client.send(Endpoint<String>(path: "go")) == "b")
    #expect(a.requests.first?.headers["X-Signature"] != nil)
    #expect(b.requests.first?.headers["X-Signature"] == nil)
    #expect(b.requests.first?.headers["Cookie"] == nil)
  }

  /// A POST that a `307` sends again within its origin, the redirect setting a cookie: the
  /// request sent again carries its body, the app's cookie and the new one, on every transport.
  @Test(arguments: TransportKind.allCases)
  func aPostResentWithinItsOriginCarriesTheRedirectsCookie(_ transport: TransportKind)
    async throws
  {
    let server = try LoopbackServer { request in
      request.path == "/post"
        ? Self.answer(redirectingTo: URL(string: "/moved")!, status: 307, cookies: ["hop=1"])
        : .text(request.headers["Cookie"] ?? "")
    }
    defer { server.stop() }
    let client = Self.client(
      transport, server.baseURL, jar: CookieJar(), headers: ["Cookie": "app=\(Self.appSecret)"])
    let echoed = try await client.send(
      Endpoint<String>(method: .post, path: "post", body: .data(Data("form".utf8))))
    #expect(echoed == "app=\(Self.appSecret); hop=1")
    #expect(server.requests.map(\.method) == ["POST", "POST"])
    #expect(server.requests.map(\.body) == [Data("form".utf8), Data("form".utf8)])
  }

  /// A value with a comma in one `Set-Cookie` field (which RFC 6265 does not allow, and RFC
  /// 6265bis reads as part of the value): libcurl hands the field over as it came, one cookie;
  /// URLSession joins fields with commas, so Errand cannot tell it from two, and reads two, as
  /// `APIClient.Configuration.cookieJar` says. Either way no cookie reaches another site.
  @Test(arguments: TransportKind.allCases)
  func aCommaInACookieValueIsReadAsEachTransportCan(_ transport: TransportKind) async throws {
    let server = try LoopbackServer { _ in
      var answer = ScriptedResponse.text("")
      answer.headers.append(("Set-Cookie", "pref=x, injected=1; Domain=example.com"))
      return answer
    }
    defer { server.stop() }
    let jar = CookieJar()
    _ = try await Self.client(transport, server.baseURL, jar: jar).send(
      Endpoint<String>(path: "set"))
    let stored = jar.allCookies.map { "\($0.name)=\($0.value)" }
    switch transport {
    case .urlSession: #expect(stored == ["pref=x"])
    default: #expect(stored.isEmpty)
    }
  }

  /// A redirect to a trusted host: the app's own cookie goes with it (as its other secrets do),
  /// A's jar cookies do not (they are A's), and the trusted host's own jar cookies join them.
  @Test(arguments: TransportKind.allCases)
  func aTrustedHostGetsTheAppsCookieButNotTheFirstSitesJarCookies(_ transport: TransportKind)
    async throws
  {
    let t = try LoopbackServer { request in .text(request.headers["Cookie"] ?? "") }
    defer { t.stop() }
    let a = try LoopbackServer { _ in Self.answer(redirectingTo: Self.other(t, "/landing")) }
    defer { a.stop() }
    let jar = CookieJar()
    jar.store(["mine=\(Self.jarSecret)"], from: a.url("/"))
    jar.store(["trusted=1"], from: Self.other(t, "/"))
    var configuration = APIClient.Configuration(headers: ["Cookie": "app=\(Self.appSecret)"])
    configuration.cookieJar = jar
    let client = APIClient(
      baseURL: a.baseURL, transport: transport.make(trustedRedirectHosts: ["localhost"]),
      configuration: configuration)
    let echoed = try await client.send(Endpoint<String>(path: "go"))
    #expect(echoed == "app=\(Self.appSecret); trusted=1")
  }

  /// An endless loop whose every hop sets a new cookie ends with "too many redirects" on every
  /// transport, and the jar keeps its limit.
  @Test(arguments: TransportKind.allCases)
  func anEndlessRedirectLoopSettingCookiesEnds(_ transport: TransportKind) async throws {
    let count = Locked(0)
    let server = try LoopbackServer { _ in
      let hop = count.withLock {
        $0 += 1
        return $0
      }
      return Self.answer(
        redirectingTo: URL(string: "/loop")!, cookies: ["c\(hop)=1; Path=/", "d\(hop)=1; Path=/"])
    }
    defer { server.stop() }
    let jar = CookieJar(limits: .init(cookiesPerDomain: 10))
    let client = Self.client(transport, server.baseURL, jar: jar)
    do {
      _ = try await client.send(Endpoint<String>(path: "loop"))
      Issue.record("the loop ended in an answer")
    } catch let error as APIError {
      guard case .transport(let underlying) = error, let urlError = underlying as? URLError else {
        Issue.record("unexpected \(error)")
        return
      }
      #expect(urlError.code == .httpTooManyRedirects)
    }
    #expect(server.requests.count <= 21)
    #expect(jar.allCookies.count == 10)
    #expect(
      server.requests.allSatisfy { ($0.headers["Cookie"] ?? "").split(separator: ";").count <= 10 })
  }

  /// A thousand `Set-Cookie` fields in one answer (URLSession joins them in one value, which is
  /// split again): the jar keeps its per-domain limit on every transport.
  @Test(.ownThread, arguments: TransportKind.allCases)
  func aThousandSetCookieFieldsKeepTheJarsLimit(_ transport: TransportKind) async throws {
    let server = try LoopbackServer { request in
      guard request.path == "/flood" else { return .text(request.headers["Cookie"] ?? "") }
      var answer = ScriptedResponse.text("flood")
      answer.headers += (0..<1000).map {
        ("Set-Cookie", "k\($0)=v\($0); Expires=Wed, 21 Oct 2099 07:28:00 GMT; Path=/")
      }
      return answer
    }
    defer { server.stop() }
    let jar = CookieJar()
    let client = Self.client(transport, server.baseURL, jar: jar)
    #expect(try await client.send(Endpoint<String>(path: "flood")) == "flood")
    #expect(jar.allCookies.count == jar.limits.cookiesPerDomain)
    #expect(jar.allCookies.allSatisfy { $0.value == "v" + $0.name.dropFirst() })
    let echoed = try await client.send(Endpoint<String>(path: "next"))
    #expect(echoed.split(separator: ";").count == jar.limits.cookiesPerDomain)
  }
}
