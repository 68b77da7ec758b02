import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// An OAuth 2 token provider against a stub token endpoint, on a `TestClock`: refreshed a leeway
/// before expiry, rotated refresh tokens saved before use, `invalid_grant` told apart.
@Suite(.timeLimit(.minutes(3))) struct OAuth2TokenProviderTests {
  typealias Fixture = OAuth2Fixture

  /// A stored token valid for an hour goes for 59 minutes, then one refresh-token grant replaces
  /// it, spending `refresh-0`.
  @Test func theTokenIsRefreshedALeewayBeforeItExpires() async throws {
    let fixture = Fixture()
    let provider = try fixture.provider()
    let client = fixture.client(provider)
    #expect(try await client.send(Fixture.secured).name == "Bearer access-0 | refresh-0")
    await fixture.clock.advance(by: .seconds(3539))
    #expect(try await client.send(Fixture.secured).name == "Bearer access-0 | refresh-0")
    await fixture.clock.advance(by: .seconds(1))
    #expect(try await client.send(Fixture.secured).name == "Bearer access-1 | refresh-1")
    #expect(try await client.send(Fixture.secured).name == "Bearer access-1 | refresh-1")
    #expect(await provider.tokenRequestCount == 1)
    let request = try #require(await fixture.tokenEndpoint.requests.first)
    #expect(request.method == .post && request.url == Fixture.tokenURL)
    #expect(request.headers["Content-Type"] == "application/x-www-form-urlencoded")
    #expect(Fixture.form(request) == ["grant_type": "refresh_token", "refresh_token": "refresh-0"])
    let stored = try #require(try await fixture.storage.load())
    #expect(stored.accessToken == "access-1" && stored.refreshToken == "refresh-1")
    #expect(stored.expiresAt == Fixture.start.addingTimeInterval(3540 + 3600))
  }

  /// The rotated refresh token is in the storage before the new access token reaches the API
  /// (the API stub reads the storage as the request arrives).
  @Test func aRotatedRefreshTokenIsSavedBeforeTheNewAccessTokenIsUsed() async throws {
    let fixture = Fixture(stored: StoredTokens(refreshToken: "refresh-0"))
    let client = fixture.client(try fixture.provider())
    #expect(try await client.send(Fixture.secured).name == "Bearer access-1 | refresh-1")
  }

  /// An answer without a refresh token keeps the old one, which the next grant spends again.
  @Test func anAnswerWithoutARefreshTokenKeepsTheOldOne() async throws {
    let fixture = Fixture { _, n in Fixture.granted(n, rotates: false) }
    let provider = try fixture.provider()
    _ = try await provider.refreshAccessToken()
    _ = try await provider.refreshAccessToken()
    let requests = await fixture.tokenEndpoint.requests
    #expect(requests.map { Fixture.form($0)["refresh_token"] } == ["refresh-0", "refresh-0"])
    #expect(try await fixture.storage.load()?.refreshToken == "refresh-0")
    #expect(try await fixture.storage.load()?.accessToken == "access-2")
  }

  /// `invalid_grant` fails the call with an `OAuth2Error` that says so, removes the tokens from
  /// the storage, and later calls fail at once without asking the server again.
  @Test func invalidGrantIsDistinctAndClearsTheStorage() async throws {
    let fixture = Fixture(stored: StoredTokens(refreshToken: "refresh-0")) { _, _ in
      Fixture.json(
        #"{"error":"invalid_grant","error_description":"Token revoked"}"#, status: 400)
    }
    let client = fixture.client(try fixture.provider())
    let failure = await Fixture.failure(of: client)
    let error = try #require(failure as? OAuth2Error)
    #expect(error.isInvalidGrant && error.code == OAuth2Error.invalidGrant)
    #expect(error.message == "Token revoked" && error.status == 400)
    #expect(try await fixture.storage.load() == nil)
    let again = await Fixture.failure(of: client)
    #expect((again as? OAuth2TokenEndpointError)?.reason == .noRefreshToken)
    #expect(OAuth2TokenProvider.requiresSignIn(try #require(failure)))
    #expect(OAuth2TokenProvider.requiresSignIn(try #require(again)))
    #expect(fixture.grants.withLock { $0 } == 1)
  }

  /// Other OAuth errors are not `invalid_grant` and leave the storage alone.
  @Test(arguments: [OAuth2Error.invalidClient, OAuth2Error.invalidScope, "temporarily_unavailable"])
  func otherErrorsLeaveTheStorageAlone(code: String) async throws {
    let fixture = Fixture { _, _ in Fixture.json(#"{"error":"\#(code)"}"#, status: 401) }
    let provider = try fixture.provider()
    let error = await #expect(throws: OAuth2Error.self) { try await provider.refreshAccessToken() }
    #expect(error?.code == code && error?.isInvalidGrant == false && error?.status == 401)
    #expect(error.map { OAuth2TokenProvider.requiresSignIn($0) } == false)
    #expect(try await fixture.storage.load() == Fixture.fresh())
  }

  /// Each client authentication method, with an ID and secret that need form-encoding (RFC 6749
  /// §2.3.1: encoded, then Basic).
  static let authentications: [(OAuth2ClientAuthentication, String?, [String: String])] = [
    (
      .basic(clientID: "dog patch", secret: "s:cr+t é"),
      "Basic " + Data("dog+patch:s%3Acr%2Bt+%C3%A9".utf8).base64EncodedString(), [:]
    ),
    (
      .post(clientID: "dog patch", secret: "s:cr+t é"), nil,
      ["client_id": "dog patch", "client_secret": "s:cr+t é"]
    ),
    (.none(clientID: "dog patch"), nil, ["client_id": "dog patch"]),
  ]

  /// The client-credentials grant, with a scope, and each way of authenticating the client.
  @Test(arguments: authentications)
  func clientCredentials(
    client: OAuth2ClientAuthentication, authorization: String?, fields: [String: String]
  ) async throws {
    let fixture = Fixture(stored: nil) { _, n in Fixture.granted(n, rotates: false) }
    let provider = try fixture.provider(
      grant: .clientCredentials(scope: "dogs:read dogs:write"), client: client)
    let api = fixture.client(provider)
    #expect(try await api.send(Fixture.secured).name == "Bearer access-1 | none")
    let request = try #require(await fixture.tokenEndpoint.requests.first)
    #expect(request.headers["Authorization"] == authorization)
    let expected = fields.merging([
      "grant_type": "client_credentials", "scope": "dogs:read dogs:write",
    ]) { $1 }
    #expect(Fixture.form(request) == expected)
    #expect(try await fixture.storage.load()?.refreshToken == nil)
  }

  /// 100 calls that find the token due share one grant, through the middleware.
  @Test func hundredCallsThroughTheMiddlewareMakeOneTokenRequest() async throws {
    let fixture = Fixture()
    let provider = try fixture.provider()
    let client = fixture.client(provider)
    _ = try await client.send(Fixture.secured)
    await fixture.clock.advance(by: .seconds(3550))
    let names = try await withThrowingTaskGroup(of: String.self) { group in
      for _ in 0..<100 {
        group.addTask { try await client.send(Fixture.secured).name }
      }
      return try await group.reduce(into: Set<String>()) { $0.insert($1) }
    }
    #expect(names == ["Bearer access-1 | refresh-1"])
    #expect(await provider.tokenRequestCount == 1)
  }

  /// 100 calls to the provider itself, outside any middleware, while a grant is under way, share
  /// it; its failure reaches each of them once, and the next call asks again.
  @Test(arguments: [true, false])
  func hundredDirectCallsShareOneTokenRequest(succeeds: Bool) async throws {
    let fixture = Fixture { _, n in
      let answer =
        succeeds
        ? Fixture.granted(n) : Fixture.json(#"{"error":"invalid_request"}"#, status: 400)
      return answer.delayed(by: .seconds(1))
    }
    let provider = try fixture.provider()
    let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
      for _ in 0..<100 {
        group.addTask {
          do {
            return try await provider.refreshAccessToken().value
          } catch let error as OAuth2Error {
            return error.code
          }
        }
      }
      try #require(await fixture.clock.waitForSleepers(1))
      while await provider.joinedRequestCount < 99 { await Task.yield() }
      await fixture.clock.advance(by: .seconds(1))
      return try await group.reduce(into: [String]()) { $0.append($1) }
    }
    #expect(outcomes == Array(repeating: succeeds ? "access-1" : "invalid_request", count: 100))
    #expect(await provider.tokenRequestCount == 1)
    async let next = provider.refreshAccessToken()
    try #require(await fixture.clock.waitForSleepers(1))
    await fixture.clock.advance(by: .seconds(1))
    _ = try? await next
    #expect(await provider.tokenRequestCount == 2)
  }

  /// A stored token that has expired is never sent: the grant fails, and nothing reaches the API.
  @Test func anExpiredTokenIsNeverSent() async throws {
    let fixture = Fixture(stored: Fixture.fresh(lifetime: -10)) { _, _ in .status(503) }
    let client = fixture.client(try fixture.provider(), leeway: .zero)
    let failure = await Fixture.failure(of: client)
    #expect((failure as? OAuth2TokenEndpointError)?.reason == .unexpectedStatus)
    #expect((failure as? OAuth2TokenEndpointError)?.status == 503)
    #expect(await fixture.api.requests.isEmpty)
  }

  /// A token endpoint that is not HTTPS is refused when the provider is made, but for loopback
  /// hosts.
  @Test(arguments: [
    ("http://auth.example.com/token", false), ("https://auth.example.com/token", true),
    ("http://127.0.0.1:8080/token", true), ("http://localhost/token", true),
    ("http://[::1]:9000/token", true), ("ftp://auth.example.com/token", false),
    ("https://user:pw@auth.example.com/token", false), ("http://127.0.0.2/token", false),
  ])
  func onlyHTTPSOrLoopbackEndpoints(url: String, accepted: Bool) throws {
    let make = {
      try OAuth2TokenProvider(
        tokenEndpoint: URL(string: url)!, grant: .refreshToken(),
        client: .basic(clientID: "a", secret: Fixture.secret))
    }
    if accepted {
      _ = try make()
    } else {
      let error = #expect(throws: OAuth2TokenEndpointError.self) { try make() }
      #expect(error?.reason == .insecureEndpoint)
      #expect(error?.description.contains("pw") == false)
    }
  }

  /// Sign-in stores the tokens from the app's own exchange; sign-out forgets them.
  @Test func signInAndSignOut() async throws {
    let fixture = Fixture(stored: nil)
    let provider = try fixture.provider()
    #expect(try await provider.currentAccessToken() == nil)
    try await provider.signIn(Fixture.fresh())
    #expect(try await provider.currentAccessToken()?.value == "access-0")
    #expect(try await provider.currentAccessToken()?.lifetime == .seconds(3600))
    #expect(try await fixture.storage.load() == Fixture.fresh())
    try await provider.signOut()
    #expect(try await provider.currentAccessToken() == nil)
    #expect(try await fixture.storage.load() == nil)
  }

  /// A `401` from the API spends the refresh token once, though the stored token had not expired,
  /// and the call is retried with the new token.
  @Test func a401SpendsTheRefreshTokenOnce() async throws {
    let fixture = Fixture()
    let provider = try fixture.provider()
    let api = StubTransport { request in
      request.headers["Authorization"] == "Bearer access-0"
        ? .status(401) : .json(Dog(name: request.headers["Authorization"] ?? "none"))
    }
    let auth = BearerAuthenticationMiddleware(provider: provider, clock: fixture.clock)
    let client = APIClient(
      baseURL: Fixture.apiURL, transport: api,
      configuration: .init(middleware: [auth], clock: fixture.clock))
    #expect(try await client.send(Fixture.secured).name == "Bearer access-1")
    #expect(await provider.tokenRequestCount == 1)
    #expect(try await fixture.storage.load()?.refreshToken == "refresh-1")
  }

  /// The provider prints its grant, endpoint and client, which is all it shows.
  @Test func theProvidersDescription() throws {
    let provider = try Fixture().provider(grant: .clientCredentials(scope: "read"))
    #expect(
      provider.description
        == "OAuth 2 client_credentials grant (scope \"read\") at "
        + "https://auth.example.com/oauth/token (client_secret_basic as dogpatch)")
  }
}
