import Foundation

/// Adds `Authorization: Bearer <token>` to endpoints that need it and refreshes the token once
/// when the server answers `401`.
///
/// Requests that hit `401` together share one refresh (single flight) and then each retry once
/// with the new token; a request is never retried twice, so a server that keeps rejecting tokens
/// cannot make it loop. A failed refresh fails every waiting request with
/// ``AuthenticationError/refreshFailed(_:)``. At most `refreshLimit` refreshes run per
/// `refreshWindow`; beyond that requests fail with ``AuthenticationError/refreshLimitReached(limit:window:)``.
/// A waiting request that is cancelled stops waiting, for a refresh or for the provider's first
/// token; the shared refresh goes on for the others.
///
/// With an ``ExpiringTokenProvider``, a token is also refreshed before it expires: once less than
/// `leeway` of its lifetime is left (or half of it has passed, for a token that lasts less than
/// twice the leeway), on the middleware's clock. That refresh is the same single flight. When it
/// fails, a call whose token has not expired yet goes with it (a `401` still refreshes it); a
/// token known to have expired is never sent, and a refresh that hands one over fails with
/// ``AuthenticationError/refreshFailed(_:)`` wrapping ``ExpiredTokenError``.
///
/// ```swift
/// let auth = BearerAuthenticationMiddleware(provider: SessionTokens(store: store))
/// let client = APIClient(server: .production, transport: URLSessionTransport(),
///                        configuration: .init(middleware: [auth]))
/// ```
public actor BearerAuthenticationMiddleware: Middleware {
  private let provider: any TokenProvider
  private let refreshLimit: Int
  private let refreshWindow: Duration
  private let leeway: Duration
  private var token: String?
  /// When, on ``stopwatch``, the token should be refreshed and when it expires; `nil` when its
  /// lifetime is unknown.
  private var expiry: (refreshAfter: Duration, expiresAt: Duration)?
  private var loaded = false
  private var refreshing: Task<String, any Error>?
  /// When recent refreshes started, as times since this middleware was created.
  private var refreshTimes: [Duration] = []
  private let stopwatch: Stopwatch
  /// Counts finished refreshes, so a request knows whether one ended after it read its token.
  private var generation = 0
  /// How the latest refresh ended, for requests that read their token before it.
  private var lastOutcome: Result<String, any Error>?

  /// How many refreshes have run, for metrics and tests.
  public private(set) var refreshCount = 0

  /// Create the middleware.
  /// - Parameters:
  ///   - provider: Supplies and refreshes the token.
  ///   - refreshLimit: The most refreshes allowed within `refreshWindow`.
  ///   - refreshWindow: The window for `refreshLimit`.
  ///   - leeway: How long before an ``ExpiringTokenProvider``'s token expires it is refreshed;
  ///     60 seconds by default.
  ///   - clock: The clock the window and tokens' lifetimes are measured on. The window spans
  ///     calls and starts when the middleware is created, before any client's clock is known,
  ///     so it is not read from the calling client: a test that gives its client a `TestClock`
  ///     passes it here too.
  public init(
    provider: any TokenProvider, refreshLimit: Int = 5, refreshWindow: Duration = .seconds(60),
    leeway: Duration = .seconds(60), clock: any Clock<Duration> = ContinuousClock()
  ) {
    self.provider = provider
    self.refreshLimit = max(1, refreshLimit)
    self.refreshWindow = refreshWindow
    self.leeway = max(.zero, leeway)
    self.stopwatch = Stopwatch(clock)
  }

  /// Send the request with the token when its endpoint needs one; on `401`, refresh and retry once.
  public nonisolated func intercept(
    _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    guard RequestContext.current?.requiresAuthentication == true else {
      return try await next(request)
    }
    let (sent, generation) = try await currentToken()
    let response = try await next(authorized(request, with: sent))
    guard response.status == 401 else { return response }
    let events = RequestContext.current?.events
    events?.post(.tokenRefreshStarted)
    let fresh: String
    do {
      fresh = try await token(replacing: sent, readAt: generation)
      events?.post(.tokenRefreshFinished(succeeded: true))
    } catch {
      events?.post(.tokenRefreshFinished(succeeded: false))
      throw error
    }
    return try await next(authorized(request, with: fresh))
  }

  private nonisolated func authorized(_ request: HTTPRequest, with token: String) -> HTTPRequest {
    var request = request
    request.headers["Authorization"] = "Bearer \(token)"
    return request
  }

  /// The token to send, with the refresh generation it belongs to: the cached one while it is
  /// not due for a refresh, else the provider's, else a refreshed one.
  private func currentToken() async throws -> (String, Int) {
    if !loaded {
      // Raced against the caller's cancellation, as a refresh is: a provider that waits (for a
      // keychain, a sign-in) without looking at cancellation does not hold a cancelled call.
      let provider = provider
      let provided = try await withCancellation(endedBy: RequestContext.current?.cancellation) {
        try await Self.load(provider)
      }
      if !loaded {
        adopt(provided)
        loaded = true
      }
    }
    let readAt = generation
    guard let due = token else {
      // No token yet: refreshed (or joining the refresh under way).
      let fresh = try await token(replacing: nil, readAt: readAt)
      return (fresh, generation)
    }
    guard isDue else { return (due, readAt) }
    // Due (or expired): refreshed before it is sent, as a 401 would have it refreshed.
    let events = RequestContext.current?.events
    events?.post(.tokenRefreshStarted)
    do {
      let fresh = try await token(replacing: due, readAt: readAt)
      events?.post(.tokenRefreshFinished(succeeded: true))
      return (fresh, generation)
    } catch {
      events?.post(.tokenRefreshFinished(succeeded: false))
      // An early refresh that fails leaves a token that has not expired usable: the call goes
      // with it (a 401 still refreshes it); an expired one is never sent.
      if !(error is CancellationError), token == due, !hasExpired {
        return (due, readAt)
      }
      throw error
    }
  }

  /// Whether the token is due for a refresh: its lifetime is known and less than the leeway of
  /// it is left.
  private var isDue: Bool {
    guard let expiry else { return false }
    return stopwatch.elapsed >= expiry.refreshAfter
  }

  /// Whether the token is known to have expired.
  private var hasExpired: Bool {
    guard let expiry else { return false }
    return stopwatch.elapsed >= expiry.expiresAt
  }

  /// Keep `provided` as the token, with when it is due and when it expires.
  private func adopt(_ provided: AccessToken?) {
    token = provided?.value
    expiry = provided?.lifetime.map { lifetime in
      let now = stopwatch.elapsed
      return (now + max(lifetime - leeway, lifetime / 2), now + lifetime)
    }
  }

  /// A token other than `rejected`, read at refresh generation `readAt`: the outcome of a refresh
  /// that ended since, the current token when it has not expired, the refresh in progress, or a
  /// new refresh.
  private func token(replacing rejected: String?, readAt: Int) async throws -> String {
    // A refresh that ended since this token was read: its outcome. A failure is told, once, to
    // the calls that read the token before it (a failing refresh surfaces once, not as a storm of
    // refreshes).
    if generation > readAt, let lastOutcome, !hasExpired {
      return try lastOutcome.get()
    }
    if let token, token != rejected, !isDue {
      return token
    }
    let refresh: Task<String, any Error>
    if let running = refreshing {
      refresh = running
    } else {
      refresh = try startRefresh()
    }
    return try await withCancellation(endedBy: RequestContext.current?.cancellation) {
      try await refresh.value
    }
  }

  /// The provider's current token, with its lifetime when the provider knows it.
  private static func load(_ provider: any TokenProvider) async throws -> AccessToken? {
    if let expiring = provider as? any ExpiringTokenProvider {
      return try await expiring.currentAccessToken()
    }
    return try await provider.currentToken().map { AccessToken($0) }
  }

  /// A new token from the provider, with its lifetime when the provider knows it.
  private static func refresh(_ provider: any TokenProvider) async throws -> AccessToken {
    if let expiring = provider as? any ExpiringTokenProvider {
      return try await expiring.refreshAccessToken()
    }
    return AccessToken(try await provider.refreshToken())
  }

  private func startRefresh() throws -> Task<String, any Error> {
    let now = stopwatch.elapsed
    refreshTimes.removeAll { now - $0 >= refreshWindow }
    guard refreshTimes.count < refreshLimit else {
      throw AuthenticationError.refreshLimitReached(limit: refreshLimit, window: refreshWindow)
    }
    refreshTimes.append(now)
    refreshCount += 1
    let provider = provider
    let task = Task { () throws -> String in
      do {
        let fresh = try await Self.refresh(provider)
        if let lifetime = fresh.lifetime, lifetime <= .zero {
          throw ExpiredTokenError(lifetime: lifetime)
        }
        self.finishRefresh(with: .success(fresh))
        return fresh.value
      } catch {
        let failure = AuthenticationError.refreshFailed(error)
        self.finishRefresh(with: .failure(failure))
        throw failure
      }
    }
    refreshing = task
    return task
  }

  private func finishRefresh(with outcome: Result<AccessToken, any Error>) {
    if case .success(let fresh) = outcome {
      adopt(fresh)
      loaded = true
    }
    lastOutcome = outcome.map(\.value)
    generation += 1
    refreshing = nil
  }
}

// Its waits (if any) end when the call's client cancels the call (`CallCancellation`).
extension BearerAuthenticationMiddleware: CallCancellationAware {}

extension BearerAuthenticationMiddleware: CustomReflectable {
  /// The middleware for `dump`, debuggers and test failures: its settings, never its token (the
  /// synthesized mirror would show the token and the last refresh's outcome).
  public nonisolated var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "provider": String(describing: type(of: provider)), "refreshLimit": refreshLimit,
        "refreshWindow": refreshWindow, "leeway": leeway,
      ], displayStyle: .class)
  }
}
