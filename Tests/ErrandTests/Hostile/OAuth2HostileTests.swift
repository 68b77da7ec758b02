import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// The OAuth 2 provider attacked: tokens and the client secret sought in every printed form and
/// error, and at another origin; refreshes pushed to loop or stampede; the token endpoint answering
/// what it should not.
@Suite(.timeLimit(.minutes(3))) struct OAuth2HostileTests {
  typealias Fixture = OAuth2Fixture
  static let secrets = ["access-0", "refresh-0", "access-1", "refresh-1", Fixture.secret]

  /// Whether `text` holds any token or the secret.
  static func leaks(_ text: String) -> Bool {
    secrets.contains { text.contains($0) }
      || text.contains(Data("dogpatch:\(Fixture.secret)".utf8).base64EncodedString())
  }

  static func expectNoLeak(in value: Any, sourceLocation: SourceLocation = #_sourceLocation) {
    for form in printedForms(of: value) {
      #expect(!leaks(form), "\(form)", sourceLocation: sourceLocation)
    }
  }

  /// The provider, its client authentication, its grant, and the tokens it stored, printed
  /// before and after a grant: no token, no secret.
  @Test func printedFormsShowNoTokenOrSecret() async throws {
    let fixture = Fixture()
    let provider = try fixture.provider()
    for client in [
      OAuth2ClientAuthentication.basic(clientID: "dogpatch", secret: Fixture.secret),
      .post(clientID: "dogpatch", secret: Fixture.secret),
    ] {
      Self.expectNoLeak(in: client)
    }
    Self.expectNoLeak(in: provider)
    _ = try await provider.refreshAccessToken()
    Self.expectNoLeak(in: provider)
    Self.expectNoLeak(in: try #require(try await fixture.storage.load()))
    Self.expectNoLeak(in: fixture.storage)
    Self.expectNoLeak(in: try #require(try await provider.currentAccessToken()))
  }

  /// A token endpoint that echoes the refresh token, the secret and the Basic credentials in its
  /// error code, its description and its token type (hidden behind control characters, or past
  /// the length the text is cut at): no printed form of the error shows them.
  @Test(arguments: [
    #"{"error":"invalid_grant","error_description":"bad refresh-0 for s3cret-client-PASS"}"#,
    #"{"error":"refresh-0","error_description":"ZG9ncGF0Y2g6czNjcmV0LWNsaWVudC1QQVNT"}"#,
    #"{"error":"x","error_description":"refresh\u0000-0 s3cret\u001b-client-PASS"}"#,
    #"{"error":"x","error_description":"\#(String(repeating: "a", count: 195))refresh-0"}"#,
    #"{"access_token":"a","token_type":"refresh-0"}"#,
  ])
  func errorsEchoingSecretsShowNone(answer: String) async throws {
    let fixture = Fixture(stored: StoredTokens(refreshToken: "refresh-0")) { _, _ in
      Fixture.json(answer, status: answer.contains("error") ? 400 : 200)
    }
    let provider = try fixture.provider()
    let client = fixture.client(provider)
    let failure = try #require(await Fixture.failure(of: client))
    #expect(failure is OAuth2Error || failure is OAuth2TokenEndpointError)
    Self.expectNoLeak(in: failure)
    do {
      _ = try await client.send(Fixture.secured)
    } catch {
      Self.expectNoLeak(in: error)
    }
  }

  /// A token endpoint that redirects to another origin: a `307` would carry the body (the refresh
  /// token, the secret) and is refused; a `302` becomes a `GET` without body or credentials, and
  /// its answer from the other origin is not taken for tokens.
  @Test(arguments: [307, 308, 302, 303])
  func aRedirectToAnotherOriginCarriesNothingAndIsNotBelieved(status: Int) async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      .post, "/oauth/token", .status(status, headers: ["Location": "https://evil.example/token"]))
    await stub.on(.post, "/token", Fixture.granted(9).allowingUnused())
    await stub.on(.get, "/token", Fixture.granted(9).allowingUnused())
    let provider = try OAuth2TokenProvider(
      tokenEndpoint: Fixture.tokenURL, grant: .refreshToken(),
      client: .basic(clientID: "dogpatch", secret: Fixture.secret),
      storage: InMemoryTokenStorage(Fixture.fresh()), transport: stub)
    let error = await #expect(throws: (any Error).self) { try await provider.refreshAccessToken() }
    if [307, 308].contains(status) {
      #expect(error is RefusedRedirectError)
    } else {
      #expect((error as? OAuth2TokenEndpointError)?.reason == .redirected)
    }
    for request in await stub.requests where request.url.host == "evil.example" {
      #expect(request.headers["Authorization"] == nil)
      #expect(request.body == nil || request.body?.isEmpty == true)
      #expect(!Self.leaks(request.url.absoluteString))
    }
    #expect(try await provider.currentAccessToken()?.value == "access-0")
    Self.expectNoLeak(in: try #require(error))
  }

  /// An access token that would add a header line (CR LF) or carries spaces is refused, never
  /// sent.
  @Test(arguments: ["abc\r\nX-Evil: 1", "abc def", "abc\u{0}", "tökén"])
  func anAccessTokenThatIsNoHeaderValueIsRefused(token: String) async throws {
    let body = try JSONSerialization.data(withJSONObject: [
      "access_token": token, "token_type": "Bearer",
    ])
    let fixture = Fixture(stored: StoredTokens(refreshToken: "refresh-0")) { _, _ in
      .status(200, body: body)
    }
    let client = fixture.client(try fixture.provider())
    let failure = await Fixture.failure(of: client)
    #expect((failure as? OAuth2TokenEndpointError)?.reason == .missingAccessToken)
    #expect(await fixture.api.requests.isEmpty)
  }

  /// Odd token responses: each ends in a token of the right lifetime or a clear error, never a
  /// crash.
  static let oddAnswers: [(String, String, Int, Duration?)] = [
    (
      "huge expires_in", #"{"access_token":"a","token_type":"bearer","expires_in":1e300}"#, 200,
      .seconds(1_000_000_000)
    ),
    (
      "negative expires_in", #"{"access_token":"a","token_type":"Bearer","expires_in":-5}"#, 200,
      .zero
    ),
    (
      "fractional expires_in", #"{"access_token":"a","token_type":"BEARER","expires_in":3600.7}"#,
      200, .seconds(3600)
    ),
    (
      "expires_in as a string", #"{"access_token":"a","token_type":"Bearer","expires_in":"3600"}"#,
      200, .seconds(3600)
    ),
    ("no expires_in", #"{"access_token":"a","token_type":"Bearer"}"#, 200, nil),
    (
      "expires_in not a number", #"{"access_token":"a","token_type":"Bearer","expires_in":"soon"}"#,
      200, nil
    ),
    (
      "expires_in a bool", #"{"access_token":"a","token_type":"Bearer","expires_in":true}"#, 200,
      nil
    ),
    ("not JSON", "<html>Bad gateway</html>", 200, nil),
    ("a JSON array", #"[{"access_token":"a","token_type":"Bearer"}]"#, 200, nil),
    ("empty body", "", 200, nil),
    ("deep nesting", String(repeating: "[", count: 10_000), 200, nil),
    ("no access_token", #"{"token_type":"Bearer","expires_in":60}"#, 200, nil),
    ("access_token a number", #"{"access_token":42,"token_type":"Bearer"}"#, 200, nil),
    ("empty access_token", #"{"access_token":"","token_type":"Bearer"}"#, 200, nil),
    ("mac token_type", #"{"access_token":"a","token_type":"mac"}"#, 200, nil),
    ("no token_type", #"{"access_token":"a"}"#, 200, nil),
    (
      "refresh_token a number", #"{"access_token":"a","token_type":"Bearer","refresh_token":7}"#,
      200, nil
    ),
    ("500 with HTML", "<h1>oops</h1>", 500, nil),
    ("400 without error", #"{"message":"no"}"#, 400, nil),
    ("302 without location", "", 302, nil),
  ]

  static let oddReasons: [String: OAuth2TokenEndpointError.Reason] = [
    "expires_in not a number": .malformedResponse, "expires_in a bool": .malformedResponse,
    "not JSON": .malformedResponse, "a JSON array": .malformedResponse,
    "empty body": .malformedResponse, "deep nesting": .malformedResponse,
    "no access_token": .missingAccessToken, "access_token a number": .missingAccessToken,
    "empty access_token": .missingAccessToken, "mac token_type": .unsupportedTokenType,
    "no token_type": .unsupportedTokenType, "refresh_token a number": .malformedResponse,
    "500 with HTML": .unexpectedStatus, "400 without error": .unexpectedStatus,
    "302 without location": .unexpectedStatus,
  ]

  @Test(arguments: oddAnswers)
  func oddTokenResponsesEndClearly(
    name: String, body: String, status: Int, lifetime: Duration?
  ) async throws {
    let fixture = Fixture { _, _ in .status(status, body: Data(body.utf8)) }
    let provider = try fixture.provider()
    if let reason = Self.oddReasons[name] {
      let error = await #expect(throws: OAuth2TokenEndpointError.self) {
        try await provider.refreshAccessToken()
      }
      #expect(error?.reason == reason, "\(name)")
      #expect(try await fixture.storage.load() == Fixture.fresh())
    } else {
      let token = try await provider.refreshAccessToken()
      #expect(token.value == "a" && token.lifetime == lifetime, "\(name)")
    }
  }

  /// An answer larger than a token response can be is refused, whether the transport stops it
  /// or hands it over whole.
  @Test(arguments: [true, false])
  func anEnormousAnswerIsRefused(transportStops: Bool) async throws {
    let huge =
      #"{"access_token":"a","token_type":"Bearer","pad":""#
      + String(repeating: "x", count: 200_000) + #""}"#
    let whole = HTTPResponse(status: 200, body: Data(huge.utf8), url: Fixture.tokenURL)
    let fixture = Fixture { _, _ in .status(200, body: Data(huge.utf8)) }
    let provider = try OAuth2TokenProvider(
      tokenEndpoint: Fixture.tokenURL, grant: .refreshToken(),
      client: .none(clientID: "dogpatch"), storage: fixture.storage,
      transport: transportStops
        ? fixture.tokenEndpoint as any Transport : WholeTransport(response: whole))
    let error = await #expect(throws: OAuth2TokenEndpointError.self) {
      try await provider.refreshAccessToken()
    }
    #expect(error?.reason == .responseTooLarge)
  }

  /// A transport that ignores the request's size limit.
  struct WholeTransport: Transport {
    var response: HTTPResponse
    func send(_ request: HTTPRequest) async throws -> HTTPResponse { response }
  }

  /// `invalid_grant` under a stampede: 100 calls share one grant; every call then fails (with
  /// `invalid_grant`, with no refresh token left, or at the middleware's refresh limit) without
  /// a second token request, and no expired token reaches the API.
  @Test func invalidGrantUnderAStampedeAsksOnce() async throws {
    let fixture = Fixture(stored: Fixture.fresh(lifetime: -1)) { _, _ in
      Fixture.json(#"{"error":"invalid_grant"}"#, status: 400)
    }
    let provider = try fixture.provider()
    let client = fixture.client(provider)
    for round in 0..<2 {
      let failures = await withTaskGroup(of: String.self) { group in
        for _ in 0..<100 {
          group.addTask { Self.kind(of: await Fixture.failure(of: client)) }
        }
        return await group.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
      }
      #expect(failures.keys.allSatisfy { ["sign in", "limit"].contains($0) }, "\(failures)")
      if round == 0 {
        #expect(failures["sign in", default: 0] >= 1, "\(failures)")
      }
    }
    #expect(fixture.grants.withLock { $0 } == 1)
    #expect(await fixture.api.requests.isEmpty)
  }

  /// What a failed call's error means: `sign in`, `limit` (the middleware's refresh limit), or
  /// its description.
  static func kind(of error: (any Error)?) -> String {
    guard let error else { return "no error" }
    if OAuth2TokenProvider.requiresSignIn(error) { return "sign in" }
    if case APIError.transport(AuthenticationError.refreshLimitReached) = error { return "limit" }
    return String(describing: error)
  }

  /// An API that rejects every token cannot make the provider loop: each call refreshes at most
  /// once, and the middleware's limit stops the refreshes.
  @Test func anAPIThatRejectsEveryTokenCannotMakeItLoop() async throws {
    let fixture = Fixture()
    let provider = try fixture.provider()
    let api = StubTransport { _ in .status(401) }
    let auth = BearerAuthenticationMiddleware(
      provider: provider, refreshLimit: 3, clock: fixture.clock)
    let client = APIClient(
      baseURL: Fixture.apiURL, transport: api,
      configuration: .init(middleware: [auth], clock: fixture.clock))
    for _ in 0..<10 {
      _ = try? await client.send(Fixture.secured)
    }
    #expect(await provider.tokenRequestCount == 3)
    #expect(await api.requests.count <= 20)
  }

  /// A token endpoint that fails makes one request per refresh, not one per waiting call.
  @Test func aFailingTokenEndpointIsAskedOncePerStampede() async throws {
    let fixture = Fixture(stored: Fixture.fresh(lifetime: -1)) { _, _ in .status(503) }
    let provider = try fixture.provider()
    let client = fixture.client(provider)
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<100 {
        group.addTask { _ = try? await client.send(Fixture.secured) }
      }
    }
    #expect(await provider.tokenRequestCount <= 5)
    #expect(await fixture.api.requests.isEmpty)
  }

  /// Values that would add fields to the form (`&`, `=`, `+`, a line break) are encoded: the
  /// server reads back exactly the refresh token, scope and client ID given.
  @Test func formValuesCannotAddFields() async throws {
    let refresh = "r&grant_type=password&client_secret=x+y=z%41\r\n"
    let fixture = Fixture(stored: StoredTokens(refreshToken: refresh))
    let provider = try fixture.provider(
      grant: .refreshToken(scope: "a&scope=admin b"), client: .none(clientID: "id&client_id=evil"))
    _ = try await provider.refreshAccessToken()
    let request = try #require(await fixture.tokenEndpoint.requests.first)
    #expect(
      Fixture.form(request) == [
        "grant_type": "refresh_token", "refresh_token": refresh, "scope": "a&scope=admin b",
        "client_id": "id&client_id=evil",
      ])
  }

  /// A storage that cannot save the rotated refresh token: the new access token is not handed
  /// over, so it is never used while the refresh token that goes with it is only in memory.
  @Test func aTokenWhoseRotationCannotBeSavedIsNotUsed() async throws {
    let fixture = Fixture(stored: StoredTokens(refreshToken: "refresh-0"))
    let provider = try OAuth2TokenProvider(
      tokenEndpoint: Fixture.tokenURL, grant: .refreshToken(), client: .none(clientID: "dogpatch"),
      storage: FailingStorage(), transport: fixture.tokenEndpoint)
    let auth = BearerAuthenticationMiddleware(provider: provider, clock: fixture.clock)
    let client = APIClient(
      baseURL: Fixture.apiURL, transport: fixture.api,
      configuration: .init(middleware: [auth], clock: fixture.clock))
    let failure = await Fixture.failure(of: client)
    #expect((failure as? TokenStorageError)?.reason == "the disk is full")
    #expect(await fixture.api.requests.isEmpty)
  }

  /// A storage that has a refresh token but can save nothing.
  struct FailingStorage: TokenStorage {
    func load() async throws -> StoredTokens? { StoredTokens(refreshToken: "refresh-0") }
    func save(_ tokens: StoredTokens) async throws {
      throw TokenStorageError(reason: "the disk is full")
    }
    func remove() async throws {}
  }

  /// A stored expiry that makes no sense (not a number, far past or future) neither traps nor
  /// shows a token.
  @Test(arguments: [Double.nan, .infinity, -.infinity, 1e300, -1e300, 0])
  func anAbsurdStoredExpiryDoesNotTrap(seconds: Double) async throws {
    let tokens = StoredTokens(
      accessToken: "access-0", expiresAt: Date(timeIntervalSince1970: seconds),
      refreshToken: "refresh-0")
    Self.expectNoLeak(in: tokens)
    let fixture = Fixture(stored: tokens)
    let token = try await fixture.provider().currentAccessToken()
    #expect(token?.value == "access-0")
    let data = try? JSONEncoder().encode(tokens)
    if let data {
      #expect(try JSONDecoder().decode(StoredTokens.self, from: data).refreshToken == "refresh-0")
    }
  }

  /// The access token the provider got never goes to another origin, even to an endpoint that
  /// says it needs authentication.
  @Test func theAccessTokenStaysAtTheAPIsOrigin() async throws {
    let fixture = Fixture()
    let client = fixture.client(try fixture.provider())
    let elsewhere = try #require(URL(string: "https://evil.example/collect"))
    _ = try await client.send(
      Endpoint<Data>(url: elsewhere, requiresAuthentication: true, decoding: .data))
    let sent = try #require(await fixture.api.requests.first)
    #expect(sent.url.host == "evil.example" && sent.headers["Authorization"] == nil)
  }

  /// The events and log lines of a call whose token the provider refreshed, and of one whose
  /// refresh failed with a server echoing the refresh token: no token, no secret.
  @Test func eventsAndLogsShowNoTokenOrSecret() async throws {
    let fixture = Fixture(stored: Fixture.fresh(lifetime: -1)) { _, n in
      n == 1
        ? Fixture.granted(n, lifetime: 1)
        : Fixture.json(#"{"error":"invalid_grant","error_description":"refresh-1"}"#, status: 400)
    }
    let provider = try fixture.provider()
    let listener = RecordingListener()
    let logged = Locked<[String]>([])
    let auth = BearerAuthenticationMiddleware(provider: provider, clock: fixture.clock)
    let client = APIClient(
      baseURL: Fixture.apiURL, transport: fixture.api,
      configuration: .init(
        middleware: [
          LoggingMiddleware { event in logged.withLock { $0.append(event.message) } }, auth,
        ],
        clock: fixture.clock, eventListeners: [listener]))
    _ = try await client.send(Fixture.secured)
    var events = await listener.eventsOfOneCall()
    await fixture.clock.advance(by: .seconds(2))
    _ = try? await client.send(Fixture.secured)
    events += await listener.eventsOfOneCall()
    #expect(events.contains { $0.kind.name == "tokenRefreshFinished" })
    for form in printedForms(of: events) + logged.withLock({ $0 }) {
      #expect(!Self.leaks(form), "\(form)")
    }
  }
}
