import ErrandStubs
import Foundation
import TestSupport
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Hostile probes of the cookie jar as the client wires it (`APIClient.Configuration.cookieJar`),
/// through the stub kit: redirects across sites, hostile `Set-Cookie` fields, printed forms, the
/// cache, shared exchanges and signing. Each asserts the safe behaviour (RFC 6265bis for cookies,
/// RFC 9110 for redirects, RFC 9111 for the cache), so a failure is a finding.
@Suite(.timeLimit(.minutes(3))) struct CookieJarWiringHostileTests {
  static let base = URL(string: "https://api.example.com/v1/")!
  static let appSecret = "APPCOOKIEVALUE7d1"
  static let jarSecret = "JARCOOKIEVALUE3f9"
  static let setSecret = "SETCOOKIEVALUE0b2"

  static func client(
    _ stub: StubTransport, jar: CookieJar?, headers: HTTPHeaders = [:],
    middleware: [any Middleware] = [], listeners: [any EventListener] = [],
    shares: Bool = false, base: URL = base
  ) -> APIClient {
    var configuration = APIClient.Configuration(headers: headers, middleware: middleware)
    configuration.cookieJar = jar
    configuration.eventListeners = listeners
    configuration.sharesInFlightRequests = shares
    return APIClient(baseURL: base, transport: stub, configuration: configuration)
  }

  static func host(_ name: String) -> RequestMatcher {
    RequestMatcher("host \(name)") { $0.url.host == name }
  }

  // MARK: Redirects across sites

  /// A→B, where B's redirect sets a cookie and sends the call on within B: the app's own
  /// `Cookie` (meant for A) stayed behind at the first hop, and must not come back at the
  /// second just because the field B's hop carries is not empty.
  @Test func theAppsCookieDoesNotReachAnotherSiteOnItsSecondHop() async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      Self.host("api.example.com"),
      .status(302, headers: ["Location": "https://evil.example.net/one"]))
    await stub.on(
      Self.host("evil.example.net") && .path("/one"),
      .status(302, headers: ["Location": "/two"]).settingCookies("tracker=1; Path=/"))
    await stub.on(Self.host("evil.example.net") && .path("/two"), .status(200))
    let jar = CookieJar()
    jar.store(["mine=\(Self.jarSecret)"], from: URL(string: "https://api.example.com/")!)
    // B set a cookie of its own before (on an earlier visit): its first hop carries it.
    jar.store(["theirs=1"], from: URL(string: "https://evil.example.net/")!)
    let client = Self.client(stub, jar: jar, headers: ["Cookie": "app=\(Self.appSecret)"])
    _ = try await client.response(for: Endpoint<Data>(path: "go"))
    let requests = await stub.requests
    #expect(requests.map(\.url.path) == ["/v1/go", "/one", "/two"])
    #expect(requests[1].sentCookies == ["theirs": "1"])
    #expect(requests[2].sentCookies == ["theirs": "1", "tracker": "1"])
  }

  /// A→B→A: neither the app's cookie nor A's jar cookies reach B; back at A, A's jar cookies
  /// are sent again, the app's own not (once a redirect has left the origin it stays behind for
  /// the rest of the chain).
  @Test func aToBToAKeepsEachSitesCookiesWithIt() async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      Self.host("api.example.com") && .path("/v1/start"),
      .status(302, headers: ["Location": "https://other.example.net/bounce"]))
    await stub.on(
      Self.host("other.example.net"),
      .status(302, headers: ["Location": "https://api.example.com/v1/back"])
        .settingCookies("theirs=2; Domain=api.example.com", "b=1"))
    await stub.on(Self.host("api.example.com") && .path("/v1/back"), .status(200))
    let jar = CookieJar()
    jar.store(["mine=\(Self.jarSecret)"], from: URL(string: "https://api.example.com/")!)
    let client = Self.client(stub, jar: jar, headers: ["Cookie": "app=\(Self.appSecret)"])
    _ = try await client.response(for: Endpoint<Data>(path: "start"))
    let requests = await stub.requests
    #expect(
      requests.map(\.url.host) == ["api.example.com", "other.example.net", "api.example.com"])
    #expect(requests[0].sentCookies == ["app": Self.appSecret, "mine": Self.jarSecret])
    #expect(requests[1].sentCookies == [:])
    // B's `Domain=api.example.com` is foreign to B: refused. A's own cookie comes back at A.
    #expect(requests[2].sentCookies == ["mine": Self.jarSecret])
    #expect(Set(jar.allCookies.map(\.name)) == ["mine", "b"])
  }

  /// A hop at a site under a public suffix cannot set a cookie for the suffix (nor for another
  /// site): the next site under the same suffix gets none.
  @Test func aHopCannotSetACookieForAPublicSuffixOrAnotherSite() async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      Self.host("api.example.com"),
      .status(302, headers: ["Location": "https://evil.github.io/x"]))
    await stub.on(
      Self.host("evil.github.io"),
      .status(302, headers: ["Location": "https://victim.github.io/y"])
        .settingCookies(
          "ps=1; Domain=github.io", "foreign=1; Domain=victim.github.io",
          "other=1; Domain=example.com", "own=1"))
    await stub.on(Self.host("victim.github.io"), .status(200))
    let jar = CookieJar()
    let client = Self.client(stub, jar: jar)
    _ = try await client.response(for: Endpoint<Data>(path: "go"))
    let requests = await stub.requests
    #expect(requests.last?.url.host == "victim.github.io")
    #expect(requests.last?.sentCookies == [:])
    #expect(jar.allCookies.map(\.name) == ["own"])
    #expect(jar.allCookies.first?.domain == "evil.github.io")
  }

  /// A hop at `evil.example.com` may set a cookie for its parent `example.com` (RFC 6265bis
  /// §5.7: the same site), which `api.example.com` then gets; but not one for its sibling.
  @Test func aHopSetsACookieForItsParentDomainOnlyNotItsSibling() async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      Self.host("evil.example.com"),
      .status(302, headers: ["Location": "https://api.example.com/v1/z"])
        .settingCookies("parent=1; Domain=example.com", "sibling=1; Domain=api.example.com"))
    await stub.on(Self.host("api.example.com"), .status(200))
    let jar = CookieJar()
    let client = Self.client(
      stub, jar: jar, base: try #require(URL(string: "https://evil.example.com/")))
    _ = try await client.response(for: Endpoint<Data>(path: "a"))
    #expect(await stub.requests.last?.sentCookies == ["parent": "1"])
    #expect(jar.allCookies.map(\.name) == ["parent"])
  }

  /// https→http is refused (RFC 9110 leaves it to the client; Errand never downgrades): no
  /// request goes out over plain HTTP, so no `Secure` cookie could either.
  @Test func aRedirectToPlainHTTPIsRefusedAndNoSecureCookieLeaves() async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      Self.host("api.example.com"),
      .status(302, headers: ["Location": "http://api.example.com/v1/plain"])
        .settingCookies("hop=1; Secure"))
    let jar = CookieJar()
    jar.store(["session=\(Self.jarSecret); Secure"], from: URL(string: "https://api.example.com/")!)
    let client = Self.client(stub, jar: jar)
    do {
      _ = try await client.response(for: Endpoint<Data>(path: "go"))
      Issue.record("the downgrade was followed")
    } catch let error as APIError {
      guard case .transport(let underlying) = error,
        let refusal = underlying as? RefusedRedirectError
      else {
        Issue.record("unexpected \(error)")
        return
      }
      #expect(refusal.reason == .downgradeToHTTP)
      #expect(printedForms(of: error).allSatisfy { !$0.contains(Self.jarSecret) })
    }
    #expect(await stub.requests.map(\.url.scheme) == ["https"])
  }

  /// An endless loop whose every hop sets a new cookie ends after the most redirects, with an
  /// error that says so, and the jar holds no more than its limit for the host.
  @Test func anEndlessRedirectLoopSettingCookiesEndsAndTheJarStaysBounded() async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      Self.host("api.example.com"),
      .handler { request, count in
        .status(302, headers: ["Location": "/v1/loop"]).settingCookies(
          "c\(count)=\(String(repeating: "x", count: 100)); Path=/",
          "d\(count)=1; Path=/")
      })
    let jar = CookieJar(limits: .init(cookiesPerDomain: 10))
    let client = Self.client(stub, jar: jar)
    do {
      _ = try await client.response(for: Endpoint<Data>(path: "loop"))
      Issue.record("the loop ended in an answer")
    } catch let error as APIError {
      guard case .transport(let underlying) = error, let urlError = underlying as? URLError else {
        Issue.record("unexpected \(error)")
        return
      }
      #expect(urlError.code == .httpTooManyRedirects)
    }
    #expect(await stub.requests.count == RedirectPolicy.maximumRedirects + 1)
    #expect(jar.allCookies.count == 10)
    // Each hop carried at most the jar's limit.
    #expect(await stub.requests.allSatisfy { $0.sentCookies.count <= 10 })
  }

  // MARK: Hostile Set-Cookie fields

  /// Thousands of `Set-Cookie` fields in one answer: stored within the per-domain limit, and
  /// the next request carries that many at most.
  @Test(.ownThread) func thousandsOfSetCookieFieldsInOneAnswerKeepTheJarsLimits() async throws {
    let stub = StubTransport()
    var answer = HTTPResponse(status: 200)
    for index in 0..<5000 {
      answer.headers.add("Set-Cookie", "k\(index)=\(index); Path=/")
    }
    await stub.on(.get, "/v1/flood", .response(answer))
    await stub.on(.get, "/v1/next", .status(200))
    let jar = CookieJar()
    let client = Self.client(stub, jar: jar)
    _ = try await client.response(for: Endpoint<Data>(path: "flood"))
    _ = try await client.response(for: Endpoint<Data>(path: "next"))
    #expect(jar.allCookies.count == jar.limits.cookiesPerDomain)
    // The most recently set are kept (each older one, never sent, was the least recently used).
    #expect(jar.allCookies.map(\.name).contains("k4999"))
    #expect(await stub.requests.last?.sentCookies.count == jar.limits.cookiesPerDomain)
  }

  /// `HTTPURLResponse` joins `Set-Cookie` fields with commas; splitting them again must not let
  /// a value set a cookie for another domain: each piece is still checked against the URL
  /// that answered. (A piece naming a `__Host-` cookie is a cookie of its own, as the server
  /// could have sent it: the joined form cannot tell them apart, as
  /// `SetCookie.fields(inCombined:)` says.)
  @Test func aCombinedSetCookieSplitCannotReachAnotherDomain() throws {
    let url = URL(string: "https://api.example.com/v1/x")!
    let combined =
      "pref=x, evil=1; Domain=other.example.net, ps=1; Domain=com, "
      + "ok=1; Expires=Wed, 21 Oct 2099 07:28:00 GMT"
    let head = try #require(
      HTTPURLResponse(
        url: url, statusCode: 200, httpVersion: "HTTP/1.1",
        headerFields: ["Set-Cookie": combined]))
    let response = HTTPResponse(head, body: Data())
    #expect(response.headers.values(for: "Set-Cookie").count == 4)
    let jar = CookieJar()
    let rejected = jar.store(response.headers.values(for: "Set-Cookie"), from: url)
    #expect(rejected.map(\.reason) == [.foreignDomain, .publicSuffix])
    #expect(jar.allCookies.map(\.name) == ["pref", "ok"])
    #expect(jar.cookieHeader(for: URL(string: "https://other.example.net/")!) == nil)
  }

  // MARK: Printed forms

  /// No cookie value, the app's, the jar's or one an answer sets, appears in any printed form:
  /// the request, its cURL form, the error, the log, the events.
  @Test func noCookieValueAppearsInAnyPrintedForm() async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/me",
      .status(500, body: Data("oops".utf8)).settingCookies("set=\(Self.setSecret); Path=/"))
    let jar = CookieJar()
    jar.store(["jar=\(Self.jarSecret)"], from: URL(string: "https://api.example.com/")!)
    let logged = Locked<[String]>([])
    let logging = LoggingMiddleware(level: .debug) { event in
      logged.withLock { $0.append("\(event) \(event.headers)") }
    }
    let listener = RecordingListener()
    let client = Self.client(
      stub, jar: jar, headers: ["Cookie": "app=\(Self.appSecret)"], middleware: [logging],
      listeners: [listener])
    var printed: [String] = []
    do {
      _ = try await client.response(for: Endpoint<Data>(path: "me"))
      Issue.record("a 500 was accepted")
    } catch let error as APIError {
      guard case .unacceptableStatus(let response) = error else {
        Issue.record("unexpected \(error)")
        return
      }
      #expect(response.status == 500)
      printed += printedForms(of: error) + printedForms(of: response)
    }
    let sent = try #require(await stub.requests.first)
    #expect(sent.sentCookies["jar"] == Self.jarSecret)
    printed += printedForms(of: sent) + [sent.cURLDescription]
    printed += printedForms(of: await listener.eventsOfOneCall())
    printed += logged.withLock { $0 }
    printed += printedForms(of: jar)
    for secret in [Self.appSecret, Self.jarSecret, Self.setSecret] {
      #expect(printed.allSatisfy { !$0.contains(secret) }, "\(secret) printed")
    }
  }

  /// A request no route matches: the stub's report names the cookies it sent, never their
  /// values, and the cookie matcher hides the value it expects.
  @Test func anUnmatchedRequestReportHidesCookieValues() async throws {
    let stub = StubTransport()
    await stub.on(.path("/v1/me") && .cookie("session", Self.setSecret), .status(200))
    let jar = CookieJar()
    jar.store(["session=\(Self.jarSecret)"], from: URL(string: "https://api.example.com/")!)
    let client = Self.client(stub, jar: jar)
    do {
      _ = try await client.response(for: Endpoint<Data>(path: "me"))
      Issue.record("the wrong cookie matched")
    } catch {
      for form in printedForms(of: error) {
        #expect(!form.contains(Self.jarSecret))
        #expect(!form.contains(Self.setSecret))
      }
    }
    let unmatched = await stub.unmatchedRequests
    #expect(unmatched.count == 1)
    #expect(printedForms(of: unmatched).allSatisfy { !$0.contains(Self.jarSecret) })
    #expect(!RequestMatcher.cookie("session", Self.setSecret).description.contains(Self.setSecret))
  }

  // MARK: Cache and sharing

  /// A cache hit after `jar.removeAll()` (sign-out) stores nothing: the cached answer kept no
  /// `Set-Cookie`, so the signed-out session does not come back.
  @Test func aCacheHitAfterRemoveAllResurrectsNoCookie() async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/public",
      .status(200, body: Data("hi".utf8), headers: ["Cache-Control": "max-age=600"])
        .settingCookies("session=\(Self.setSecret); Path=/"))
    let jar = CookieJar()
    let cache = CachingMiddleware(cache: HTTPCache(now: { Date() }))
    let client = Self.client(stub, jar: jar, middleware: [cache])
    _ = try await client.response(for: Endpoint<Data>(path: "public"))
    #expect(jar.allCookies.map(\.name) == ["session"])
    jar.removeAll()
    let again = try await client.response(for: Endpoint<Data>(path: "public"))
    #expect(again.value == Data("hi".utf8))
    #expect(await stub.requests.count == 1)
    #expect(jar.allCookies.isEmpty)
    #expect(!again.response.headers.contains("Set-Cookie"))
  }

  /// A revalidation in the background (stale-while-revalidate) after `jar.removeAll()` stores
  /// none of what its answer sets: the signed-out session does not come back; and it sends no
  /// cookie the jar no longer holds.
  @Test func aBackgroundRevalidationAfterRemoveAllResurrectsNoCookie() async throws {
    let clock = TestClock()
    let cache = HTTPCache()
    let stub = StubTransport(clock: clock) { request in
      guard request.headers["If-None-Match"] != nil else {
        return .status(
          200, body: Data("v1".utf8),
          headers: ["Cache-Control": "max-age=1, stale-while-revalidate=600", "ETag": "\"v1\""]
        ).settingCookies("session=\(Self.setSecret); Path=/")
      }
      return .status(304, headers: ["Cache-Control": "max-age=600", "ETag": "\"v1\""])
        .settingCookies("session=revived; Path=/", "other=revived; Path=/")
    }
    let jar = CookieJar()
    var configuration = APIClient.Configuration(
      timeout: nil, middleware: [CachingMiddleware(cache: cache)], clock: clock)
    configuration.cookieJar = jar
    let client = APIClient(baseURL: Self.base, transport: stub, configuration: configuration)
    let endpoint = Endpoint<Data>(path: "feed", decoding: .data)
    #expect(try await client.response(for: endpoint).response.cacheStatus == .miss)
    #expect(jar.allCookies.map(\.name) == ["session"])
    jar.removeAll()
    await clock.advance(by: .seconds(2))
    let stale = try await client.response(for: endpoint)
    #expect(stale.response.cacheStatus == .stale)
    #expect(stale.value == Data("v1".utf8))
    try #require(await cache.waitForRevalidations())
    let sent = await stub.requests
    try #require(sent.count == 2, "the revalidation did not reach the server")
    #expect(sent[1].headers["If-None-Match"] == "\"v1\"")
    #expect(sent[1].sentCookies == [:])
    #expect(jar.allCookies.isEmpty)
  }

  /// Two clients on one stub, each with its own jar: neither stores nor sends the other's.
  @Test func twoClientsSharingATransportKeepTheirJarsApart() async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/login",
      .handler { request, _ in
        .status(204).settingCookies("who=\(request.headers["X-User"] ?? "?"); Path=/")
      })
    await stub.on(.get, "/v1/me", .status(200))
    let alice = CookieJar()
    let bob = CookieJar()
    let aliceClient = Self.client(stub, jar: alice, headers: ["X-User": "alice"])
    let bobClient = Self.client(stub, jar: bob, headers: ["X-User": "bob"])
    _ = try await aliceClient.response(for: Endpoint<Data>(path: "login"))
    _ = try await bobClient.response(for: Endpoint<Data>(path: "login"))
    _ = try await aliceClient.response(for: Endpoint<Data>(path: "me"))
    _ = try await bobClient.response(for: Endpoint<Data>(path: "me"))
    let requests = await stub.requests
    #expect(requests.map(\.sentCookies) == [[:], [:], ["who": "alice"], ["who": "bob"]])
    #expect(alice.allCookies.map(\.value) == ["alice"])
    #expect(bob.allCookies.map(\.value) == ["bob"])
  }

  /// A call started after the jar changed (sign-out, another user's sign-in) does not join the
  /// exchange in flight for the old cookies: it gets its own answer.
  @Test func aSharedExchangeIsNeverJoinedWithOtherCookies() async throws {
    let latch = CookieProbeLatch()
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/me",
      .handler { request, _ in
        await latch.wait()
        return .status(200, body: Data((request.sentCookies["user"] ?? "nobody").utf8))
      })
    let jar = CookieJar()
    let origin = URL(string: "https://api.example.com/")!
    jar.store(["user=alice"], from: origin)
    let client = Self.client(stub, jar: jar, shares: true)
    let first = Task { try await client.send(Endpoint<Data>(path: "me")) }
    #expect(await Self.waitFor { await stub.requests.count == 1 })
    jar.removeAll()
    jar.store(["user=bob"], from: origin)
    let second = Task { try await client.send(Endpoint<Data>(path: "me")) }
    let separate = await Self.waitFor { await stub.requests.count == 2 }
    latch.open()
    #expect(separate)
    #expect(try await first.value == Data("alice".utf8))
    #expect(try await second.value == Data("bob".utf8))
  }

  /// Two calls with the same cookies share one exchange, and its cookies are stored once.
  @Test func aSharedExchangeStoresItsCookiesOnce() async throws {
    let latch = CookieProbeLatch()
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/me",
      .handler { _, _ in
        await latch.wait()
        return .status(200).settingCookies("seen=1; Path=/")
      })
    let jar = CookieJar()
    let client = Self.client(stub, jar: jar, shares: true)
    let first = Task { try await client.send(Endpoint<Data>(path: "me")) }
    let second = Task { try await client.send(Endpoint<Data>(path: "me")) }
    #expect(await Self.waitFor { await stub.requests.count == 1 })
    latch.open()
    _ = try await (first.value, second.value)
    #expect(await stub.requests.count <= 2)
    #expect(jar.allCookies.map(\.name) == ["seen"])
  }

  /// A `Cookie` field one endpoint sets is that call's only: the jar does not keep it, and the
  /// next call, to another endpoint, does not carry it.
  @Test func anEndpointsOwnCookieGoesWithItsCallOnly() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/a", .status(200))
    await stub.on(.get, "/v1/b", .status(200))
    let jar = CookieJar()
    let client = Self.client(stub, jar: jar)
    _ = try await client.response(
      for: Endpoint<Data>(path: "a", headers: ["Cookie": "scoped=\(Self.appSecret)"]))
    _ = try await client.response(for: Endpoint<Data>(path: "b"))
    #expect(await stub.requests.map(\.sentCookies) == [["scoped": Self.appSecret], [:]])
    #expect(jar.allCookies.isEmpty)
  }

  /// Hundreds of calls at once, each answer setting a cookie of its own and each request reading
  /// the jar: nothing crashes, every call ends, and the jar keeps its per-domain limit.
  @Test func concurrentCallsKeepTheJarConsistentAndBounded() async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/n", .handler { _, count in .status(200).settingCookies("c\(count)=1; Path=/") })
    let jar = CookieJar()
    let client = Self.client(stub, jar: jar)
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<300 {
        group.addTask { _ = try await client.response(for: Endpoint<Data>(path: "n")) }
      }
      try await group.waitForAll()
    }
    #expect(await stub.requests.count == 300)
    #expect(jar.allCookies.count == jar.limits.cookiesPerDomain)
    #expect(await stub.requests.allSatisfy { $0.sentCookies.count <= jar.limits.cookiesPerDomain })
  }

  // MARK: Signing

  /// Adds a signature over every header (the `Cookie` field included), with a secret key.
  struct HeaderSigner: RequestSigner, CustomStringConvertible {
    static let key = "SIGNINGKEY5c0"
    func sign(_ request: HTTPRequest, at date: Date) async throws -> HTTPRequest {
      var request = request
      let canonical = request.headers.fields.map { "\($0.name.lowercased()):\($0.value)" }
        .sorted().joined(separator: ",")
      let mac = RequestSigning.hmacSHA256(key: Data(Self.key.utf8), Data(canonical.utf8))
      request.headers["X-Signature"] = mac.base64EncodedString()
      return request
    }
    var description: String { "HeaderSigner" }
  }

  /// A signer that fails, its error naming nothing secret.
  struct FailingSigner: RequestSigner {
    struct Failure: Error, CustomStringConvertible {
      var description: String { "the signing key is unavailable" }
    }
    func sign(_ request: HTTPRequest, at date: Date) async throws -> HTTPRequest {
      throw Failure()
    }
  }

  /// The signature stays home when a redirect leaves the origin. A redirect within the origin
  /// is not signed again (the transport follows it): it carries the first request's signature,
  /// though its `Cookie` field changed, as ``SigningMiddleware`` says.
  @Test func aSignatureStaysHomeAndAHopWithinTheOriginIsNotSignedAgain() async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      Self.host("api.example.com") && .path("/v1/a"),
      .status(302, headers: ["Location": "/v1/b"]).settingCookies("hop=1; Path=/"))
    await stub.on(
      Self.host("api.example.com") && .path("/v1/b"),
      .status(302, headers: ["Location": "https://other.example.net/c"]))
    await stub.on(Self.host("other.example.net"), .status(200))
    let client = Self.client(
      stub, jar: CookieJar(), headers: ["Cookie": "app=\(Self.appSecret)"],
      middleware: [SigningMiddleware(HeaderSigner())])
    _ = try await client.response(for: Endpoint<Data>(path: "a"))
    let requests = await stub.requests
    #expect(requests.count == 3)
    let signature = try #require(requests[0].headers["X-Signature"])
    #expect(requests[1].headers["X-Signature"] == signature)
    #expect(requests[1].sentCookies == ["app": Self.appSecret, "hop": "1"])
    #expect(requests[2].headers["X-Signature"] == nil)
    #expect(requests[2].sentCookies == [:])
    #expect(requests[0].redaction.hidesHeader("X-Signature"))
    #expect(printedForms(of: requests[0]).allSatisfy { !$0.contains(signature) })
  }

  /// A signer that throws fails the call with its own error, and nothing printed of it shows a
  /// cookie; nothing was sent.
  @Test func aSignerThatThrowsFailsTheCallShowingNoCookie() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/me", .status(200))
    let jar = CookieJar()
    jar.store(["jar=\(Self.jarSecret)"], from: URL(string: "https://api.example.com/")!)
    let client = Self.client(
      stub, jar: jar, headers: ["Cookie": "app=\(Self.appSecret)"],
      middleware: [SigningMiddleware(FailingSigner())])
    do {
      _ = try await client.response(for: Endpoint<Data>(path: "me"))
      Issue.record("an unsigned request was sent")
    } catch {
      let underlying: any Error
      if case .transport(let inner) = error as? APIError {
        underlying = inner
      } else {
        underlying = error
      }
      #expect(underlying is FailingSigner.Failure)
      for form in printedForms(of: error) {
        #expect(!form.contains(Self.jarSecret))
        #expect(!form.contains(Self.appSecret))
      }
    }
    #expect(await stub.requests.isEmpty)
  }

  /// A next page at an origin the app did not choose (a call that withholds the client's
  /// secrets): not signed, without the app's own `Cookie`, with that site's jar cookies only;
  /// through a cache too.
  @Test(arguments: [false, true])
  func aCallThatWithholdsSecretsIsNotSignedAndSendsNoAppCookie(cached: Bool) async throws {
    let stub = StubTransport()
    await stub.on(.get, "/page2", .status(200))
    let jar = CookieJar()
    jar.store(["mine=\(Self.jarSecret)"], from: URL(string: "https://api.example.com/")!)
    jar.store(["theirs=1"], from: URL(string: "https://pages.example.net/")!)
    var middleware: [any Middleware] = [SigningMiddleware(HeaderSigner())]
    if cached { middleware.append(CachingMiddleware(cache: HTTPCache(now: { Date() }))) }
    let client = Self.client(
      stub, jar: jar, headers: ["Cookie": "app=\(Self.appSecret)"], middleware: middleware)
    var next = Endpoint<Data>(path: "")
    next.url = URL(string: "https://pages.example.net/page2")
    next.withholdsSecrets = true
    _ = try await client.response(for: next)
    let sent = try #require(await stub.requests.first)
    #expect(sent.url.host == "pages.example.net")
    #expect(sent.headers["X-Signature"] == nil)
    #expect(sent.sentCookies == ["theirs": "1"])
  }

  /// A signed call that fails, by its status or in the transport: no printed form of the error
  /// shows the signature, the app's cookie or the jar's.
  @Test(arguments: [false, true])
  func aFailedSignedCallPrintsNoSignatureOrCookie(inTransport: Bool) async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/me",
      inTransport ? .error(URLError(.networkConnectionLost)) : .status(503))
    let jar = CookieJar()
    jar.store(["jar=\(Self.jarSecret)"], from: URL(string: "https://api.example.com/")!)
    let client = Self.client(
      stub, jar: jar, headers: ["Cookie": "app=\(Self.appSecret)"],
      middleware: [SigningMiddleware(HeaderSigner())])
    var printed: [String] = []
    do {
      _ = try await client.response(for: Endpoint<Data>(path: "me"))
      Issue.record("the call succeeded")
    } catch let error as APIError {
      switch error {
      case .transport(let underlying):
        #expect((underlying as? URLError)?.code == .networkConnectionLost)
      case .unacceptableStatus(let response): #expect(response.status == 503)
      default: Issue.record("unexpected \(error)")
      }
      printed = printedForms(of: error)
    }
    let sent = try #require(await stub.requests.first)
    let signature = try #require(sent.headers["X-Signature"])
    for secret in [signature, Self.appSecret, Self.jarSecret] {
      #expect(printed.allSatisfy { !$0.contains(secret) }, "\(secret) printed")
    }
  }

  /// A `304` that revalidates in the caller's call sets a cookie: stored (RFC 6265bis §5.6
  /// applies to every answer), though the cache keeps no `Set-Cookie`.
  @Test func aForegroundRevalidationsCookieIsStored() async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/feed",
      .handler { request, _ in
        guard request.headers["If-None-Match"] != nil else {
          return .status(
            200, body: Data("v1".utf8), headers: ["Cache-Control": "no-cache", "ETag": "\"v1\""])
        }
        return .status(304, headers: ["ETag": "\"v1\""]).settingCookies("rotated=2; Path=/")
      })
    let jar = CookieJar()
    let client = Self.client(
      stub, jar: jar, middleware: [CachingMiddleware(cache: HTTPCache(now: { Date() }))])
    _ = try await client.response(for: Endpoint<Data>(path: "feed"))
    let again = try await client.response(for: Endpoint<Data>(path: "feed"))
    #expect(again.value == Data("v1".utf8))
    #expect(await stub.requests.count == 2)
    #expect(jar.allCookies.map { "\($0.name)=\($0.value)" } == ["rotated=2"])
  }

  /// The app's `Cookie` field spelled in lower case, in the client's and the endpoint's headers:
  /// one field goes out, the app's pairs first, the jar's after (a name the app gives wins). The
  /// endpoint's field replaces the client's, as an endpoint's header does any of the same name.
  @Test func theAppsCookieFieldsInAnyCaseBecomeOneField() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/me", .status(200))
    let jar = CookieJar()
    jar.store(["a=jar", "b=jar"], from: URL(string: "https://api.example.com/")!)
    let client = Self.client(stub, jar: jar, headers: ["cookie": "a=client"])
    _ = try await client.response(
      for: Endpoint<Data>(path: "me", headers: ["COOKIE": "c=endpoint"]))
    let sent = try #require(await stub.requests.first)
    let fields = sent.headers.fields.filter { $0.name.lowercased() == "cookie" }
    #expect(fields.count == 1)
    #expect(fields.first?.value.hasPrefix("c=endpoint; ") == true)
    #expect(sent.sentCookies == ["a": "jar", "b": "jar", "c": "endpoint"])
  }

  /// Recording a cassette through an upstream that follows redirects: the redirect's cookie is
  /// stored in the client's jar and goes with the next hop, as it does without the cassette.
  @Test func aCassetteRecordingKeepsTheRedirectsCookies() async throws {
    let file = FileManager.default.temporaryDirectory
      .appending(path: "errand-cookie-cassette-\(UUID().uuidString).json")
    defer { try? FileManager.default.removeItem(at: file) }
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      .get, "/v1/login",
      .status(302, headers: ["Location": "/v1/home"]).settingCookies("hop=1; Path=/"))
    await stub.on(.get, "/v1/home", .status(200))
    let jar = CookieJar()
    var configuration = APIClient.Configuration()
    configuration.cookieJar = jar
    let client = APIClient(
      baseURL: Self.base, transport: CassetteTransport(url: file, mode: .all, upstream: stub),
      configuration: configuration)
    #expect(try await client.response(for: Endpoint<Data>(path: "login")).response.status == 200)
    #expect(await stub.requests.map(\.sentCookies) == [[:], ["hop": "1"]])
    #expect(jar.allCookies.map(\.name) == ["hop"])
  }

  // MARK: Exchange.cookieField from a transport of one's own

  /// A transport of one's own that follows a redirect and passes the headers it keeps: the
  /// app's cookie goes on only while the field it proposes still carries it; a field holding
  /// only another site's jar cookies does not bring it back.
  @Test func cookieFieldFromAnOwnTransportAddsTheAppsCookieOnlyWhereItWasKept() {
    let jar = CookieJar()
    jar.store(["theirs=1"], from: URL(string: "https://other.example.net/")!)
    jar.store(["mine=1"], from: URL(string: "https://api.example.com/")!)
    var exchange = Exchange()
    exchange.cookieJar = jar
    exchange.appCookieField = "app=\(Self.appSecret)"
    let other = URL(string: "https://other.example.net/next")!
    let home = URL(string: "https://api.example.com/next")!
    // The other site's field, as the previous hop carried it: not the app's.
    #expect(
      exchange.cookieField(forRedirectTo: other, proposed: ["Cookie": "theirs=1"]) == "theirs=1")
    #expect(exchange.cookieField(forRedirectTo: other, proposed: [:]) == "theirs=1")
    // The app's field, kept within its origin.
    #expect(
      exchange.cookieField(
        forRedirectTo: home, proposed: ["Cookie": "app=\(Self.appSecret); mine=1"])
        == "app=\(Self.appSecret); mine=1")
    // Outside any client: the proposed field as it is.
    #expect(Exchange().cookieField(forRedirectTo: other, proposed: ["Cookie": "x=1"]) == "x=1")
    Exchange().receivedCookies(["Set-Cookie": "x=1"], from: other)
  }

  // MARK: Helpers

  /// Wait until `condition` holds, polled, however long the machine takes: a wait that never
  /// ends is ended by the suite's time limit, never by a wall-clock bound here.
  static func waitFor(_ condition: @Sendable () async -> Bool) async -> Bool {
    while !(await condition()) {
      try? await Task.sleep(for: .milliseconds(1))
    }
    return true
  }
}

/// Holds every task that waits until it is opened, then lets all through.
final class CookieProbeLatch: Sendable {
  private let state = Locked<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>(
    (false, []))

  func wait() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let now = state.withLock { state -> Bool in
        if state.open { return true }
        state.waiters.append(continuation)
        return false
      }
      if now { continuation.resume() }
    }
  }

  func open() {
    let waiters = state.withLock { state in
      state.open = true
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume() }
  }
}
