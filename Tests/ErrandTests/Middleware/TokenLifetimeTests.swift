import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// An expiring token provider: each refresh hands over `token-N`, valid for `lifetime`; the first
/// token is `token-0`. Refreshes are counted, and can be made to fail.
actor ExpiringTokens: ExpiringTokenProvider {
  struct Refused: Error {}

  private var current: AccessToken?
  private let lifetime: Duration
  private let fails: Bool
  private(set) var refreshes = 0

  init(lifetime: Duration, first: Duration? = nil, fails: Bool = false) {
    self.lifetime = lifetime
    self.current = AccessToken("token-0", lifetime: first ?? lifetime)
    self.fails = fails
  }

  func currentAccessToken() async throws -> AccessToken? { current }

  func refreshAccessToken() async throws -> AccessToken {
    refreshes += 1
    if fails { throw Refused() }
    let fresh = AccessToken("token-\(refreshes)", lifetime: lifetime)
    current = fresh
    return fresh
  }
}

/// Tokens that know their lifetime are refreshed before they expire, on the middleware's clock:
/// once, for every call that finds one due; never sent once expired.
@Suite(.timeLimit(.minutes(3))) struct TokenLifetimeTests {
  static let secured = Endpoint<Dog>(path: "me", requiresAuthentication: true)

  /// A server that answers every request with its `Authorization`, as a dog's name.
  static func echo() -> StubTransport {
    StubTransport { request in .json(Dog(name: request.headers["Authorization"] ?? "none")) }
  }

  static func client(
    _ stub: StubTransport, _ auth: BearerAuthenticationMiddleware, clock: TestClock
  ) -> APIClient {
    APIClient(
      baseURL: URL(string: "https://api.example.com")!, transport: stub,
      configuration: .init(middleware: [auth], clock: clock))
  }

  /// The cause of the failed refresh a call to the secured endpoint ends with.
  static func refreshFailure(of client: APIClient) async throws -> any Error {
    let error = await #expect(throws: APIError.self) { try await client.send(Self.secured) }
    guard case .transport(let underlying as AuthenticationError)? = error,
      case .refreshFailed(let cause) = underlying
    else {
      throw FailedRefreshMissing(error: String(describing: error))
    }
    return cause
  }

  struct FailedRefreshMissing: Error {
    var error: String
  }

  /// A token valid for an hour with a minute's leeway is sent for 59 minutes, then refreshed
  /// before the next call, once.
  @Test func aTokenIsRefreshedALeewayBeforeItExpires() async throws {
    let clock = TestClock()
    let tokens = ExpiringTokens(lifetime: .seconds(3600))
    let auth = BearerAuthenticationMiddleware(
      provider: tokens, leeway: .seconds(60), clock: clock)
    let client = Self.client(Self.echo(), auth, clock: clock)
    #expect(try await client.send(Self.secured).name == "Bearer token-0")
    await clock.advance(by: .seconds(3539))
    #expect(try await client.send(Self.secured).name == "Bearer token-0")
    await clock.advance(by: .seconds(1))
    #expect(try await client.send(Self.secured).name == "Bearer token-1")
    #expect(try await client.send(Self.secured).name == "Bearer token-1")
    #expect(await tokens.refreshes == 1)
  }

  /// 100 calls that find the token due share one refresh.
  @Test func hundredCallsShareOneRefresh() async throws {
    let clock = TestClock()
    let tokens = ExpiringTokens(lifetime: .seconds(600))
    let auth = BearerAuthenticationMiddleware(provider: tokens, clock: clock)
    let client = Self.client(Self.echo(), auth, clock: clock)
    _ = try await client.send(Self.secured)
    await clock.advance(by: .seconds(545))
    let names = try await withThrowingTaskGroup(of: String.self) { group in
      for _ in 0..<100 {
        group.addTask { try await client.send(Self.secured).name }
      }
      return try await group.reduce(into: [String]()) { $0.append($1) }
    }
    #expect(names.count == 100)
    #expect(Set(names) == ["Bearer token-1"])
    #expect(await tokens.refreshes == 1)
  }

  /// A token that has expired is never sent: with the refresh failing, the call fails with the
  /// refresh's error and nothing reaches the server.
  @Test func anExpiredTokenIsNeverSent() async throws {
    let clock = TestClock()
    let tokens = ExpiringTokens(lifetime: .seconds(60), fails: true)
    let auth = BearerAuthenticationMiddleware(provider: tokens, leeway: .zero, clock: clock)
    let stub = Self.echo()
    let client = Self.client(stub, auth, clock: clock)
    _ = try await client.send(Self.secured)
    await clock.advance(by: .seconds(60))
    let cause = try await Self.refreshFailure(of: client)
    #expect(cause is ExpiringTokens.Refused)
    #expect(await stub.requests.count == 1)
    #expect(await tokens.refreshes == 1)
  }

  /// A refresh that hands over a token already expired fails, naming `ExpiredTokenError`; the
  /// token is not sent.
  @Test func aRefreshThatHandsOverAnExpiredTokenFails() async throws {
    let clock = TestClock()
    let tokens = ExpiringTokens(lifetime: .zero, first: .seconds(10))
    let auth = BearerAuthenticationMiddleware(provider: tokens, leeway: .zero, clock: clock)
    let stub = Self.echo()
    let client = Self.client(stub, auth, clock: clock)
    _ = try await client.send(Self.secured)
    await clock.advance(by: .seconds(10))
    let cause = try await Self.refreshFailure(of: client)
    #expect((cause as? ExpiredTokenError)?.lifetime == .zero)
    #expect(await stub.requests.count == 1)
  }

  /// A token shorter-lived than twice the leeway is used for half its life before it is
  /// refreshed, rather than refreshed on every call.
  @Test func aShortTokenIsUsedForHalfItsLife() async throws {
    let clock = TestClock()
    let tokens = ExpiringTokens(lifetime: .seconds(30))
    let auth = BearerAuthenticationMiddleware(provider: tokens, leeway: .seconds(60), clock: clock)
    let client = Self.client(Self.echo(), auth, clock: clock)
    #expect(try await client.send(Self.secured).name == "Bearer token-0")
    await clock.advance(by: .seconds(14))
    #expect(try await client.send(Self.secured).name == "Bearer token-0")
    await clock.advance(by: .seconds(1))
    #expect(try await client.send(Self.secured).name == "Bearer token-1")
    #expect(await tokens.refreshes == 1)
  }

  /// A 401 still refreshes, once, a token whose lifetime says it is valid.
  @Test func anUnexpected401StillRefreshes() async throws {
    let clock = TestClock()
    let tokens = ExpiringTokens(lifetime: .seconds(3600))
    let auth = BearerAuthenticationMiddleware(provider: tokens, clock: clock)
    let stub = StubTransport { request in
      request.headers["Authorization"] == "Bearer token-1"
        ? .json(Dog(name: "Rex")) : .status(401)
    }
    let client = Self.client(stub, auth, clock: clock)
    #expect(try await client.send(Self.secured).name == "Rex")
    #expect(await tokens.refreshes == 1)
  }

  /// Neither an access token nor the error of an expired one prints the token.
  @Test func noPrintedFormShowsTheToken() {
    let token = AccessToken("SECRET-TOKEN-VALUE", lifetime: .seconds(90))
    for text in printedForms(of: token) {
      #expect(!text.contains("SECRET-TOKEN-VALUE"), "\(text)")
    }
    #expect("\(token)" == "access token (valid for 90 s)")
    #expect(
      AccessToken(
        "x", expiresAt: Date(timeIntervalSince1970: 100), now: Date(timeIntervalSince1970: 40)
      )
      .lifetime == .seconds(60))
  }
}
