import Foundation

/// One exchange of a call, as ``APIClient`` hands it to the transport with the request:
/// everything the transport needs to know about the call beyond the request itself.
///
/// The client makes one per call and passes it, as a parameter, through the middleware chain to
/// every exchange of that call (retries included); a transport that adopts ``ExchangeTransport``
/// receives it with each request. Nothing below the middleware chain reads an ambient context,
/// so a call that a middleware makes meanwhile (a token refresh) never inherits another call's
/// deadline, progress observer or listeners.
///
/// A transport honours it this way:
/// - it returns at the response's head when ``streams`` is `true` (for a buffered call it may
///   hold the head until the body has ended or backs up), and may pace its reading by
///   it either way;
/// - it ends its wait with ``APIError/timedOut(_:)`` when the call's deadline passes
///   (``whenDeadlinePasses(_:)``, ``remainingTime``) and with `CancellationError` when the
///   calling task is cancelled;
/// - it tells how much of the request body it has sent (``reportUploadProgress(_:)``);
/// - it tells the call's listeners about the redirects it follows or refuses
///   (``redirectFollowed(status:location:)``, ``redirectRefused(_:)``), and about a report-only
///   pin that did not match (``pinMismatchReported(_:)``).
///
/// Every member is safe to call from any thread; the reports do nothing when the call has no
/// one to hear them.
public struct Exchange: Sendable {
  /// Whether the caller reads the body as it arrives (`true`: the transport returns at the
  /// head) or collects it whole (the transport may hold the head until the body has ended or
  /// backs up, as Errand's own transports do, so that a short answer wakes its caller once).
  public var streams: Bool
  /// The endpoint's sample response, for test doubles that answer with it.
  public var sample: HTTPResponse? {
    get { sampleBox?.value }
    set { sampleBox = newValue.map(Boxed.init) }
  }
  /// ``sample``, held by reference: an exchange is copied at every step of a call.
  package var sampleBox: Boxed<HTTPResponse>?
  /// The call's deadline.
  package var deadline: RequestDeadline?
  /// Who hears about the request body being sent.
  package var progress: (@Sendable (TransferProgress) -> Void)?
  /// Where the call's events go, when its client has listeners.
  package var events: CallEventSink?
  /// Whether a header may stay once the middleware that may add secrets has run, for a call to
  /// an origin the app did not choose (a next page at another origin); `nil` keeps them all.
  package var withholding: (@Sendable (HTTPHeaders.Field) -> Bool)?
  /// Where the call waits when the client's ``CallLimits`` hold calls back.
  package var priority = CallPriority.normal
  /// Whether the exchange may be shared with identical ones in flight (a buffered `GET`).
  package var shares = false
  /// How the call's client ends it (``APIClient/cancelAll()``) when the call runs in its
  /// caller's task; `nil` when it runs in a task of its own, which is cancelled instead.
  package var cancellation: CallCancellation?
  /// The callers of a shared exchange: the limiter waits at their highest priority.
  var callers: SharedCallers?
  /// The client's cookie jar, once the call's `Cookie` field comes from it: it stores what
  /// every answer sets, the redirects' included, and gives each redirect its cookies.
  package var cookieJar: CookieJar?
  /// The `Cookie` field the app set itself (in the client's or the endpoint's headers, or a
  /// middleware), before the jar's cookies joined it: it goes on to a redirect only while the
  /// redirect policy keeps the request's secret headers.
  package var appCookieField: String?
  /// Whether the request has been made ready for the transport already (what the call
  /// withholds gone, the jar's cookies in): it is done once per exchange, before the cache.
  package var preparedForTransport = false

  /// An exchange outside any client: for a test of a transport, or a transport that calls
  /// another one.
  /// - Parameters:
  ///   - streams: Whether the caller reads the body as it arrives.
  ///   - timeout: How long the exchange may take, counted from now on `clock`; `nil` for no
  ///     deadline.
  ///   - clock: The clock the timeout runs on.
  ///   - uploadProgress: Who hears about the request body being sent.
  public init(
    streams: Bool = false, timeout: Duration? = nil,
    clock: any Clock<Duration> = ContinuousClock(),
    uploadProgress: (@Sendable (TransferProgress) -> Void)? = nil
  ) {
    self.streams = streams
    self.deadline = timeout.map { RequestDeadline(timeout: $0, clock: clock) }
    self.progress = uploadProgress
  }

  /// An exchange of a call the client makes.
  package init(
    streams: Bool, deadline: RequestDeadline?, progress: (@Sendable (TransferProgress) -> Void)?,
    events: CallEventSink?
  ) {
    self.streams = streams
    self.deadline = deadline
    self.progress = progress
    self.events = events
  }

  /// A buffered exchange, as a call begins it: no deadline, progress or listeners yet.
  package static var buffered: Exchange {
    Exchange(streams: false, deadline: nil, progress: nil, events: nil)
  }

  /// How much of the call's timeout is left: zero or less once its deadline has passed; `nil`
  /// when the call has no timeout.
  public var remainingTime: Duration? {
    deadline?.remaining
  }

  /// Run `handler` once the call's deadline passes (never, when it has none), unless the
  /// returned function is called first.
  /// - Parameter handler: What ends the transport's wait with ``APIError/timedOut(_:)``; it runs
  ///   once at most, on no particular thread.
  /// - Returns: What cancels the timer; call it once the answer is in.
  public func whenDeadlinePasses(
    _ handler: @escaping @Sendable () -> Void
  ) -> @Sendable () -> Void {
    guard let deadline else { return {} }
    return deadline.whenExpired(handler)
  }

  /// Run `handler` when the call's client cancels the call (``APIClient/cancelAll()``), at once
  /// when it has, unless the returned function is called first; never when the call runs in a
  /// task of its own (its cancellation ends the wait then).
  /// - Parameter handler: What ends the transport's wait with `CancellationError`.
  /// - Returns: What forgets `handler`; call it once the answer is in.
  package func whenCancelled(_ handler: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
    guard let cancellation else { return {} }
    return cancellation.onCancel(handler)
  }

  /// Tell the caller how much of the request body has been sent; call it as the body goes out.
  /// - Parameter progress: The bytes sent so far, and the body's size when known.
  public func reportUploadProgress(_ progress: TransferProgress) {
    self.progress?(progress)
  }

  /// Tell the call's listeners that the transport followed a redirect (the location is shown
  /// with its secrets hidden).
  /// - Parameters:
  ///   - status: The redirect's status.
  ///   - location: Where it leads.
  public func redirectFollowed(status: Int, location: URL) {
    events?.redirectFollowed(status: status, location: location)
  }

  /// Tell the call's listeners that the server of a host pinned report-only presented a key
  /// that matches none of its pins, and that the exchange goes on.
  /// - Parameter mismatch: The host and the keys expected.
  public func pinMismatchReported(_ mismatch: PinMismatchError) {
    events?.post(.pinMismatchReported(mismatch))
  }

  /// Store the cookies an answer sets in the client's cookie jar, when the call has one: call it
  /// for each redirect the transport follows itself (the final answer's are stored by the
  /// client). Nothing happens when the client has no jar.
  /// - Parameters:
  ///   - headers: The answer's header fields; its `Set-Cookie` fields are read.
  ///   - url: The URL that answered.
  public func receivedCookies(_ headers: HTTPHeaders, from url: URL) {
    guard let cookieJar else { return }
    let fields = headers.values(for: "Set-Cookie")
    if !fields.isEmpty { cookieJar.store(fields, from: url) }
  }

  /// The `Cookie` field for the request a redirect leads to, when the call has a cookie jar:
  /// the jar's cookies for `url`, after the app's own cookies when the redirect keeps them:
  /// `proposed`'s `Cookie` field still begins with them (the same origin, or a trusted host, at
  /// every hop so far). Once a hop has left them behind they stay behind for the rest of the
  /// chain: a later hop within another site, whose field holds that site's jar cookies only,
  /// does not bring them back, nor does a hop back to their own origin.
  /// - Parameters:
  ///   - url: Where the redirect leads.
  ///   - proposed: The headers the redirect policy keeps for it (those of the request it
  ///     answers, without what it leaves behind).
  /// - Returns: The field's value, `nil` for none; or `proposed`'s own field when the call has
  ///   no jar.
  public func cookieField(forRedirectTo url: URL, proposed: HTTPHeaders) -> String? {
    guard let cookieJar else { return proposed["Cookie"] }
    let field = proposed.values(for: "Cookie").joined(separator: "; ")
    let kept = appCookieField.flatMap { own in
      field == own || field.hasPrefix(own + "; ") ? own : nil
    }
    return CookieStore.merging(kept, cookieJar.cookies(for: url))
  }

  /// Tell the call's listeners that the transport refused a redirect.
  /// - Parameter error: Why: listeners hear its description, every URL in it redacted.
  public func redirectRefused(_ error: any Error) {
    events?.redirectRefused(description: error.localizedDescription)
  }
}
