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
/// ```swift
/// let auth = BearerAuthenticationMiddleware(provider: SessionTokens(store: store))
/// let client = APIClient(server: .production, transport: URLSessionTransport(),
///                        configuration: .init(middleware: [auth]))
/// ```
public actor BearerAuthenticationMiddleware: Middleware {
  private let provider: any TokenProvider
  private let refreshLimit: Int
  private let refreshWindow: Duration
  private var token: String?
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
  ///   - clock: The clock the window is measured on. The window spans calls and starts when the
  ///     middleware is created, before any client's clock is known, so it is not read from the
  ///     calling client: a test that gives its client a `TestClock` passes it here too.
  public init(
    provider: any TokenProvider, refreshLimit: Int = 5, refreshWindow: Duration = .seconds(60),
    clock: any Clock<Duration> = ContinuousClock()
  ) {
    self.provider = provider
    self.refreshLimit = max(1, refreshLimit)
    self.refreshWindow = refreshWindow
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

  /// The token to send, with the refresh generation it belongs to: the cached one, else the
  /// provider's, else a refreshed one.
  private func currentToken() async throws -> (String, Int) {
    if !loaded {
      // Raced against the caller's cancellation, as a refresh is: a provider that waits (for a
      // keychain, a sign-in) without looking at cancellation does not hold a cancelled call.
      let provider = provider
      let provided = try await withCancellation(endedBy: RequestContext.current?.cancellation) {
        try await provider.currentToken()
      }
      if !loaded {
        token = provided
        loaded = true
      }
    }
    let readAt = generation
    if let token {
      return (token, readAt)
    }
    let fresh = try await token(replacing: nil, readAt: readAt)
    return (fresh, generation)
  }

  /// A token other than `rejected`, read at refresh generation `readAt`: the outcome of a refresh
  /// that ended since, the refresh in progress, or a new refresh.
  private func token(replacing rejected: String?, readAt: Int) async throws -> String {
    if generation > readAt, let lastOutcome {
      return try lastOutcome.get()
    }
    if let token, token != rejected {
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
        let fresh = try await provider.refreshToken()
        self.finishRefresh(with: .success(fresh))
        return fresh
      } catch {
        let failure = AuthenticationError.refreshFailed(error)
        self.finishRefresh(with: .failure(failure))
        throw failure
      }
    }
    refreshing = task
    return task
  }

  private func finishRefresh(with outcome: Result<String, any Error>) {
    if case .success(let fresh) = outcome {
      token = fresh
      loaded = true
    }
    lastOutcome = outcome
    generation += 1
    refreshing = nil
  }
}

// Its waits (if any) end when the call's client cancels the call (`CallCancellation`).
extension BearerAuthenticationMiddleware: CallCancellationAware {}
