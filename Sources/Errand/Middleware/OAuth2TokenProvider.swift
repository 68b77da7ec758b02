import Foundation

/// An ``ExpiringTokenProvider`` that gets its tokens from an OAuth 2 token endpoint (RFC 6749):
/// with the refresh-token grant (§6) or the client-credentials grant (§4.4), keeping them in a
/// ``TokenStorage``.
///
/// ```swift
/// let tokens = try OAuth2TokenProvider(
///   tokenEndpoint: URL(string: "https://auth.example.com/oauth/token")!,
///   grant: .refreshToken(),
///   client: .none(clientID: "dogpatch-ios"),
///   storage: KeychainTokenStorage())
/// let auth = BearerAuthenticationMiddleware(provider: tokens)
/// ```
///
/// - The current token is the one in the storage, loaded once; when it is missing or due,
///   ``BearerAuthenticationMiddleware`` asks for a new one before the call goes.
/// - A grant posts an `application/x-www-form-urlencoded` body, with the client authenticated as
///   ``OAuth2ClientAuthentication`` says. A rotated refresh token replaces the old one and is
///   saved before the new access token is handed over; an answer without one keeps the old one.
/// - Calls that ask for a new token while one is being fetched share it (single flight); a
///   failure is told to each of them once, and the next call asks again. A caller that is
///   cancelled stops waiting at once; the request goes on, and its tokens are saved, for the
///   others.
/// - An answer to a request sent before ``signOut()`` or ``signIn(_:)`` is not kept, and
///   `invalid_grant` to one removes nothing: after a sign-out its callers fail with
///   ``OAuth2TokenEndpointError/Reason/noRefreshToken``; after a sign-in they get the new
///   tokens' access token (or one the new refresh token buys).
/// - `invalid_grant` fails with ``OAuth2Error`` (``OAuth2Error/isInvalidGrant``) and removes the
///   tokens from the storage: later refreshes fail at once with
///   ``OAuth2TokenEndpointError/Reason/noRefreshToken`` without asking the server, until the user
///   signs in again (``signIn(_:)``). ``requiresSignIn(_:)`` tells both apart from other errors.
/// - The token endpoint must be HTTPS (plain HTTP only on a loopback host). An answer from another
///   origin (after a redirect), larger than 64 KiB, not JSON, without an `access_token` or of a
///   `token_type` other than `Bearer` fails with ``OAuth2TokenEndpointError``.
///
/// No printed form of the provider or its errors shows a token, the client secret or a request's
/// body.
public actor OAuth2TokenProvider: ExpiringTokenProvider {
  /// The token endpoint's URL.
  public nonisolated let tokenEndpoint: URL
  /// The grant used to get new tokens.
  public nonisolated let grant: OAuth2Grant
  /// How the client authenticates to the token endpoint.
  public nonisolated let client: OAuth2ClientAuthentication
  /// Where the tokens are kept.
  public nonisolated let storage: any TokenStorage

  /// The largest token response read, in bytes.
  public static let maximumResponseSize = 64 * 1024

  private let transport: any Transport
  private let timeout: Duration
  private let now: @Sendable () -> Date
  private var tokens: StoredTokens?
  private var loaded = false
  /// The refresh token this provider last read from its storage or wrote there: one the storage
  /// holds now that differs was written by someone else (another provider, another process).
  private var storedRefreshToken: String?
  private var refreshing: Task<AccessToken, any Error>?
  /// Counts sign-ins and sign-outs, so that a grant's answer for an earlier user is not kept.
  private var session = 0

  /// How many requests have been sent to the token endpoint, for metrics and tests.
  public private(set) var tokenRequestCount = 0
  /// How many calls joined a token request another call had started, for tests.
  package private(set) var joinedRequestCount = 0

  /// Create the provider.
  /// - Parameters:
  ///   - tokenEndpoint: The token endpoint: `https`, or `http` on a loopback host (`127.0.0.1`,
  ///     `::1`, `localhost`) for tests.
  ///   - grant: The grant that gets new tokens.
  ///   - client: How the client authenticates.
  ///   - storage: Where tokens are kept; in memory by default.
  ///   - transport: What sends the token requests; a new `URLSessionTransport` by default.
  ///   - timeout: The longest a token request may take; 30 seconds by default.
  ///   - now: The current date, for tokens' expiry dates; the system's by default. A test that
  ///     runs its middleware on a `TestClock` gives a date that follows it.
  /// - Throws: ``OAuth2TokenEndpointError`` with ``OAuth2TokenEndpointError/Reason/insecureEndpoint``
  ///   for an endpoint that is not HTTPS, or that holds a user or password.
  public init(
    tokenEndpoint: URL, grant: OAuth2Grant, client: OAuth2ClientAuthentication,
    storage: any TokenStorage = InMemoryTokenStorage(),
    transport: any Transport = URLSessionTransport(), timeout: Duration = .seconds(30),
    now: @escaping @Sendable () -> Date = { Date() }
  ) throws {
    try Self.checkEndpoint(tokenEndpoint)
    self.tokenEndpoint = tokenEndpoint
    self.grant = grant
    self.client = client
    self.storage = storage
    self.transport = transport
    self.timeout = timeout
    self.now = now
  }

  /// The access token in the storage, with how long it stays valid, or `nil` when there is none.
  public func currentAccessToken() async throws -> AccessToken? {
    try await loadIfNeeded()
    guard let value = tokens?.accessToken else { return nil }
    guard let expiresAt = tokens?.expiresAt else { return AccessToken(value) }
    return AccessToken(value, expiresAt: expiresAt, now: now())
  }

  /// A new access token from the token endpoint, saved in the storage before it is returned.
  /// Calls while one is being fetched share it; a caller that is cancelled stops waiting (the
  /// request goes on for the others, and its tokens are saved).
  /// - Throws: ``OAuth2Error`` when the server refuses the grant, ``OAuth2TokenEndpointError``
  ///   when its answer cannot be used, the transport's error, the storage's, or
  ///   `CancellationError` when the caller is cancelled.
  public func refreshAccessToken() async throws -> AccessToken {
    let task: Task<AccessToken, any Error>
    if let running = refreshing {
      joinedRequestCount += 1
      task = running
    } else {
      // Isolated to the provider: it starts after `refreshing` is set, and clears it itself
      // whether or not any caller still waits.
      task = Task {
        defer { self.refreshing = nil }
        return try await self.runGrant()
      }
      refreshing = task
    }
    return try await withCancellation { try await task.value }
  }

  /// Keep `tokens` (from your own sign-in: an authorization-code exchange, say) in the storage
  /// and use them from now on.
  /// - Parameter tokens: The tokens.
  /// - Throws: The storage's error.
  public func signIn(_ tokens: StoredTokens) async throws {
    session += 1
    self.tokens = tokens
    loaded = true
    storedRefreshToken = tokens.refreshToken
    try await storage.save(tokens)
  }

  /// Forget the tokens, here and in the storage.
  /// - Throws: The storage's error.
  public func signOut() async throws {
    session += 1
    tokens = nil
    loaded = true
    storedRefreshToken = nil
    try await storage.remove()
  }

  /// Whether `error` (as a call fails with it, or as the provider throws it) means the user must
  /// sign in again: the server answered `invalid_grant`, or there is no refresh token left.
  /// - Parameter error: The error.
  /// - Returns: `true` when the user must sign in.
  public nonisolated static func requiresSignIn(_ error: any Error) -> Bool {
    switch error {
    case let oauth as OAuth2Error: oauth.isInvalidGrant
    case let endpoint as OAuth2TokenEndpointError: endpoint.reason == .noRefreshToken
    case AuthenticationError.refreshFailed(let underlying): requiresSignIn(underlying)
    case APIError.transport(let underlying): requiresSignIn(underlying)
    default: false
    }
  }

  private func loadIfNeeded() async throws {
    guard !loaded else { return }
    let stored = try await storage.load()
    // A grant or sign-in that ended while the storage was read wins.
    if !loaded {
      tokens = stored
      loaded = true
      storedRefreshToken = stored?.refreshToken
    }
  }

  /// One request to the token endpoint, and what its answer means.
  private func runGrant() async throws -> AccessToken {
    try await loadIfNeeded()
    if grant.usesRefreshToken {
      try await adoptWhatOthersStored()
    }
    let previous = tokens
    let session = self.session
    var fields = [("grant_type", grant.grantType)]
    if grant.usesRefreshToken {
      guard let refreshToken = previous?.refreshToken else {
        throw OAuth2TokenEndpointError(
          .noRefreshToken, detail: "there is no refresh token: the user must sign in")
      }
      fields.append(("refresh_token", refreshToken))
    }
    if let scope = grant.scope {
      fields.append(("scope", scope))
    }
    fields += client.formFields
    var headers: HTTPHeaders = [
      "Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json",
    ]
    if let authorization = client.authorization {
      headers["Authorization"] = authorization
    }
    let request = HTTPRequest(
      method: .post, url: tokenEndpoint, headers: headers, body: FormEncoding.body(fields),
      timeout: timeout, maximumResponseSize: Self.maximumResponseSize)
    tokenRequestCount += 1
    // What the server's text must not repeat: the tokens and the secret, as written, as the form
    // carries them, and as the Basic credentials carry them.
    var secrets = [previous?.refreshToken, previous?.accessToken, client.secret].compactMap { $0 }
    secrets += secrets.map(FormEncoding.encode)
    if let authorization = client.authorization {
      secrets.append(String(authorization.dropFirst("Basic ".count)))
    }
    secrets.sort { $0.count > $1.count }
    let response: HTTPResponse
    do {
      response = try await transport.send(request)
    } catch let error as URLError where error.code == .dataLengthExceedsMaximum {
      throw Self.tooLarge(status: nil)
    }
    let answer = try OAuth2TokenResponse(
      response, from: tokenEndpoint, hiding: secrets, limit: Self.maximumResponseSize)
    guard session == self.session else { return try await afterSessionChange() }
    switch answer {
    case .refused(let error):
      if error.isInvalidGrant {
        // Unless someone else stored a newer refresh token meanwhile (the one refused was
        // spent already): then theirs is the session, and the user stays signed in.
        if let newer = try? await storage.load(), let rotated = newer.refreshToken,
          rotated != previous?.refreshToken, session == self.session
        {
          tokens = newer
          storedRefreshToken = rotated
          return try await runGrant()
        }
        tokens = nil
        loaded = true
        storedRefreshToken = nil
        try? await storage.remove()
      }
      throw error
    case .granted(let granted):
      let fresh = StoredTokens(
        accessToken: granted.accessToken,
        expiresAt: granted.lifetime.map { now().addingTimeInterval($0) },
        refreshToken: granted.refreshToken ?? previous?.refreshToken,
        scope: granted.scope ?? previous?.scope)
      tokens = fresh
      loaded = true
      // Saved before it is handed over: a rotated refresh token is never only in memory while
      // the new access token is in use.
      try await storage.save(fresh)
      storedRefreshToken = fresh.refreshToken
      // A sign-in or sign-out while it was saved wins, in the storage too.
      guard session == self.session else {
        if let current = tokens {
          try await storage.save(current)
        } else {
          try await storage.remove()
        }
        return try await afterSessionChange()
      }
      return AccessToken(
        granted.accessToken, lifetime: granted.lifetime.map { .seconds(Int64($0)) })
    }
  }

  /// Take the tokens in the storage when someone else (another provider on the same storage,
  /// another process) wrote a refresh token there since this provider last read or wrote it:
  /// with refresh-token rotation, the one this provider holds may be spent already, and spending
  /// it would answer `invalid_grant` and sign the user out. A storage that cannot be read now
  /// leaves what the provider holds (a rotation that could not be saved stays in memory).
  private func adoptWhatOthersStored() async throws {
    let session = self.session
    guard let stored = try? await storage.load(), session == self.session,
      let rotated = stored.refreshToken, rotated != storedRefreshToken,
      rotated != tokens?.refreshToken
    else { return }
    tokens = stored
    storedRefreshToken = rotated
  }

  /// What a grant sent before a sign-in or sign-out hands over instead of its answer: the new
  /// user's access token, or a grant of their own; after a sign-out, no token.
  private func afterSessionChange() async throws -> AccessToken {
    guard let current = tokens else {
      throw OAuth2TokenEndpointError(
        .noRefreshToken, detail: "the user signed out while a token was being fetched")
    }
    if let value = current.accessToken {
      let token = current.expiresAt.map { AccessToken(value, expiresAt: $0, now: now()) }
      if let token, let lifetime = token.lifetime, lifetime <= .zero {
        return try await runGrant()
      }
      return token ?? AccessToken(value)
    }
    return try await runGrant()
  }

  static func tooLarge(status: Int?) -> OAuth2TokenEndpointError {
    OAuth2TokenEndpointError(
      .responseTooLarge,
      detail: "the answer is larger than \(maximumResponseSize) bytes, too large for tokens",
      status: status)
  }

  private static func checkEndpoint(_ url: URL) throws {
    let scheme = url.scheme?.lowercased()
    let host = url.host?.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
    let loopback = ["127.0.0.1", "::1", "localhost"].contains(host ?? "")
    guard scheme == "https" || (scheme == "http" && loopback), host?.isEmpty == false else {
      throw OAuth2TokenEndpointError(
        .insecureEndpoint,
        detail: "the token endpoint \(url.redactedString) is not HTTPS: the client's secret and "
          + "tokens would travel in clear (plain HTTP is allowed on a loopback host only)")
    }
    guard url.user == nil, url.password == nil else {
      throw OAuth2TokenEndpointError(
        .insecureEndpoint,
        detail: "the token endpoint \(url.redactedString) holds a user or password: give the "
          + "client's credentials as OAuth2ClientAuthentication")
    }
  }
}

extension OAuth2TokenProvider: CustomStringConvertible, CustomReflectable {
  /// `OAuth 2 refresh_token grant at https://auth.example.com/token (client_secret_basic as app)`.
  public nonisolated var description: String {
    "OAuth 2 \(grant) at \(tokenEndpoint.redactedString) (\(client))"
  }

  /// The provider for `dump` and debuggers: its endpoint, grant and client, never a token or the
  /// secret.
  public nonisolated var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "tokenEndpoint": tokenEndpoint.redactedString, "grant": grant.description,
        "client": client.description, "storage": String(describing: type(of: storage)),
      ], displayStyle: .class)
  }
}
