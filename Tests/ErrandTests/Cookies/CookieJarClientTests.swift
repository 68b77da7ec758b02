import Errand
import ErrandStubs
import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A client with a cookie jar: what answers set is stored, and every request, a redirect's too,
/// carries the jar's cookies for its URL, through the stub kit.
@Suite(.timeLimit(.minutes(3))) struct CookieJarClientTests {
  static let base = URL(string: "https://api.example.com/v1/")!

  static func client(
    _ stub: StubTransport, jar: CookieJar?, headers: HTTPHeaders = [:],
    middleware: [any Middleware] = [], base: URL = base
  ) -> APIClient {
    var configuration = APIClient.Configuration(headers: headers, middleware: middleware)
    configuration.cookieJar = jar
    return APIClient(baseURL: base, transport: stub, configuration: configuration)
  }

  @Test func aCookieAnAnswerSetsGoesWithTheNextRequest() async throws {
    let stub = StubTransport()
    await stub.on(.post, "/v1/login", .status(204).settingCookies("session=abc; Path=/; Secure"))
    await stub.on(.path("/v1/me") && .cookie("session", "abc"), .status(200, body: Data("me".utf8)))
    let jar = CookieJar()
    let client = Self.client(stub, jar: jar)
    _ = try await client.response(for: Endpoint<Data>(method: .post, path: "login"))
    let me = try await client.response(for: Endpoint<Data>(path: "me"))
    #expect(me.value == Data("me".utf8))
    let requests = await stub.requests
    #expect(requests.map(\.sentCookies) == [[:], ["session": "abc"]])
    #expect(jar.allCookies.map(\.name) == ["session"])
  }

  @Test func withoutAJarNoCookieIsKept() async throws {
    let stub = StubTransport()
    await stub.on(.post, "/v1/login", .status(204).settingCookies("session=abc; Path=/"))
    await stub.on(.get, "/v1/me", .status(200))
    let client = Self.client(stub, jar: nil)
    _ = try await client.response(for: Endpoint<Data>(method: .post, path: "login"))
    _ = try await client.response(for: Endpoint<Data>(path: "me"))
    #expect(await stub.requests.map { $0.headers.contains("Cookie") } == [false, false])
  }

  @Test func theAppsOwnCookieIsKeptAndWinsOverTheJarsOfTheSameName() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/me", .status(200))
    let jar = CookieJar()
    jar.store(["session=jar", "theme=dark"], from: URL(string: "https://api.example.com/")!)
    let client = Self.client(stub, jar: jar, headers: ["Cookie": "session=mine; lang=en"])
    _ = try await client.response(for: Endpoint<Data>(path: "me"))
    let sent = try #require(await stub.requests.first)
    #expect(sent.headers.values(for: "Cookie") == ["session=mine; lang=en; theme=dark"])
  }

  @Test func aRedirectsCookiesAreStoredAndSentToTheNextHop() async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      .get, "/v1/login",
      .status(302, headers: ["Location": "/v1/home"]).settingCookies("hop=1; Path=/v1"))
    await stub.on(.path("/v1/home") && .cookie("hop", "1"), .status(200))
    let client = Self.client(stub, jar: CookieJar())
    let answer = try await client.response(for: Endpoint<Data>(path: "login"))
    #expect(answer.response.status == 200)
    #expect(await stub.requests.map(\.sentCookies) == [[:], ["hop": "1"]])
  }

  @Test func noCookieCrossesToAnotherSiteOnARedirect() async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      .get, "/v1/go",
      .status(302, headers: ["Location": "https://other.example.net/landing"])
        .settingCookies("stolen=1; Domain=other.example.net", "here=1"))
    await stub.on(.get, "/landing", .status(200))
    let jar = CookieJar()
    jar.store(["theirs=1"], from: URL(string: "https://other.example.net/")!)
    let client = Self.client(stub, jar: jar, headers: ["Cookie": "app=secret"])
    _ = try await client.response(for: Endpoint<Data>(path: "go"))
    let requests = await stub.requests
    #expect(requests.map(\.url.host) == ["api.example.com", "other.example.net"])
    // The app's own cookie and api.example.com's stay behind; the other site gets its own only.
    #expect(requests.last?.sentCookies == ["theirs": "1"])
    #expect(Set(jar.allCookies.map(\.name)) == ["theirs", "here"])
  }

  @Test(arguments: [
    ("http://api.example.com/v1/", false), ("https://api.example.com/v1/", true),
  ])
  func aSecureCookieGoesOverHTTPSOnly(base: String, sent: Bool) async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/me", .status(200))
    let jar = CookieJar()
    jar.store(["session=abc; Secure"], from: URL(string: "https://api.example.com/")!)
    let client = Self.client(stub, jar: jar, base: try #require(URL(string: base)))
    _ = try await client.response(for: Endpoint<Data>(path: "me"))
    #expect(await stub.requests.first?.sentCookies == (sent ? ["session": "abc"] : [:]))
  }

  @Test func aCookieExpiresOnTheJarsClock() async throws {
    let now = Locked(Date(timeIntervalSince1970: 1_000_000))
    let jar = CookieJar(now: { now.withLock { $0 } })
    let stub = StubTransport()
    await stub.on(.get, "/v1/login", .status(200).settingCookies("session=abc; Max-Age=60"))
    await stub.on(.get, "/v1/me", .status(200))
    let client = Self.client(stub, jar: jar)
    _ = try await client.response(for: Endpoint<Data>(path: "login"))
    _ = try await client.response(for: Endpoint<Data>(path: "me"))
    now.withLock { $0 += 61 }
    _ = try await client.response(for: Endpoint<Data>(path: "me"))
    #expect(await stub.requests.map(\.sentCookies) == [[:], ["session": "abc"], [:]])
  }

  @Test func everyRetryCarriesTheJarsCookiesAsTheyAreThen() async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/me",
      .sequence([
        .status(503).settingCookies("attempt=1"), .status(503).settingCookies("attempt=2"),
        .status(200),
      ]))
    let client = Self.client(
      stub, jar: CookieJar(),
      middleware: [
        RetryMiddleware(policy: RetryPolicy(maxAttempts: 3, baseDelay: .zero, jitter: .none))
      ])
    _ = try await client.response(for: Endpoint<Data>(path: "me"))
    #expect(await stub.requests.map(\.sentCookies) == [[:], ["attempt": "1"], ["attempt": "2"]])
  }

  @Test func aCachedAnswerStoresNoCookieAndTheCacheSeesTheJars() async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/me",
      .handler { request, _ in
        let user = request.sentCookies["user"] ?? "nobody"
        return .status(
          200, body: Data(user.utf8),
          headers: ["Cache-Control": "max-age=600", "Vary": "Cookie"]
        ).settingCookies("seen=\(user)")
      })
    let jar = CookieJar()
    let cache = CachingMiddleware(cache: HTTPCache(now: { Date() }))
    let client = Self.client(stub, jar: jar, middleware: [cache])
    let origin = URL(string: "https://api.example.com/")!
    jar.store(["user=alice"], from: origin)
    #expect(try await client.response(for: Endpoint<Data>(path: "me")).value == Data("alice".utf8))
    jar.removeAll()
    jar.store(["user=bob"], from: origin)
    // Bob's cookie is part of what the cache keys by: Alice's answer is not his.
    #expect(try await client.response(for: Endpoint<Data>(path: "me")).value == Data("bob".utf8))
    jar.removeAll()
    jar.store(["user=bob"], from: origin)
    // Bob's again, from the cache: its `Set-Cookie` is not replayed into the jar.
    #expect(try await client.response(for: Endpoint<Data>(path: "me")).value == Data("bob".utf8))
    #expect(await stub.requests.count == 2)
    #expect(jar.allCookies.map(\.name) == ["user"])
  }

  @Test func noPrintedFormOfTheJournalOrAMatcherShowsACookiesValue() async throws {
    let stub = StubTransport()
    await stub.on(.path("/v1/me") && .cookie("session", "s3cr3t-value"), .status(200))
    await stub.on(.get, "/v1/other", .status(200))
    let jar = CookieJar()
    jar.store(["session=s3cr3t-jar"], from: URL(string: "https://api.example.com/")!)
    let client = Self.client(stub, jar: jar)
    _ = try await client.response(for: Endpoint<Data>(path: "other"))
    let sent = try #require(await stub.requests.first)
    #expect(sent.sentCookies == ["session": "s3cr3t-jar"])
    let matcher = RequestMatcher.cookie("session", "s3cr3t-value")
    var forms = [
      String(describing: sent), String(reflecting: sent), sent.cURLDescription, matcher.description,
    ]
    forms += matcher.mismatches(sent)
    for form in forms {
      #expect(!form.contains("s3cr3t"), "\(form)")
    }
    #expect(matcher.mismatches(sent) == ["cookie: expected session, sent session=<redacted>"])
  }
}

/// `HTTPURLResponse` joins a response's `Set-Cookie` fields into one value: they are split
/// again where a comma starts another cookie, not in an `Expires` date.
@Suite(.timeLimit(.minutes(3))) struct CombinedSetCookieTests {
  @Test(arguments: [
    ("a=1", ["a=1"]),
    ("a=1, b=2", ["a=1", "b=2"]),
    (
      "a=1; Expires=Wed, 21 Oct 2099 07:28:00 GMT; Path=/, b=2; Max-Age=5",
      ["a=1; Expires=Wed, 21 Oct 2099 07:28:00 GMT; Path=/", "b=2; Max-Age=5"]
    ),
    (
      "a=1; Expires=Wednesday, 21-Oct-99 07:28:00 GMT",
      ["a=1; Expires=Wednesday, 21-Oct-99 07:28:00 GMT"]
    ),
    ("a=1,=nameless", ["a=1", "=nameless"]),
    ("", []),
    (" , ", []),
  ])
  func fieldsAreSplitWhereACookieStarts(combined: String, fields: [String]) throws {
    let response = try #require(
      HTTPURLResponse(
        url: URL(string: "https://example.com/")!, statusCode: 200, httpVersion: "HTTP/1.1",
        headerFields: ["Set-Cookie": combined]))
    #expect(HTTPResponse(response, body: Data()).headers.values(for: "Set-Cookie") == fields)
  }
}

/// A jar on the client's clock: its cookies expire as the client's timers fire.
@Suite(.timeLimit(.minutes(3))) struct CookieJarClockTests {
  @Test(arguments: [(59, true), (61, false)])
  func aCookieExpiresWhenTheClientsClockSaysSo(after seconds: Int, stillSent: Bool) async throws {
    let clock = TestClock()
    let stub = StubTransport()
    await stub.on(.get, "/v1/login", .status(200).settingCookies("session=abc; Max-Age=60"))
    await stub.on(.get, "/v1/me", .status(200))
    var configuration = APIClient.Configuration(clock: clock)
    configuration.cookieJar = CookieJar(clock: clock, epoch: Date(timeIntervalSince1970: 1e9))
    let client = APIClient(
      baseURL: CookieJarClientTests.base, transport: stub, configuration: configuration)
    _ = try await client.response(for: Endpoint<Data>(path: "login"))
    await clock.advance(by: .seconds(seconds))
    _ = try await client.response(for: Endpoint<Data>(path: "me"))
    #expect(await stub.requests.last?.sentCookies == (stillSent ? ["session": "abc"] : [:]))
    // Created at the epoch, the clock then at zero; gone once its minute has passed.
    let created = configuration.cookieJar?.allCookies.map(\.created)
    #expect(created == (stillSent ? [Date(timeIntervalSince1970: 1e9)] : []))
  }
}
