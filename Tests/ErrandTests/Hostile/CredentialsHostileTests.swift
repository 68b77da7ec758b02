import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A token provider whose answers a probe scripts: the current token, and what the `n`th refresh
/// (from 1) hands over or throws. Refreshes are counted.
actor ScriptedTokens: ExpiringTokenProvider {
  struct Refused: Error, Equatable {
    var attempt: Int
  }

  private var current: AccessToken?
  private let script: @Sendable (Int) throws -> AccessToken
  private(set) var refreshes = 0

  init(current: AccessToken?, refresh script: @escaping @Sendable (Int) throws -> AccessToken) {
    self.current = current
    self.script = script
  }

  func currentAccessToken() async throws -> AccessToken? { current }

  func refreshAccessToken() async throws -> AccessToken {
    refreshes += 1
    let fresh = try script(refreshes)
    current = fresh
    return fresh
  }
}

/// Sets a header on every request it passes on: a tracing middleware that copies a value it was
/// given, placed after an authentication middleware.
struct SetsHeaderAfter: Middleware {
  var name: String
  var value: String

  func intercept(
    _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    var request = request
    request.headers[name] = value
    return try await next(request)
  }
}

/// Signs every request with a signer, as `RequestSigner`'s documentation shows.
struct SignsRequests: Middleware {
  var signer: AWSSignatureV4

  func intercept(
    _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    try await next(signer.sign(request, at: Date(timeIntervalSince1970: 1_440_938_160)))
  }
}

/// Hostile probes of the credentials this release adds: token lifetimes
/// (`AccessToken`, `ExpiringTokenProvider`, the bearer middleware's leeway), Basic credentials,
/// API keys, PKCE, and request signing (`AWSSignatureV4`, `RequestSigning`, SHA-256 and HMAC).
/// Each probe asserts the safe behaviour, so a failure is a finding.
@Suite(.timeLimit(.minutes(3))) struct CredentialsHostileTests {
  static let secured = Endpoint<Dog>(path: "me", requiresAuthentication: true)
  static let securedData = Endpoint<Data>(path: "me", requiresAuthentication: true)

  /// A server that answers with the `Authorization` it got, as a dog's name.
  static func echo() -> StubTransport {
    StubTransport { request in .json(Dog(name: request.headers["Authorization"] ?? "none")) }
  }

  static func client(
    _ transport: any Transport, _ middleware: [any Middleware], clock: TestClock = TestClock(),
    listener: RecordingListener? = nil
  ) -> APIClient {
    APIClient(
      baseURL: base, transport: transport,
      configuration: .init(
        timeout: nil, middleware: middleware, clock: clock,
        eventListeners: listener.map { [$0] } ?? []))
  }

  /// The authentication error inside what a call threw, if that is what it threw.
  static func authenticationError(_ error: (any Error)?) -> AuthenticationError? {
    guard case .transport(let underlying as AuthenticationError)? = error as? APIError else {
      return nil
    }
    return underlying
  }

  // MARK: Token lifetime

  /// Stampede: 100 concurrent first calls whose provider's current token has already expired
  /// share one refresh, and not one of them sends the expired token.
  @Test func hundredCallsOnAnExpiredFirstTokenShareOneRefresh() async throws {
    let clock = TestClock()
    let tokens = ScriptedTokens(current: AccessToken("token-0", lifetime: .seconds(-30))) {
      AccessToken("token-\($0)", lifetime: .seconds(3600))
    }
    let auth = BearerAuthenticationMiddleware(provider: tokens, clock: clock)
    let stub = Self.echo()
    let client = Self.client(stub, [auth], clock: clock)
    let names = try await withThrowingTaskGroup(of: String.self) { group in
      for _ in 0..<100 {
        group.addTask { try await client.send(Self.secured).name }
      }
      return try await group.reduce(into: [String]()) { $0.append($1) }
    }
    #expect(names.count == 100)
    #expect(Set(names) == ["Bearer token-1"])
    #expect(await tokens.refreshes == 1)
    #expect(await stub.requests.allSatisfy { $0.headers["Authorization"] != "Bearer token-0" })
  }

  /// Refresh loop: a provider that hands the same token back with a zero lifetime, every time.
  /// Nothing is ever sent; each call fails with `ExpiredTokenError`, and the refreshes stop at
  /// the limit (5 a minute), after which calls fail with `refreshLimitReached` without asking.
  @Test func aProviderThatHandsBackADeadTokenCannotLoop() async throws {
    let clock = TestClock()
    let tokens = ScriptedTokens(current: AccessToken("token-0", lifetime: .zero)) { _ in
      AccessToken("token-0", lifetime: .zero)
    }
    let auth = BearerAuthenticationMiddleware(provider: tokens, clock: clock)
    let stub = Self.echo()
    let client = Self.client(stub, [auth], clock: clock)
    var errors: [AuthenticationError?] = []
    for _ in 0..<8 {
      do {
        _ = try await client.send(Self.secured)
        errors.append(nil)
      } catch {
        errors.append(Self.authenticationError(error))
      }
    }
    for (index, error) in errors.enumerated() {
      switch (index, error) {
      case (0..<5, .refreshFailed(let cause)?):
        #expect(cause as? ExpiredTokenError == ExpiredTokenError(lifetime: .zero), "call \(index)")
      case (5..., .refreshLimitReached(let limit, let window)?):
        #expect(limit == 5 && window == .seconds(60), "call \(index)")
      default:
        Issue.record("call \(index) ended with \(String(describing: error))")
      }
    }
    #expect(await tokens.refreshes == 5)
    #expect(await stub.requests.isEmpty)
  }

  /// A leeway a million times the token's lifetime does not make every call refresh (the token
  /// serves half its life), and a lifetime of `Int64.max` seconds neither overflows nor expires.
  @Test func extremeLeewaysAndLifetimesAreSafe() async throws {
    let clock = TestClock()
    let tokens = ScriptedTokens(current: AccessToken("token-0", lifetime: .seconds(10))) {
      AccessToken("token-\($0)", lifetime: .seconds(10))
    }
    let auth = BearerAuthenticationMiddleware(
      provider: tokens, leeway: .seconds(1_000_000_000_000), clock: clock)
    let client = Self.client(Self.echo(), [auth], clock: clock)
    for _ in 0..<10 {
      #expect(try await client.send(Self.secured).name == "Bearer token-0")
    }
    await clock.advance(by: .milliseconds(4_999))
    #expect(try await client.send(Self.secured).name == "Bearer token-0")
    await clock.advance(by: .milliseconds(1))
    #expect(try await client.send(Self.secured).name == "Bearer token-1")
    #expect(await tokens.refreshes == 1)

    let forever = ScriptedTokens(current: AccessToken("forever", lifetime: .seconds(Int64.max))) {
      AccessToken("never-\($0)", lifetime: .seconds(Int64.max))
    }
    let lasting = BearerAuthenticationMiddleware(provider: forever, clock: clock)
    let lastingClient = Self.client(Self.echo(), [lasting], clock: clock)
    #expect(try await lastingClient.send(Self.secured).name == "Bearer forever")
    await clock.advance(by: .seconds(100 * 365 * 86_400))
    #expect(try await lastingClient.send(Self.secured).name == "Bearer forever")
    #expect(await forever.refreshes == 0)
  }

  /// A failing refresh surfaces once. Call A sends token-0 and waits for its answer; meanwhile
  /// the token falls due and call B's early refresh fails (an outage), B going out with the token
  /// that has not expired. A's answer is then a `401`: A gets that refresh's failure, told once,
  /// rather than starting a refresh of its own (the review asked for a new one; kept so, because
  /// a late 401 after each failure would otherwise add a refresh each: a storm in an outage).
  @Test func aRefreshFailureIsToldOnceToACallThatReadTheTokenBeforeIt() async throws {
    let clock = TestClock()
    let tokens = ScriptedTokens(current: AccessToken("token-0", lifetime: .seconds(600))) {
      attempt in
      if attempt == 1 { throw ScriptedTokens.Refused(attempt: 1) }
      return AccessToken("token-\(attempt)", lifetime: .seconds(600))
    }
    let auth = BearerAuthenticationMiddleware(provider: tokens, leeway: .seconds(60), clock: clock)
    let arrived = AsyncGate()
    let answer = AsyncGate()
    let stub = StubTransport { request in
      guard request.url.path.hasSuffix("/slow") else { return .status(200) }
      if request.headers["Authorization"] == "Bearer token-0" {
        await arrived.open()
        await answer.wait()
        return .status(401)
      }
      return .status(200)
    }
    let client = Self.client(stub, [auth], clock: clock)
    let slow = Task {
      try await client.send(Endpoint<Data>(path: "slow", requiresAuthentication: true))
    }
    await arrived.wait()
    await clock.advance(by: .seconds(545))  // token-0 is due (55 s left), not expired
    // Call B: its early refresh fails; the token has not expired, so B goes with it.
    _ = try await client.send(Self.securedData)
    #expect(await stub.requests.last?.headers["Authorization"] == "Bearer token-0")
    #expect(await tokens.refreshes == 1)
    await clock.advance(by: .seconds(10))  // token-0 still not expired (45 s left)
    await answer.open()
    let result = await slow.result
    let failure = #expect(throws: APIError.self) { try result.get() }
    guard case .refreshFailed(let cause)? = Self.authenticationError(failure) else {
      Issue.record("call A: expected the failed refresh, got \(String(describing: failure))")
      return
    }
    #expect(cause as? ScriptedTokens.Refused == ScriptedTokens.Refused(attempt: 1))
    #expect(await tokens.refreshes == 1)
  }

  /// Availability: the early refresh (inside the leeway) fails, but the token still has 50 s to
  /// live. The call should go out with it rather than fail: before early refreshes, this call
  /// succeeded; now an outage of the token server fails every call for the last minute of each
  /// token's life.
  @Test func aFailedEarlyRefreshDoesNotFailACallWhoseTokenStillLives() async throws {
    let clock = TestClock()
    let tokens = ScriptedTokens(current: AccessToken("token-0", lifetime: .seconds(3600))) {
      throw ScriptedTokens.Refused(attempt: $0)
    }
    let auth = BearerAuthenticationMiddleware(provider: tokens, leeway: .seconds(60), clock: clock)
    let client = Self.client(Self.echo(), [auth], clock: clock)
    #expect(try await client.send(Self.secured).name == "Bearer token-0")
    await clock.advance(by: .seconds(3550))
    let sent = try? await client.send(Self.secured).name
    #expect(sent == "Bearer token-0", "the call failed although token-0 had 50 s left")
    #expect(await tokens.refreshes == 1)
  }

  /// A JWT whose `exp` is absurd (nanoseconds read as seconds: 1.7e18) or infinite must give a
  /// token with a long lifetime, not trap converting it to milliseconds.
  @Test func anAbsurdExpiryDoesNotCrash() async {
    #if os(Linux) || os(macOS)
      await #expect(processExitsWith: .success) {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let nanoseconds = AccessToken(
          "t", expiresAt: Date(timeIntervalSince1970: 1_700_000_000_000_000_000), now: now)
        precondition((nanoseconds.lifetime ?? .zero) > .seconds(1_000_000_000))
        let infinite = AccessToken(
          "t", expiresAt: Date(timeIntervalSinceReferenceDate: .infinity), now: now)
        precondition((infinite.lifetime ?? .zero) > .seconds(1_000_000_000))
      }
    #endif
  }

  /// No printed form of the middleware shows the token it holds: a `dump` of the client's
  /// configuration, or of the middleware in a debugger, reaches its stored properties.
  @Test func noPrintedFormOfTheBearerMiddlewareShowsItsToken() async throws {
    let clock = TestClock()
    let tokens = ScriptedTokens(current: AccessToken("S3CRET-BEARER", lifetime: .seconds(3600))) {
      AccessToken("S3CRET-FRESH-\($0)", lifetime: .seconds(3600))
    }
    let auth = BearerAuthenticationMiddleware(provider: tokens, clock: clock)
    let stub = StubTransport { request in
      request.headers["Authorization"] == "Bearer S3CRET-BEARER"
        ? .status(401) : .json(Dog(name: "Rex"))
    }
    let client = Self.client(stub, [auth], clock: clock)
    #expect(try await client.send(Self.secured).name == "Rex")  // held, and a refresh's outcome
    for text in printedForms(of: auth) + printedForms(of: [auth] as [any Middleware]) {
      #expect(!text.contains("S3CRET"), "\(text)")
    }
  }

  /// Neither the error of a refresh that handed over a dead token, nor any event of that call,
  /// shows either token.
  @Test func aFailedRefreshShowsNoToken() async throws {
    let clock = TestClock()
    let tokens = ScriptedTokens(current: AccessToken("S3CRET-OLD", lifetime: .seconds(-1))) { _ in
      AccessToken("S3CRET-NEW", lifetime: .seconds(-5))
    }
    let auth = BearerAuthenticationMiddleware(provider: tokens, clock: clock)
    let listener = RecordingListener()
    let client = Self.client(Self.echo(), [auth], clock: clock, listener: listener)
    let error = await #expect(throws: APIError.self) { try await client.send(Self.secured) }
    guard case .refreshFailed(let cause)? = Self.authenticationError(error) else {
      Issue.record("expected a failed refresh, got \(String(describing: error))")
      return
    }
    #expect(cause as? ExpiredTokenError == ExpiredTokenError(lifetime: .seconds(-5)))
    let events = await listener.eventsOfOneCall()
    #expect(events.map(\.kind.name).contains("tokenRefreshFinished"))
    var texts: [String] = printedForms(of: error as Any)
    texts += printedForms(of: events)
    texts += printedForms(of: cause)
    texts += printedForms(of: AuthenticationError.refreshFailed(cause))
    for text in texts {
      #expect(!text.contains("S3CRET"), "\(text)")
    }
  }

  // MARK: Basic and API keys

  /// Header injection through an API key: a key with CR LF never reaches the wire, and the
  /// error says why without quoting it.
  @Test func anAPIKeyWithCRLFNeverReachesTheWire() async throws {
    let stub = StubTransport { _ in .status(200) }
    let key = "K3Y\r\nX-Injected: 1"
    let client = Self.client(stub, [APIKeyMiddleware(key: key, in: .header("X-Partner-Key"))])
    let error = await #expect(throws: APIError.self) { try await client.send(Self.securedData) }
    guard case .invalidRequest(let reason)? = error else {
      Issue.record("expected an invalid request, got \(String(describing: error))")
      return
    }
    #expect(reason.contains("\"X-Partner-Key\" contains a carriage return"))
    for text in printedForms(of: error as Any) {
      #expect(!text.contains("K3Y") && !text.contains("Injected"), "\(text)")
    }
    #expect(await stub.requests.isEmpty)
  }

  /// A key in the query that holds `&`, `=`, `#`, `%`, `+`, a space, `/`, `?` and `;` arrives
  /// whole, as one parameter.
  @Test func anAPIKeyInTheQueryArrivesWhole() async throws {
    let stub = StubTransport { _ in .status(200) }
    let key = "a&b=c#d%41 e+f/g?h;i"
    let client = Self.client(stub, [APIKeyMiddleware(key: key, in: .queryParameter("api_key"))])
    _ = try await client.send(Self.securedData)
    let sent = try #require(await stub.requests.first)
    let items = URLComponents(url: sent.url, resolvingAgainstBaseURL: true)?.queryItems
    #expect(items == [URLQueryItem(name: "api_key", value: key)])
  }

  /// Adding a key to the query leaves the URL's other parameters as written: a next page's URL
  /// (`?q=red+shoes`, a `+` that most servers read as a space) must not become `q=red%2Bshoes`.
  @Test func anAPIKeyInTheQueryLeavesOtherParametersAsWritten() async throws {
    let stub = StubTransport { _ in .status(200) }
    let client = Self.client(stub, [APIKeyMiddleware(key: "K", in: .queryParameter("api_key"))])
    let page = try #require(
      URL(string: "https://api.example.com/v1/search?q=red+shoes&tag=a%2Bb&empty=&flag"))
    _ = try await client.send(
      Endpoint<Data>(url: page, requiresAuthentication: true, decoding: .data))
    let sent = try #require(await stub.requests.first)
    #expect(sent.url.query(percentEncoded: true) == "q=red+shoes&tag=a%2Bb&empty=&flag&api_key=K")
  }

  /// No credential goes to an absolute URL on another origin, even with
  /// `requiresAuthentication`, nor across a redirect to another origin.
  @Test func noCredentialLeavesTheOrigin() async throws {
    let middleware: [any Middleware] = [
      APIKeyMiddleware(key: "K3Y-HEADER", in: .header("X-Partner-Key")),
      APIKeyMiddleware(key: "K3Y-QUERY", in: .queryParameter("partner_key")),
      try BasicAuthenticationMiddleware(username: "user", password: "PASSW0RD"),
    ]
    let stub = StubTransport(followsRedirects: true)
    await stub.on(.get, "/collect", .status(200))
    await stub.on(.get, "/v1/me", .status(307, headers: ["Location": "https://evil.example/steal"]))
    await stub.on(.get, "/steal", .status(200))
    let client = Self.client(stub, middleware)
    let elsewhere = try #require(URL(string: "https://evil.example/collect"))
    _ = try await client.send(
      Endpoint<Data>(url: elsewhere, requiresAuthentication: true, decoding: .data))
    _ = try await client.send(Self.securedData)
    let requests = await stub.requests
    let foreign = requests.filter { $0.url.host == "evil.example" }
    #expect(foreign.count == 2)
    #expect(requests.contains { $0.url.host == "api.example.com" })
    for request in foreign {
      #expect(request.headers["X-Partner-Key"] == nil, "\(request.url)")
      #expect(request.headers["Authorization"] == nil, "\(request.url)")
      #expect(!request.url.absoluteString.contains("K3Y"), "\(request.url)")
    }
  }

  /// A key in a query parameter the client's redaction does not name is hidden by the
  /// request's own redaction everywhere, so also in the error of a request a transport refuses
  /// (here: a later middleware copied a value with a line feed into a header), and in the log
  /// line of a `LoggingMiddleware` put first in the chain (as its documentation offers).
  @Test func anAPIKeyInTheQueryStaysOutOfValidationErrors() async throws {
    let stub = StubTransport { _ in .status(200) }
    let logged = Locked<[String]>([])
    let client = Self.client(
      stub,
      [
        LoggingMiddleware { event in logged.withLock { $0.append(event.message) } },
        APIKeyMiddleware(key: "K3Y-IN-QUERY", in: .queryParameter("partner_key")),
        SetsHeaderAfter(name: "X-Trace", value: "a\nb"),
      ])
    let error = await #expect(throws: APIError.self) { try await client.send(Self.securedData) }
    guard case .invalidRequest(let reason)? = error else {
      Issue.record("expected an invalid request, got \(String(describing: error))")
      return
    }
    #expect(reason.contains("\"X-Trace\" contains a line feed"))
    let lines = logged.withLock { $0 }
    #expect(lines.count == 2)
    for text in printedForms(of: error as Any) + lines {
      #expect(!text.contains("K3Y-IN-QUERY"), "\(text)")
    }
  }

  /// A server that quotes the key (or the Basic password) in its error body: no printed form of
  /// the error, its response or `response.request` (dump, `cURLDescription`) shows it, wherever
  /// the key was placed.
  @Test(arguments: [
    APIKeyMiddleware.Placement.header("X-Partner-Key"), .queryParameter("partner_key"),
  ])
  func anEchoedCredentialIsScrubbedFromErrors(_ placement: APIKeyMiddleware.Placement)
    async throws
  {
    let key = "K3Y-ECHO/+=&x"
    let password = "PASSW0RD-ECHO"
    let stub = StubTransport { _ in
      .status(
        403, body: Data("{\"error\":\"bad key \(key) or password \(password)\"}".utf8),
        headers: ["Content-Type": "application/json"])
    }
    let client = Self.client(
      stub,
      [
        APIKeyMiddleware(key: key, in: placement),
        try BasicAuthenticationMiddleware(username: "svc", password: password),
      ])
    let error = await #expect(throws: APIError.self) { try await client.send(Self.securedData) }
    guard case .unacceptableStatus(let response)? = error, let request = response.request else {
      Issue.record("expected an unacceptable status, got \(String(describing: error))")
      return
    }
    var texts: [String] = printedForms(of: error as Any)
    texts += printedForms(of: response)
    texts += printedForms(of: request)
    texts += [request.cURLDescription, request.description]
    for text in texts {
      #expect(!text.contains("K3Y-ECHO") && !text.contains("PASSW0RD"), "\(text)")
    }
  }

  /// Every C0 control character and DEL is refused in a Basic user name and password (RFC 7617
  /// §2: no CTL), with the reason and never the password; C1 and Unicode line separators, which
  /// base64 carries harmlessly, are accepted and encoded as UTF-8.
  @Test func basicRefusesEveryControlCharacter() async throws {
    for value in Array(0x00...0x1F) + [0x7F] {
      let scalar = Character(Unicode.Scalar(UInt8(value)))
      let user = #expect(throws: InvalidCredentialError.self) {
        _ = try BasicAuthenticationMiddleware(username: "u\(scalar)", password: "p")
      }
      #expect(user?.reason == "the user name holds a control character", "U+\(value)")
      let password = #expect(throws: InvalidCredentialError.self) {
        _ = try BasicAuthenticationMiddleware(username: "u", password: "PW\(scalar)SECRET")
      }
      #expect(password?.reason == "the password holds a control character", "U+\(value)")
      #expect(password.map { printedForms(of: $0) }?.allSatisfy { !$0.contains("SECRET") } == true)
    }
    let stub = StubTransport { _ in .status(200) }
    let basic = try BasicAuthenticationMiddleware(username: "u\u{85}", password: "p\u{2028}")
    _ = try await Self.client(stub, [basic]).send(Self.securedData)
    let expected = "Basic " + Data("u\u{85}:p\u{2028}".utf8).base64EncodedString()
    #expect(await stub.requests.first?.headers["Authorization"] == expected)
  }

  /// PKCE against RFC 7636 Appendix B's vector, which is `dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk`
  /// (`…-mB92…`, the base64url of the octets the appendix lists).
  @Test func pkceMatchesRFC7636AppendixB() throws {
    let octets: [UInt8] = [
      116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212, 37,
      77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121,
    ]
    #expect(PKCE.base64URL(Data(octets)) == "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
    let pkce = try PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
    #expect(pkce.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    for text in printedForms(of: pkce) + printedForms(of: [pkce]) {
      #expect(!text.contains("dBjftJeZ4CVP"), "\(text)")
    }
  }

  // MARK: Signing

  static let credentials = AWSSignatureV4.Credentials(
    accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
  static let emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

  /// A `PUT` whose body is `file`.
  static func upload(_ file: URL) -> HTTPRequest {
    var request = HTTPRequest(method: .put, url: URL(string: "https://e.test/k")!)
    request.bodyFile = file
    return request
  }

  /// The canonical query as AWS documents it: every name and value decoded then encoded
  /// (`*` as `%2A`, `~` kept), sorted by name then value, a name without a value given `=`,
  /// repeated names kept.
  @Test func sigV4CanonicalQuery() throws {
    let url = try #require(
      URL(string: "https://e.amazonaws.com/?b=2&a=3&a=1&c&a=&%41=x&d=%2F%20&e=%7E%2a"))
    #expect(AWSSignatureV4.canonicalQuery(of: url) == "A=x&a=&a=1&a=3&b=2&c=&d=%2F%20&e=~%2A")
  }

  /// The canonical path: `%2F` stays an encoded slash (encoded twice for services but S3), dot
  /// segments resolve for services but S3, and S3 signs the path as the key it names.
  @Test func sigV4CanonicalPath() throws {
    let url = try #require(URL(string: "https://e.amazonaws.com/a%2Fb/c%20d/./x/../y/"))
    let service = AWSSignatureV4(credentials: Self.credentials, region: "us-east-1", service: "iam")
    #expect(service.canonicalPath(of: url) == "/a%252Fb/c%2520d/y/")
    let s3 = AWSSignatureV4.s3(credentials: Self.credentials, region: "us-east-1")
    #expect(s3.canonicalPath(of: url) == "/a/b/c%20d/./x/../y/")
  }

  /// The `host` signed is the one a transport sends: a port only when it is not the scheme's,
  /// an IPv6 address in brackets.
  @Test(arguments: [
    ("https://example.com:8443/p", "example.com:8443"),
    ("https://example.com:443/p", "example.com"),
    ("http://example.com:443/p", "example.com:443"),
    ("http://example.com:80/", "example.com"),
    ("https://[2001:db8::1]:8443/", "[2001:db8::1]:8443"),
    ("https://[2001:db8::1]/", "[2001:db8::1]"),
  ])
  func sigV4HostHeader(url: String, host: String) throws {
    #expect(AWSSignatureV4.hostHeader(of: try #require(URL(string: url))) == host)
  }

  /// Duplicated names in mixed case join in order under one lower-case name; tabs and runs of
  /// spaces collapse; a stale `X-Amz-Date` is replaced, never signed twice; `User-Agent` is
  /// left out.
  @Test func sigV4CanonicalHeaders() throws {
    var request = HTTPRequest(url: try #require(URL(string: "https://e.amazonaws.com/")))
    request.headers.add("X-Amz-Meta-Dup", "  one \t\t two  ")
    request.headers.add("x-amz-meta-dup", "three")
    request.headers.add("My-Header", "a\tb")
    request.headers.add("User-Agent", "ua")
    request.headers.add("x-amz-date", "stale")
    let signer = AWSSignatureV4(credentials: Self.credentials, region: "us-east-1", service: "iam")
    let signed = try signer.signed(request, at: Date(timeIntervalSince1970: 1_440_938_160))
    #expect(
      signed.canonicalRequest == """
        GET
        /

        host:e.amazonaws.com
        my-header:a b
        x-amz-date:20150830T123600Z
        x-amz-meta-dup:one two,three

        host;my-header;x-amz-date;x-amz-meta-dup
        \(Self.emptyHash)
        """)
    #expect(signed.request.headers.values(for: "X-Amz-Date") == ["20150830T123600Z"])
  }

  /// A body file that is a named pipe with no writer: hashing it must not block for ever (the
  /// transports refuse such a file without opening it; the signer runs first, in a middleware).
  @Test func signingANamedPipeDoesNotHang() async throws {
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("errand-fifo-\(UUID().uuidString)").path
    try #require(mkfifo(path, 0o600) == 0)
    defer { unlink(path) }
    let request = Self.upload(URL(fileURLWithPath: path))
    let outcome = Locked<Result<String, any Error>?>(nil)
    let hashing = Task.detached {
      await onThread {
        outcome.withLock { $0 = Result { try RequestSigning.sha256Hex(of: request) } }
      }
    }
    let finished = await returnsInTime(seconds: 10) {
      await hashing.value
      return true
    }
    // Free a blocked reader: a writer opens the pipe and closes it, and the reader reads its end.
    for _ in 0..<400 where outcome.withLock({ $0 == nil }) {
      let writer = open(path, O_WRONLY | O_NONBLOCK)
      if writer >= 0 { close(writer) }
      try? await Task.sleep(for: .milliseconds(50))
    }
    await hashing.value
    #expect(finished, "sha256Hex(of:) blocked opening a named pipe that has no writer")
    let result = try #require(outcome.withLock { $0 })
    #expect(throws: (any Error).self, "a named pipe was read as a body") { try result.get() }
  }

  /// A huge body file (8 GB, sparse): signing it is cancellable, as the call that signs it is.
  @Test func signingAHugeBodyStopsWhenCancelled() async throws {
    let file = FileManager.default.temporaryDirectory
      .appendingPathComponent("errand-huge-\(UUID().uuidString)")
    try #require(FileManager.default.createFile(atPath: file.path, contents: nil))
    defer { try? FileManager.default.removeItem(at: file) }
    try #require(truncate(file.path, 8 << 30) == 0)
    let request = Self.upload(file)
    let signer = AWSSignatureV4.s3(credentials: Self.credentials, region: "us-east-1")
    let signing = Task { try await signer.sign(request, at: Date(timeIntervalSince1970: 0)) }
    signing.cancel()
    let ended = await returnsInTime(seconds: 20) {
      _ = await signing.result
      return true
    }
    if !ended {
      _ = truncate(file.path, 0)  // ends the read, so the task does not outlive the probe
    }
    let result = await signing.result
    #expect(ended, "signing went on hashing 8 GB after its task was cancelled")
    if ended {
      #expect(throws: CancellationError.self) { try result.get() }
    }
  }

  /// A body file that does not exist: signing throws the file error (`NSCocoaErrorDomain`,
  /// `fileReadNoSuchFile`), not a crash and not a signature of nothing.
  @Test func signingAMissingBodyFileThrows() async throws {
    let request = Self.upload(URL(fileURLWithPath: "/nonexistent/errand-\(UUID().uuidString)"))
    let signer = AWSSignatureV4(credentials: Self.credentials, region: "us-east-1", service: "s3")
    let error = await #expect(throws: (any Error).self) {
      try await signer.sign(request, at: Date(timeIntervalSince1970: 0))
    }
    let nsError = try #require(error.map { $0 as NSError })
    #expect(nsError.domain == NSCocoaErrorDomain)
    #expect(nsError.code == CocoaError.Code.fileReadNoSuchFile.rawValue)
  }

  /// Neither the secret key nor the session token shows in anything printed about a signed call
  /// that failed (the error, its response and request, `cURLDescription`, the events), even
  /// when the server echoes the token in its body, signed or added after the signature.
  @Test(arguments: [true, false])
  func aSignedCallShowsNoSecret(signsSessionToken: Bool) async throws {
    let secret = "wJalrXUtnFEMI/SECRET-KEY"
    let token = "SESSION-T0KEN-SECRET"
    let signer = AWSSignatureV4(
      credentials: .init(accessKeyID: "AKID", secretAccessKey: secret, sessionToken: token),
      region: "us-east-1", service: "execute-api", signsSessionToken: signsSessionToken)
    let stub = StubTransport { request in
      .status(
        500, body: Data("{\"echo\":\"\(request.headers["X-Amz-Security-Token"] ?? "")\"}".utf8),
        headers: ["Content-Type": "application/json"])
    }
    let listener = RecordingListener()
    let client = Self.client(stub, [SignsRequests(signer: signer)], listener: listener)
    let error = await #expect(throws: APIError.self) { try await client.send(Self.securedData) }
    let sent = try #require(await stub.requests.first)
    #expect(sent.headers["X-Amz-Security-Token"] == token)
    let events = await listener.eventsOfOneCall()
    var texts: [String] = printedForms(of: error as Any)
    texts += printedForms(of: sent)
    texts += [sent.cURLDescription]
    texts += printedForms(of: events)
    texts += printedForms(of: signer)
    if case .unacceptableStatus(let response)? = error {
      texts += printedForms(of: response)
      texts += response.request.map { [$0.cURLDescription] + printedForms(of: $0) } ?? []
    } else {
      Issue.record("expected an unacceptable status, got \(String(describing: error))")
    }
    for text in texts {
      #expect(!text.contains(secret) && !text.contains(token), "\(text)")
    }
  }

  /// SHA-256 fed in pieces of every awkward size (across the 55/56/64-byte boundaries), from
  /// `Data` slices that do not start at index 0, equals the digest of the whole; HMAC with a
  /// sliced key, short or longer than a block, equals HMAC with the same key copied.
  @Test func digestsOfSlicesAndPieces() {
    let message = Data((0..<1_000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) })
    let whole = SHA256Digest.hash(message)
    for sizes in [[1], [63, 1], [64], [65], [55, 9], [56, 8], [119, 1, 8], [3, 200, 1, 61]] {
      var hasher = SHA256Digest.Hasher()
      var offset = 0
      var turn = 0
      while offset < message.count {
        let size = min(sizes[turn % sizes.count], message.count - offset)
        hasher.update(message[offset..<offset + size])
        offset += size
        turn += 1
      }
      #expect(hasher.finalize() == whole, "pieces of \(sizes)")
    }
    let padded = Data([0xFF]) + message + Data([0xFF])
    #expect(SHA256Digest.hash(padded[1..<1_001]) == whole)
    for keyLength in [20, 64, 65, 131] {
      let key = Data((0..<keyLength + 3).map { UInt8(truncatingIfNeeded: $0 &* 7) })
      let sliced = key[3...]
      #expect(
        RequestSigning.hmacSHA256(key: sliced, message)
          == RequestSigning.hmacSHA256(key: Data(sliced), message), "key of \(keyLength) bytes")
    }
  }
}
