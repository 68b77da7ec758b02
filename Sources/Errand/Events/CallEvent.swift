import Foundation

/// One thing that happened during a call an ``APIClient`` made, as an ``EventListener`` hears it.
/// Nothing in it is secret: the request is redacted by the client's ``Redaction`` (and the
/// request's own) and carries no body.
public struct CallEvent: Sendable, Hashable {
  /// What happened.
  public enum Kind: Sendable, Hashable {
    /// The call began (``APIClient/send(_:)`` and the other calls were entered).
    case callStarted
    /// The request was built from the endpoint: redacted, without its body.
    indirect case requestBuilt(HTTPRequest)
    /// The client's ``CallLimits`` hold the attempt back: it waits for a slot, its host's pause
    /// or window, or the rate.
    case callQueued
    /// The attempt that waited goes to the transport, after `waited` on the client's clock.
    case callDequeued(waited: Duration)
    /// An attempt went to the transport: `1` first, more after a retry or a token refresh.
    case attemptStarted(number: Int)
    /// ``RetryMiddleware`` will send the request again after `wait`, for `reason` (such as
    /// `status 503`, `timed out`, or a `URLError` code).
    case retryScheduled(afterAttempt: Int, reason: String, wait: Duration)
    /// The transport followed a redirect to `location` (redacted).
    case redirectFollowed(status: Int, location: String)
    /// The transport refused a redirect, for the reason it says.
    case redirectRefused(reason: String)
    /// The server of a host pinned report-only (``TrustPolicy/PinnedKeys/reportOnly``)
    /// presented a key that matches none of its pins; the call went on. It names the host and
    /// the keys expected.
    case pinMismatchReported(PinMismatchError)
    /// A `401` made ``BearerAuthenticationMiddleware`` wait for a fresh token.
    case tokenRefreshStarted
    /// The fresh token came, or the refresh failed.
    case tokenRefreshFinished(succeeded: Bool)
    /// A response's head arrived (each attempt's), its headers redacted.
    case responseHead(status: Int, headers: HTTPHeaders)
    /// The body of a streamed call so far: sent every 16 chunks and when it ends, not per chunk.
    case bodyProgress(bytes: Int, chunks: Int)
    /// A ``CachingMiddleware`` answered from its store, or not.
    case cacheOutcome(CacheStatus)
    /// The call returned its value (for a streamed call: its body ended), with the final
    /// response's status and transfer metrics.
    indirect case callEnded(status: Int, metrics: TransferMetrics?)
    /// The call failed: which step, the status or `URLError` code, the attempts made and the
    /// error's description, which carries no secrets.
    case callFailed(error: CallFailure)
    /// The call was cancelled.
    case callCancelled

    /// The case's name, such as `attemptStarted`, for tables and logs.
    public var name: String {
      switch self {
      case .callStarted: "callStarted"
      case .requestBuilt: "requestBuilt"
      case .callQueued: "callQueued"
      case .callDequeued: "callDequeued"
      case .attemptStarted: "attemptStarted"
      case .retryScheduled: "retryScheduled"
      case .redirectFollowed: "redirectFollowed"
      case .redirectRefused: "redirectRefused"
      case .pinMismatchReported: "pinMismatchReported"
      case .tokenRefreshStarted: "tokenRefreshStarted"
      case .tokenRefreshFinished: "tokenRefreshFinished"
      case .responseHead: "responseHead"
      case .bodyProgress: "bodyProgress"
      case .cacheOutcome: "cacheOutcome"
      case .callEnded: "callEnded"
      case .callFailed: "callFailed"
      case .callCancelled: "callCancelled"
      }
    }
  }

  /// The call, numbered from 1 in the order calls began in this process.
  public var callID: UInt64
  /// The endpoint as written, such as `GET dogs/42`.
  public var endpoint: String
  /// The time since the call began, on the client's clock.
  public var elapsed: Duration
  /// What happened.
  public var kind: Kind
}
