import Foundation

extension APIError {
  /// What Errand knows of the call that failed: the request, how many times it was sent, a retry
  /// the deadline ruled out, and how far the transfer got.
  ///
  /// Read it with ``APIError/context``. ``APIError/timedOut(_:)`` and ``APIError/cancelled(_:)``
  /// carry one; the others derive theirs from their response or their underlying error.
  ///
  /// ```swift
  /// } catch let error as APIError {
  ///   if let context = error.context, context.attempts > 1 {
  ///     print("\(context.request?.description ?? "a request") failed after \(context.attempts) attempts")
  ///   }
  /// }
  /// ```
  ///
  /// Printing or dumping a context shows the request with its secrets hidden by the request's
  /// ``HTTPRequest/redaction``, as printing the request does.
  public struct Context: Sendable {
    /// The request: as the transport was given it when an attempt failed (after middleware such
    /// as ``BearerAuthenticationMiddleware`` added its headers), else (a status or decoding
    /// error, a cancellation between attempts) as the client built it; `nil` where no client
    /// knew it.
    public var request: HTTPRequest?
    /// How many times the request was sent: more than 1 when ``RetryMiddleware`` retried it.
    public var attempts: Int
    /// The wait of a retry that ``RetryMiddleware`` did not make because it would have ended
    /// after the call's deadline; `nil` when no retry was ruled out that way.
    public var retryPastDeadline: Duration?
    /// How far the transfer got (phases, sizes, connection), where the transport reported it;
    /// `nil` otherwise.
    public var metrics: TransferMetrics?
    /// How long its host's rate limit (a server's `Retry-After` or `RateLimit` window, or the
    /// client's ``CallLimits/rate``) would have held the call before it could be sent, when that
    /// ended after the call's deadline and the call failed at once instead of waiting; `nil`
    /// otherwise.
    public var rateLimitWait: Duration?
    /// How long the call waited for the network (``APIClient/Configuration/connectivity``) when
    /// its deadline passed while it waited, so that it failed with ``APIError/timedOut(_:)``
    /// without being sent; `nil` otherwise.
    public var connectivityWait: Duration?

    /// Create a context.
    /// - Parameters:
    ///   - request: The request; `nil` when it is not known.
    ///   - attempts: How many times the request was sent.
    ///   - retryPastDeadline: The wait of a retry the call's deadline ruled out, if any.
    ///   - metrics: How far the transfer got, if known.
    public init(
      request: HTTPRequest? = nil, attempts: Int = 1, retryPastDeadline: Duration? = nil,
      metrics: TransferMetrics? = nil
    ) {
      self.request = request
      self.attempts = attempts
      self.retryPastDeadline = retryPastDeadline
      self.metrics = metrics
    }

    /// The key under which a `URLError`'s `userInfo` holds its context.
    ///
    /// Errand's transports put a context with the transfer's ``metrics`` there when a transfer
    /// fails, and the client adds the request and the attempts; ``APIError/context`` reads it
    /// back. A transport written outside Errand that throws a `URLError` can do the same, so
    /// that its failures report their metrics:
    ///
    /// ```swift
    /// throw URLError(.networkConnectionLost, userInfo: [APIError.Context.userInfoKey: APIError.Context(metrics: known)])
    /// ```
    public static let userInfoKey = "ErrandContext"
  }

  /// What Errand knows of the call that failed; see ``Context``.
  ///
  /// - ``timedOut(_:)`` and ``cancelled(_:)``: the context they carry.
  /// - ``unacceptableStatus(_:)`` and ``decoding(_:_:)``: from the response (its
  ///   ``HTTPResponse/request``, ``HTTPResponse/attempts``, ``HTTPResponse/retryPastDeadline`` and
  ///   ``HTTPResponse/metrics``).
  /// - ``transport(_:)``: from the underlying error, when it is a `URLError` (its `userInfo`
  ///   under ``Context/userInfoKey``) or one of Errand's errors that carry a context
  ///   (``RefusedRedirectError``, ``LineTooLongError``, ``ReconnectionError`` and `ErrandCurl`'s
  ///   `CurlUnavailableError`). Errand never wraps or replaces an underlying error, so that
  ///   `case .transport(let underlying)` still gives the error the transport threw: for an error
  ///   of another type (a custom transport's own error type, or ``AuthenticationError``, an enum
  ///   whose cases leave no room for one) there is nowhere to keep a context, and this is `nil`.
  /// - ``invalidRequest(_:)``: `nil`: no request could be formed, so none was sent.
  public var context: Context? {
    switch self {
    case .invalidRequest:
      return nil
    case .timedOut(let context), .cancelled(let context):
      return context
    case .unacceptableStatus(let response), .decoding(_, let response):
      return Context(
        request: response.request, attempts: response.attempts,
        retryPastDeadline: response.retryPastDeadline, metrics: response.metrics)
    case .transport(let underlying):
      return (underlying as? any CarriesCallContext)?.context
    }
  }

  /// This error with `request` in its context when it has none there: a timeout, a cancellation,
  /// or a transport failure whose underlying error can carry a context.
  package func filling(_ request: HTTPRequest) -> APIError {
    switch self {
    case .timedOut(var context) where context.request == nil:
      context.request = request
      return .timedOut(context)
    case .cancelled(var context) where context.request == nil:
      context.request = request
      return .cancelled(context)
    case .transport(let urlError as URLError):
      return .transport(urlError.adding(request))
    case .transport(var carrier as any CarriesCallContext) where carrier.context?.request == nil:
      carrier.context = carrier.context.filling(request)
      return .transport(carrier)
    default:
      return self
    }
  }

  /// This error noting how many attempts were made, and the wait of a retry the call's deadline
  /// ruled out, if one did, where it can hold them: a timeout, a cancellation, or a transport
  /// failure whose underlying error can carry a context.
  package func noting(attempts: Int, retryPastDeadline: Duration?) -> APIError {
    func noted(_ context: Context?) -> Context {
      var context = context ?? Context()
      context.attempts = attempts
      context.retryPastDeadline = retryPastDeadline
      return context
    }
    switch self {
    case .timedOut(let context):
      return .timedOut(noted(context))
    case .cancelled(let context):
      return .cancelled(noted(context))
    case .transport(var carrier as any CarriesCallContext):
      carrier.context = noted(carrier.context)
      return .transport(carrier)
    default:
      return self
    }
  }
}

extension APIError.Context: CustomStringConvertible {
  /// The request (secrets hidden), then the attempts, a retry the deadline ruled out and the
  /// metrics' summary where there are any, for example
  /// `GET https://api.example.com/v1/dogs, 3 attempts`.
  public var description: String {
    var parts = [request?.description ?? "unknown request"]
    if attempts != 1 {
      parts.append("\(attempts) attempts")
    }
    if let retryPastDeadline {
      parts.append("a retry after \(retryPastDeadline.decimalSeconds) s ruled out by the deadline")
    }
    if let metrics {
      parts.append(metrics.summary)
    }
    return parts.joined(separator: ", ")
  }
}

extension Optional where Wrapped == APIError.Context {
  /// The context with `request` in it when it has none; a new context when there is none.
  func filling(_ request: HTTPRequest) -> APIError.Context {
    var context = self ?? APIError.Context()
    if context.request == nil {
      context.request = request
    }
    return context
  }
}

/// An error that can keep the ``APIError/Context`` of the call it ended: a `URLError` (in its
/// `userInfo`) and Errand's own errors that a transport failure can wrap. The client fills in the
/// request, ``RetryMiddleware`` the attempts, and transports the metrics.
package protocol CarriesCallContext: Error {
  /// The context, where one was attached.
  var context: APIError.Context? { get set }
}

extension URLError: CarriesCallContext {
  /// The context kept in `userInfo` under ``APIError/Context/userInfoKey``.
  package var context: APIError.Context? {
    get { userInfo[APIError.Context.userInfoKey] as? APIError.Context }
    set {
      var info = userInfo
      info[APIError.Context.userInfoKey] = newValue
      self = URLError(code, userInfo: info)
    }
  }
}
