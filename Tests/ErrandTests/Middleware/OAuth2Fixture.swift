import Errand
import ErrandTesting
import Foundation
import TestSupport

/// A token endpoint and an API on stubs, a `TestClock` and a date that follows it: what the OAuth 2
/// suites share.
struct OAuth2Fixture {
  static let tokenURL = URL(string: "https://auth.example.com/oauth/token")!
  static let apiURL = URL(string: "https://api.example.com")!
  static let secured = Endpoint<Dog>(path: "me", requiresAuthentication: true)
  static let start = Date(timeIntervalSince1970: 1_700_000_000)
  static let secret = "s3cret-client-PASS"

  let clock = TestClock()
  /// How many grants the token endpoint answered.
  let grants = Locked(0)
  let storage: InMemoryTokenStorage
  let tokenEndpoint: StubTransport
  let api: StubTransport

  /// - Parameters:
  ///   - stored: The tokens in the storage at first.
  ///   - answer: The token endpoint's answer to grant number `n` (1 for the first); by default
  ///     ``granted(_:lifetime:rotates:)``.
  init(
    stored: StoredTokens? = Self.fresh(),
    answer: (@Sendable (HTTPRequest, Int) async throws -> StubResponse)? = nil
  ) {
    storage = InMemoryTokenStorage(stored)
    let grants = grants
    let clock = clock
    tokenEndpoint = StubTransport(clock: clock) { request in
      let n = grants.withLock {
        $0 += 1
        return $0
      }
      return try await (answer ?? { _, n in Self.granted(n) })(request, n)
    }
    let storage = storage
    // The API answers with the Authorization it got, and the refresh token stored at that moment.
    api = StubTransport { request in
      let stored = try await storage.load()?.refreshToken ?? "none"
      return .json(Dog(name: "\(request.headers["Authorization"] ?? "none") | \(stored)"))
    }
  }

  /// Tokens stored at ``start``: `access-0` for an hour, and `refresh-0`.
  static func fresh(lifetime: TimeInterval = 3600) -> StoredTokens {
    StoredTokens(
      accessToken: "access-0", expiresAt: start.addingTimeInterval(lifetime),
      refreshToken: "refresh-0")
  }

  /// A successful token response for grant `n`: `access-n`, and `refresh-n` when it rotates.
  static func granted(_ n: Int, lifetime: Int = 3600, rotates: Bool = true) -> StubResponse {
    let refresh = rotates ? #","refresh_token":"refresh-\#(n)""# : ""
    return json(
      #"{"access_token":"access-\#(n)","token_type":"Bearer","expires_in":\#(lifetime)\#(refresh)}"#
    )
  }

  /// `text` as a JSON answer.
  static func json(_ text: String, status: Int = 200) -> StubResponse {
    .status(status, body: Data(text.utf8), headers: ["Content-Type": "application/json"])
  }

  /// The date on the fixture's clock.
  var now: @Sendable () -> Date {
    let clock = clock
    return {
      let (seconds, attoseconds) = clock.now.offset.components
      return Self.start.addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18)
    }
  }

  func provider(
    grant: OAuth2Grant = .refreshToken(),
    client: OAuth2ClientAuthentication = .basic(clientID: "dogpatch", secret: Self.secret)
  ) throws -> OAuth2TokenProvider {
    try OAuth2TokenProvider(
      tokenEndpoint: Self.tokenURL, grant: grant, client: client, storage: storage,
      transport: tokenEndpoint, now: now)
  }

  /// A client of the API whose calls carry `provider`'s tokens, refreshed `leeway` early.
  func client(_ provider: OAuth2TokenProvider, leeway: Duration = .seconds(60)) -> APIClient {
    let auth = BearerAuthenticationMiddleware(provider: provider, leeway: leeway, clock: clock)
    return APIClient(
      baseURL: Self.apiURL, transport: api, configuration: .init(middleware: [auth], clock: clock))
  }

  /// The form fields of a token request.
  static func form(_ request: HTTPRequest) -> [String: String] {
    let text = String(decoding: request.body ?? Data(), as: UTF8.self)
    var fields: [String: String] = [:]
    for pair in text.split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1).map {
        String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
      }
      fields[parts[0]] = parts.count > 1 ? parts[1] : ""
    }
    return fields
  }

  /// The error a call to the secured endpoint ends with, unwrapped from `APIError` and
  /// `AuthenticationError`.
  static func failure(of client: APIClient) async -> (any Error)? {
    do {
      _ = try await client.send(secured)
      return nil
    } catch APIError.transport(AuthenticationError.refreshFailed(let cause)) {
      return cause
    } catch {
      return error
    }
  }
}
