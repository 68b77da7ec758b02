import Foundation

/// When and how long ``RetryMiddleware`` waits before sending a request again.
///
/// ```swift
/// RetryPolicy(maxAttempts: 4, baseDelay: .milliseconds(200), retryableStatuses: [429, 503])
/// ```
public struct RetryPolicy: Sendable {
  /// How backoff delays are spread out.
  public enum Jitter: Sendable, Hashable {
    /// A random delay between zero and the exponential backoff ("full jitter"), so that clients
    /// that failed together do not retry together.
    case full
    /// Exactly the exponential backoff; for tests and for servers that ask for it.
    case none
  }

  /// The most times a request is sent, the first included; 1 means never retry.
  public var maxAttempts: Int
  /// The backoff before the first retry; each later retry doubles it.
  public var baseDelay: Duration
  /// The longest backoff between two attempts.
  public var maxDelay: Duration
  /// How backoff delays are spread out.
  public var jitter: Jitter
  /// The statuses worth another attempt.
  public var retryableStatuses: Set<Int>
  /// The network failures worth another attempt.
  public var retryableErrors: Set<URLError.Code>
  /// Whether a request that ran out of time is tried again.
  public var retriesTimeouts: Bool
  /// The longest wait that a `Retry-After` header can ask for; longer requests wait this long.
  public var maxRetryAfter: Duration
  /// The most time the retries of one call may add by waiting, whatever the server asks for: a
  /// retry whose wait would end past it is not made, and the last answer or error is returned.
  /// One minute by default; `nil` for no budget.
  public var budget: Duration?

  /// The statuses retried by default: 408, 429, 500, 502, 503 and 504.
  public static let defaultRetryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]

  /// The network failures retried by default: lost, refused or unreachable connections and
  /// failed name lookups.
  public static let defaultRetryableErrors: Set<URLError.Code> = [
    .timedOut, .networkConnectionLost, .notConnectedToInternet, .cannotConnectToHost,
    .cannotFindHost, .dnsLookupFailed,
  ]

  /// Create a policy.
  /// - Parameters:
  ///   - maxAttempts: The most times a request is sent, the first included.
  ///   - baseDelay: The backoff before the first retry, doubled for each later one.
  ///   - maxDelay: The longest backoff between two attempts.
  ///   - jitter: How backoff delays are spread out.
  ///   - retryableStatuses: The statuses worth another attempt.
  ///   - retryableErrors: The network failures worth another attempt.
  ///   - retriesTimeouts: Whether a request that ran out of time is tried again.
  ///   - maxRetryAfter: The longest wait a `Retry-After` header can ask for.
  ///   - budget: The most the retries of one call may add by waiting; `nil` for no budget.
  public init(
    maxAttempts: Int = 3, baseDelay: Duration = .milliseconds(500),
    maxDelay: Duration = .seconds(30),
    jitter: Jitter = .full, retryableStatuses: Set<Int> = RetryPolicy.defaultRetryableStatuses,
    retryableErrors: Set<URLError.Code> = RetryPolicy.defaultRetryableErrors,
    retriesTimeouts: Bool = true, maxRetryAfter: Duration = .seconds(60),
    budget: Duration? = .seconds(60)
  ) {
    self.maxAttempts = max(1, maxAttempts)
    self.baseDelay = baseDelay
    self.maxDelay = maxDelay
    self.jitter = jitter
    self.retryableStatuses = retryableStatuses
    self.retryableErrors = retryableErrors
    self.retriesTimeouts = retriesTimeouts
    self.maxRetryAfter = maxRetryAfter
    self.budget = budget
  }

  /// The backoff before retry number `retry` (1 for the first retry), before jitter.
  /// - Parameter retry: Which retry, from 1.
  /// - Returns: `baseDelay × 2^(retry − 1)`, at most `maxDelay`; it saturates instead of
  ///   overflowing for any attempt number and delay.
  public func backoff(beforeRetry retry: Int) -> Duration {
    let exponent = min(max(retry - 1, 0), 62)
    let factor = Int64(1) << exponent
    // Compare before multiplying, so that a huge base delay or attempt number cannot overflow.
    guard baseDelay <= maxDelay / factor else { return max(maxDelay, .zero) }
    return baseDelay * factor
  }

  /// The wait that a `Retry-After` value asks for, in seconds (`120`) or as an HTTP-date
  /// (`Wed, 21 Oct 2015 07:28:00 GMT`), capped by ``maxRetryAfter`` (a number of seconds too
  /// large to count is the cap); `nil` when it is neither.
  /// - Parameters:
  ///   - value: The header value.
  ///   - now: The current date, for HTTP-dates.
  /// - Returns: The wait, zero for a date in the past.
  public func retryAfter(_ value: String, now: Date) -> Duration? {
    let trimmed = value.trimmingCharacters(in: .whitespaces)
    let wait: Duration
    if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
      // RFC 9110 §10.2.3: delay-seconds is digits alone (no sign, which `Int(_:)` would take);
      // one too large for an `Int` (RFC 9110 sets no bound) is as long as allowed.
      wait = Int(trimmed).map { .seconds($0) } ?? maxRetryAfter
    } else if let date = HTTPDate.parse(trimmed, now: now) {
      wait = .milliseconds(max(0, Int((date.timeIntervalSince(now) * 1000).rounded(.up))))
    } else {
      return nil
    }
    return wait < maxRetryAfter ? wait : maxRetryAfter
  }
}
