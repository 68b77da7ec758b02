/// What the client knows about the request being sent that a plain ``HTTPRequest`` does not: the
/// endpoint it came from, whether it needs credentials, and its sample response.
///
/// ``APIClient`` binds ``current`` while a transport (or middleware) handles the request, so test
/// doubles can answer with the endpoint's sample:
///
/// ```swift
/// if let sample = RequestContext.current?.sample { return sample }
/// ```
public struct RequestContext: Sendable {
  /// The endpoint as written, for example `GET dogs/42`.
  public var endpoint: String
  /// Whether the endpoint needs credentials.
  public var requiresAuthentication: Bool
  /// The endpoint's sample response, if it has one.
  public var sample: HTTPResponse? {
    get { sampleBox?.value }
    set { sampleBox = newValue.map(Boxed.init) }
  }
  /// ``sample``, held by reference: a context is copied at every step of a call.
  package var sampleBox: Boxed<HTTPResponse>?
  /// Whether sending the request twice is safe, so that it may be retried: the method's
  /// idempotence unless the endpoint says otherwise.
  public var isIdempotent: Bool
  /// The call's deadline, set by ``APIClient`` from the request's timeout when the call starts.
  var deadline: RequestDeadline?
  /// The client's clock (``APIClient/Configuration/clock``), set by ``APIClient``; `nil` outside
  /// it. Middleware that waits or measures uses it unless it was given a clock of its own, so a
  /// test that hands the client a `TestClock` does not also have to hand it to each middleware.
  public var clock: (any Clock<Duration>)?
  /// The endpoint's ``Endpoint/cachePolicy``, which a ``CachingMiddleware`` follows instead of
  /// its own; `nil` when the endpoint sets none.
  public var cachePolicy: CachePolicy?
  /// Where the call's events go, when its client has listeners: middleware and transports post
  /// retries, redirects and token refreshes to it.
  package var events: CallEventSink?
  /// The names (lowercased) of the client's default headers that are not safe at any origin
  /// (see ``APIClient/Configuration/crossOriginHeaders``): a tenant's or an app's key, even one
  /// the redaction does not name. A ``CachingMiddleware`` keeps apart the answers to requests
  /// that carry different values of them.
  package var clientHeaders: Set<String> = []
  /// How the call's client ends it when it runs in its caller's task: a middleware of Errand's
  /// that waits ends its wait with it (``CallCancellation``).
  package var cancellation: CallCancellation?

  /// How much of the call's timeout is left, on the client's clock: the timeout is a deadline
  /// for the whole call, retries and their waits included, so a middleware that waits (or starts
  /// another attempt) checks this first. Zero or less once the deadline has passed; `nil` when
  /// the call has no timeout.
  public var remainingTime: Duration? {
    deadline?.remaining
  }

  /// Create a context.
  /// - Parameters:
  ///   - endpoint: The endpoint as written.
  ///   - requiresAuthentication: Whether the endpoint needs credentials.
  ///   - sample: The endpoint's sample response.
  ///   - isIdempotent: Whether sending the request twice is safe.
  public init(
    endpoint: String, requiresAuthentication: Bool = false, sample: HTTPResponse? = nil,
    isIdempotent: Bool = true
  ) {
    self.endpoint = endpoint
    self.requiresAuthentication = requiresAuthentication
    self.sampleBox = sample.map(Boxed.init)
    self.isIdempotent = isIdempotent
  }

  /// The context of the request being sent in this task, or `nil` outside ``APIClient``.
  ///
  /// Deliberately a task-local, because it must reach middleware and test doubles that only see
  /// an ``HTTPRequest``. A call that a middleware makes through an ``APIClient`` meanwhile (a token
  /// refresh) binds its own context; a `Task {}` started while a request is handled inherits this
  /// one, as task-locals are inherited. Everything else about a call (whether it streams, who hears
  /// its upload progress) is passed as a parameter and reaches no other call.
  @TaskLocal public static var current: RequestContext?
}
