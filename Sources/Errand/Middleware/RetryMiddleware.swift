import Foundation

/// Sends a request again when it fails in a way worth retrying, waiting between attempts.
///
/// It retries the statuses and network failures of its ``RetryPolicy``, only for idempotent
/// requests (see ``Endpoint/isIdempotent``) and those that carry an idempotency key (see
/// ``Endpoint/withIdempotencyKey(_:)``: every attempt sends the call's one key), with
/// exponential backoff and full jitter, and honours `Retry-After` in seconds or as an HTTP-date,
/// capped by the policy. Waits run on the injected clock, so tests pass a `TestClock` and take no
/// wall time; a cancelled task stops waiting at once.
/// When attempts run out, the last response or error is returned, and its description says how
/// many attempts were made.
///
/// The call's timeout is a deadline for the whole call, retries and their waits included: a
/// retry whose wait would end at or after the deadline (``RequestContext/remainingTime``) is not
/// made, and the last response or error is returned at once, saying so
/// (``HTTPResponse/retryPastDeadline``).
///
/// ```swift
/// let client = APIClient(baseURL: base, transport: URLSessionTransport(),
///                        configuration: .init(middleware: [RetryMiddleware(policy: RetryPolicy(maxAttempts: 4))]))
/// ```
public struct RetryMiddleware: Middleware {
  /// When and how long to wait.
  public var policy: RetryPolicy
  /// The clock given at creation; `nil` to wait on the calling client's clock.
  private let clock: (any Clock<Duration>)?
  private let now: @Sendable () -> Date
  private let random: @Sendable (Duration) -> Duration

  /// Create the middleware.
  /// - Parameters:
  ///   - policy: When and how long to wait.
  ///   - clock: The clock that waits run on; `nil` (the default) for the calling client's
  ///     ``APIClient/Configuration/clock`` (read from ``RequestContext/clock``), so a client
  ///     given a `TestClock` has its retries wait on it too; the continuous clock outside a client.
  ///   - now: The current date, for `Retry-After` dates.
  public init(
    policy: RetryPolicy = RetryPolicy(), clock: (any Clock<Duration>)? = nil,
    now: @escaping @Sendable () -> Date = { Date() }
  ) {
    self.policy = policy
    self.clock = clock
    self.now = now
    self.random = { limit in
      // Saturates: a limit beyond Int64 nanoseconds (about 292 years) draws from that range.
      let nanoseconds = min(max(limit / .nanoseconds(1), 0), 9.2e18)
      return .nanoseconds(Int64(Double.random(in: 0...1) * nanoseconds))
    }
  }

  /// Send the request, again and again while the policy allows.
  public func intercept(
    _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    let context = RequestContext.current
    let idempotent = context?.isIdempotent ?? request.method.isIdempotent
    let clock = self.clock ?? context?.clock ?? ContinuousClock()
    let waited = Stopwatch(clock)
    var attempt = 1
    while true {
      let wait: Duration
      let reason: String
      do {
        var response = try await next(request)
        response.attempts = attempt
        guard idempotent, attempt < policy.maxAttempts,
          policy.retryableStatuses.contains(response.status)
        else { return response }
        wait = delay(beforeRetry: attempt, response: response)
        reason = "status \(response.status)"
        guard withinBudget(waited.elapsed + wait) else { return response }
        guard Self.startsBeforeTheDeadline(after: wait) else {
          response.retryPastDeadline = wait
          return response
        }
      } catch let error where idempotent && attempt < policy.maxAttempts && isRetryable(error) {
        wait = delay(beforeRetry: attempt, response: nil)
        reason = Self.reason(for: error)
        guard withinBudget(waited.elapsed + wait) else {
          throw Self.noting(attempts: attempt, on: error)
        }
        guard Self.startsBeforeTheDeadline(after: wait) else {
          throw Self.noting(attempts: attempt, on: error, retryPastDeadline: wait)
        }
      } catch {
        throw Self.noting(attempts: attempt, on: error)
      }
      context?.events?.post(.retryScheduled(afterAttempt: attempt, reason: reason, wait: wait))
      // Ended, as the call, by its client's `cancelAll()` when the call has no task of its own.
      if let cancellation = context?.cancellation {
        try await withCancellation(endedBy: cancellation) {
          try await clock.sleep(for: wait.sleepable)
        }
      } else {
        try await clock.sleep(for: wait.sleepable)
      }
      attempt += 1
    }
  }

  /// Why an error is retried, in a few words: `timed out`, or the `URLError` code.
  private static func reason(for error: any Error) -> String {
    switch error {
    case APIError.transport(let underlying as URLError):
      "URLError \(underlying.code.rawValue)"
    default:
      "timed out"
    }
  }

  /// Whether an attempt made after `wait` starts before the call's deadline (always, outside
  /// ``APIClient`` or without a timeout).
  private static func startsBeforeTheDeadline(after wait: Duration) -> Bool {
    guard let remaining = RequestContext.current?.remainingTime else { return true }
    return wait < remaining
  }

  /// Whether a retry whose wait ends `elapsed` after the call began stays within the budget.
  private func withinBudget(_ elapsed: Duration) -> Bool {
    policy.budget.map { elapsed <= $0 } ?? true
  }

  /// The wait before the next attempt: `Retry-After` when the response has one, else backoff.
  private func delay(beforeRetry retry: Int, response: HTTPResponse?) -> Duration {
    if let value = response?.headers["Retry-After"], let wait = policy.retryAfter(value, now: now())
    {
      return wait
    }
    let backoff = policy.backoff(beforeRetry: retry)
    return policy.jitter == .full ? random(backoff) : backoff
  }

  private func isRetryable(_ error: any Error) -> Bool {
    switch error {
    case APIError.timedOut:
      return policy.retriesTimeouts
    case APIError.transport(let underlying as URLError):
      return policy.retryableErrors.contains(underlying.code)
    default:
      return false
    }
  }

  /// The error with the number of attempts, and the wait of a retry the deadline ruled out,
  /// where it can hold them: a timeout, a cancellation, or a transport failure whose underlying
  /// error carries a context (a `URLError`, or one of Errand's errors).
  private static func noting(
    attempts: Int, on error: any Error, retryPastDeadline: Duration? = nil
  ) -> any Error {
    guard attempts > 1 || retryPastDeadline != nil, let error = error as? APIError else {
      return error
    }
    return error.noting(attempts: attempts, retryPastDeadline: retryPastDeadline)
  }
}

// Its waits (if any) end when the call's client cancels the call (`CallCancellation`).
extension RetryMiddleware: CallCancellationAware {}
