import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The production ``Transport``: sends requests with `URLSession`.
///
/// ```swift
/// let client = APIClient(server: .production, transport: URLSessionTransport())
/// ```
///
/// Created from a configuration (the default is ``defaultConfiguration()``), it owns its session
/// and a session-level delegate that follows same-origin redirects, strips `Authorization`,
/// `Proxy-Authorization`, `Cookie` and every header the request's ``HTTPRequest/redaction`` hides
/// (API keys, auth tokens, the app's own secret headers) before following a redirect to another
/// scheme, host or port (unless the host is one of the `trustedRedirectHosts`), never turns a
/// user and password in a `Location` into credentials, refuses a redirect from HTTPS to HTTP with
/// ``RefusedRedirectError`` (``RefusedRedirectError/Reason/downgradeToHTTP``), and one whose
/// `Location` is not `http` or `https` likewise, sends a request with a body again itself after a redirect that keeps
/// the method (`307`/`308`, and `301`/`302` of anything but `POST`) within its origin or to a
/// trusted host (URLSession on Linux would repeat it without the body) and refuses one to any
/// other origin, rejects a response with conflicting `Content-Length` headers, and returns a
/// `401` as a response (on Linux, URLSession would otherwise wait forever for a credential).
/// Every request is checked with ``HTTPRequest/validate()`` before anything is sent.
///
/// On Linux, a `301`–`308` answer without a `Location` reaches Errand without its body (its
/// status and headers arrive): FoundationNetworking sets the body of a redirect status aside for
/// a redirect it then never makes, and gives a delegate no way to get it. `CurlTransport`
/// delivers it; so does URLSession on Apple platforms.
///
/// Created from your own `URLSession`, the session's own delegate decides redirects and
/// challenges; on Linux prefer ``init(configuration:trustedRedirectHosts:)``.
///
/// Background sessions (`URLSessionConfiguration.background(withIdentifier:)`) are not
/// supported: they run only upload and download tasks, handed to the system, and a data task
/// with a completion handler, which Errand's calls are, stops the app. A transport given one
/// fails every call with ``APIError/invalidRequest(_:)``, before anything is sent; one made from
/// such a configuration makes no session with its identifier (its ``session`` is ephemeral), so
/// that the app's own background session keeps its transfers.
public final class URLSessionTransport: Transport {
  /// The session that runs the requests.
  public let session: URLSession
  let delegate: SessionDelegate?
  /// The session (and its delegate) for streamed calls: on Linux a second one, with a
  /// ``DelegateQueue`` of its own, so that a streamed body's writes to its temporary file never
  /// hold up the callbacks of buffered calls; elsewhere the same session.
  private let streamingSession: URLSession
  let streamingDelegate: SessionDelegate?
  /// Why every call fails before it is sent, for a session Errand cannot run on.
  private let refusal: String?

  /// Create a transport with its own session.
  ///
  /// The session runs on a copy of `configuration` with its `urlCache` turned off: with
  /// ``CachingMiddleware`` in the client, URLSession's cache would be a second one, on disk, that
  /// keeps what the middleware is told not to (an authenticated answer, say). Cache with
  /// ``CachingMiddleware``.
  /// - Parameters:
  ///   - configuration: The session configuration; ``defaultConfiguration()`` by default.
  ///   - trustedRedirectHosts: Hosts that may receive the request's credentials, secret headers
  ///     and (after a `307`/`308`) body when a redirect from another origin leads to them (a CDN
  ///     of your own, say); none by default. Matched exactly, ignoring case.
  public convenience init(
    configuration: URLSessionConfiguration = URLSessionTransport.defaultConfiguration(),
    trustedRedirectHosts: Set<String> = []
  ) {
    self.init(
      configuration: configuration, trustedRedirectHosts: trustedRedirectHosts,
      systemCredentials: [])
  }

  /// Create a transport with its own session that lets URLSession answer some authentication
  /// challenges with the system's credentials.
  ///
  /// By default a session Errand creates answers only server-trust challenges, by the system's
  /// rules; every other challenge gets no credential, so that the `401` (or the refused
  /// connection) is the answer, and nothing the system holds for the user, such as a single
  /// sign-on ticket for `NSURLAuthenticationMethodNegotiate` or a stored password for
  /// `NSURLAuthenticationMethodNTLM`, is sent without the app asking for it. Name the methods
  /// here to let URLSession handle them as it would by default:
  ///
  /// ```swift
  /// let transport = URLSessionTransport(
  ///   configuration: URLSessionTransport.defaultConfiguration(), trustedRedirectHosts: [],
  ///   systemCredentials: [NSURLAuthenticationMethodNegotiate])  // an intranet with Kerberos
  /// ```
  /// - Parameters:
  ///   - configuration: The session configuration, used as
  ///     ``init(configuration:trustedRedirectHosts:)`` uses it.
  ///   - trustedRedirectHosts: Hosts that may receive the request's credentials across origins.
  ///   - systemCredentials: The `NSURLAuthenticationMethod…` values URLSession may answer by
  ///     default, beside server trust.
  public init(
    configuration: URLSessionConfiguration = URLSessionTransport.defaultConfiguration(),
    trustedRedirectHosts: Set<String> = [], systemCredentials: Set<String>
  ) {
    refusal = Self.refusal(of: configuration)
    (session, delegate, streamingSession, streamingDelegate) = Self.sessions(
      configuration: configuration, trustedRedirectHosts: trustedRedirectHosts,
      systemCredentials: systemCredentials, trust: nil)
  }

  /// Create a transport with its own session that trusts servers, and presents itself to
  /// them, as `trust` says: public keys pinned per host, your own certificate authorities, a
  /// client certificate.
  ///
  /// On Apple platforms the session's delegate answers the server-trust challenge (the
  /// system's checks with your authorities as anchors, then the pins, compared with the
  /// server's own key) and the client-certificate challenge (with a PKCS#12 identity or one
  /// from the keychain, for the hosts named). On Linux, URLSession (FoundationNetworking) gives
  /// a delegate neither challenge, so a policy with any part is refused here: use
  /// `CurlTransport` (module ErrandCurl), which honours all of it.
  /// - Parameters:
  ///   - configuration: The session configuration, used as
  ///     ``init(configuration:trustedRedirectHosts:)`` uses it.
  ///   - trustedRedirectHosts: Hosts that may receive the request's credentials across origins.
  ///   - trust: Whom requests trust and what they present.
  /// - Throws: ``UnsupportedTransportOption`` for a part this platform's URLSession cannot
  ///   honour (on Linux, any; on Apple platforms, a PEM client certificate: give it as
  ///   PKCS#12); ``InvalidConnectionOption`` for a part that is malformed, or a file that
  ///   cannot be read or does not hold what it should.
  public convenience init(
    configuration: URLSessionConfiguration = URLSessionTransport.defaultConfiguration(),
    trustedRedirectHosts: Set<String> = [], trust: TrustPolicy
  ) throws {
    try self.init(
      configuration: configuration, trustedRedirectHosts: trustedRedirectHosts,
      connection: ConnectionOptions(), trust: trust)
  }

  /// A transport whose delegate applies `loadedTrust` and answers as `connection` says.
  init(
    configuration: URLSessionConfiguration, trustedRedirectHosts: Set<String>,
    loadedTrust: LoadedTrust, connection: SessionConnection
  ) {
    refusal = Self.refusal(of: configuration)
    (session, delegate, streamingSession, streamingDelegate) = Self.sessions(
      configuration: configuration, trustedRedirectHosts: trustedRedirectHosts,
      systemCredentials: [], trust: loadedTrust, connection: connection)
  }

  /// Refuse the parts of `trust` this platform's URLSession cannot honour.
  static func checkSupported(_ trust: TrustPolicy) throws {
    #if canImport(FoundationNetworking)
      let parts = [
        ("trust.pins", !trust.pins.isEmpty),
        ("trust.certificateAuthorities", trust.certificateAuthorities != nil),
        ("trust.clientCertificate", trust.clientCertificate != nil),
      ]
      if let (option, _) = parts.first(where: { $0.1 }) {
        throw UnsupportedTransportOption(
          option: option, transport: "URLSessionTransport on Linux",
          reason: "FoundationNetworking gives a session's delegate no server-trust or "
            + "client-certificate challenge; use CurlTransport (module ErrandCurl), which "
            + "honours the whole TrustPolicy")
      }
    #else
      if case .pem = trust.clientCertificate?.storage {
        throw UnsupportedTransportOption(
          option: "trust.clientCertificate", transport: "URLSessionTransport",
          reason: "Apple platforms make a client identity from PKCS#12 or the keychain, not "
            + "from PEM; give it as .pkcs12(_:passphrase:for:) or .keychainIdentity(label:for:)")
      }
    #endif
  }

  /// The sessions (and delegates) of a transport Errand creates: on Linux one for buffered
  /// calls and one for streamed calls; elsewhere one for both.
  private static func sessions(
    configuration: URLSessionConfiguration, trustedRedirectHosts: Set<String>,
    systemCredentials: Set<String>, trust: LoadedTrust?,
    connection: SessionConnection = SessionConnection()
  ) -> (URLSession, SessionDelegate?, URLSession, SessionDelegate?) {
    let configuration = withoutCache(runnable(configuration))
    #if canImport(FoundationNetworking)
      return sessions(
        configuration: configuration, trustedRedirectHosts: trustedRedirectHosts,
        systemCredentials: systemCredentials, queues: (DelegateQueue(), DelegateQueue()))
    #else
      let delegate = SessionDelegate(
        trustedRedirectHosts: trustedRedirectHosts, systemCredentials: systemCredentials,
        trust: trust, connection: connection)
      let session = URLSession(
        configuration: configuration, delegate: delegate, delegateQueue: nil)
      return (session, delegate, session, delegate)
    #endif
  }

  #if canImport(FoundationNetworking)
    /// Create a transport whose two sessions run their delegates on these queues (for tests of
    /// the flow control, with limits of their own), and whose tasks' successful ends wait up to
    /// `reportWait` for URLSession's metrics, as on Apple platforms (for tests of that wait).
    init(
      configuration: URLSessionConfiguration = URLSessionTransport.defaultConfiguration(),
      delegateQueues queues: (buffered: DelegateQueue, streaming: DelegateQueue),
      reportWait: Duration? = nil
    ) {
      refusal = Self.refusal(of: configuration)
      let configuration = Self.withoutCache(Self.runnable(configuration))
      (session, delegate, streamingSession, streamingDelegate) = Self.sessions(
        configuration: configuration, trustedRedirectHosts: [], systemCredentials: [],
        queues: queues, reportWait: reportWait)
    }

    /// The session for buffered calls and the one for streamed calls, each with its delegate.
    private static func sessions(
      configuration: URLSessionConfiguration, trustedRedirectHosts: Set<String>,
      systemCredentials: Set<String>, queues: (buffered: DelegateQueue, streaming: DelegateQueue),
      reportWait: Duration? = SessionDelegate.defaultReportWait
    ) -> (URLSession, SessionDelegate, URLSession, SessionDelegate) {
      let delegate = SessionDelegate(
        trustedRedirectHosts: trustedRedirectHosts, systemCredentials: systemCredentials,
        reportWait: reportWait)
      let streamingDelegate = SessionDelegate(
        trustedRedirectHosts: trustedRedirectHosts, systemCredentials: systemCredentials,
        reportWait: reportWait)
      return (
        URLSession(
          configuration: configuration, delegate: delegate, delegateQueue: queues.buffered),
        delegate,
        URLSession(
          configuration: configuration, delegate: streamingDelegate,
          delegateQueue: queues.streaming),
        streamingDelegate
      )
    }
  #endif

  /// Create a transport over a session you configured.
  ///
  /// Errand's redirect rules apply only to sessions it creates; this session's own delegate
  /// decides how redirects are followed. Its configuration is yours too: set its `urlCache` to
  /// `nil` (and `requestCachePolicy` to `.reloadIgnoringLocalCacheData`) when the client caches
  /// with ``CachingMiddleware``, or URLSession keeps a second cache, on disk, of what the
  /// middleware is told not to store. A background session is refused: every call fails with
  /// ``APIError/invalidRequest(_:)``.
  /// - Parameter session: The session that runs the requests.
  public init(session: URLSession) {
    refusal = Self.refusal(of: session.configuration)
    self.delegate = nil
    self.session = session
    self.streamingDelegate = nil
    self.streamingSession = session
  }

  deinit {
    if delegate != nil {
      session.finishTasksAndInvalidate()
      if streamingSession !== session {
        streamingSession.finishTasksAndInvalidate()
      }
    }
  }

  /// A copy of `configuration` with URLSession's cache turned off.
  private static func withoutCache(_ configuration: URLSessionConfiguration)
    -> URLSessionConfiguration
  {
    let copy = configuration.copy() as? URLSessionConfiguration ?? configuration
    copy.urlCache = nil
    copy.requestCachePolicy = .reloadIgnoringLocalCacheData
    return copy
  }

  /// `configuration`, or an ephemeral one in place of one Errand refuses: a background
  /// configuration must not get a session of Errand's with its identifier (Apple allows one
  /// session per identifier, and hands the app's background transfers to it), when every call
  /// is refused anyway.
  private static func runnable(_ configuration: URLSessionConfiguration)
    -> URLSessionConfiguration
  {
    refusal(of: configuration) == nil ? configuration : .ephemeral
  }

  /// Why Errand cannot run calls on a session with `configuration`, if it cannot.
  private static func refusal(of configuration: URLSessionConfiguration) -> String? {
    guard let identifier = configuration.identifier else { return nil }
    return "URLSessionTransport cannot run calls on the background session \"\(identifier)\": "
      + "background sessions run only downloads and uploads handed to the system; give the "
      + "transport a default or ephemeral configuration"
  }

  /// A configuration suited to API calls: no shared cookie storage, cache or credential storage
  /// (so clients never leak state into each other), and up to 16 connections per host.
  /// - Returns: A new configuration to adjust or pass to ``init(configuration:trustedRedirectHosts:)``.
  public static func defaultConfiguration() -> URLSessionConfiguration {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpCookieStorage = nil
    configuration.httpShouldSetCookies = false
    configuration.httpCookieAcceptPolicy = .never
    configuration.urlCredentialStorage = nil
    configuration.urlCache = nil
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.httpMaximumConnectionsPerHost = 16
    return configuration
  }

  /// Send a request and wait for the whole response.
  ///
  /// Cancelling the calling task cancels the request. The request's timeout also becomes the
  /// `URLRequest`'s, rounded up to whole seconds (as Linux reads it); ``APIClient`` enforces the
  /// exact deadline. A body longer than the request's ``HTTPRequest/maximumResponseSize`` stops
  /// the transfer as soon as it is crossed.
  /// - Parameter request: The request to send.
  /// - Returns: The response, whatever its status.
  /// - Throws: The `URLError` that URLSession reports (`.dataLengthExceedsMaximum` for a body
  ///   over the limit, `.badServerResponse` for an answer that is not valid HTTP), or the
  ///   ``RefusedRedirectError`` of a redirect it would not follow;
  ///   `CancellationError` as soon as the calling task is cancelled; ``APIError/invalidRequest(_:)``
  ///   before anything is sent for a request that fails ``HTTPRequest/validate()``.
  public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
    try await exchange(request, Exchange())
      .settlingBody(limit: request.maximumResponseSize, streams: false, deadline: nil)
  }

  /// Send a request and return when the response's head arrives; the body follows in
  /// ``HTTPResponse/bodyStream`` as URLSession delivers it.
  ///
  /// The body is never paused (URLSession's `suspend()` restarts a data task when it resumes), so
  /// bytes the reader has not taken yet are buffered: in memory up to ``HTTPBody/memoryBudget``,
  /// then in a temporary file. A transport created with ``init(session:)`` cannot see the body
  /// as it arrives and streams the whole body as one chunk.
  ///
  /// On Linux, FoundationNetworking reads ahead of the session's delegate and queues every chunk
  /// the delegate has not taken yet in memory, without a limit; this transport makes URLSession
  /// wait instead, once 512 chunks (at most 8 MiB) wait for the delegate, until they are down to
  /// 16, so the transfer goes at the pace at which the delegate writes the body. A reader that
  /// stops reading then costs memory that does not grow with the body: the budget, a 1 MiB write
  /// buffer for the file and at most 8 MiB of waiting chunks, while the rest goes to disk.
  ///
  /// The process's resident size grows by more: glibc's allocator keeps memory that
  /// FoundationNetworking allocated and freed for each chunk. Measured on 2 cores with a reader
  /// that stopped after the first chunk: 15–40 MB for a body of 256–512 MB, 36–39 MB for 1 GB and
  /// 57 MB for 2 and 4 GB, of which `malloc_trim(0)` gives back all but 6–38 MB (a reader that
  /// keeps up, without this flow control: 28 MB for 1 GB, 89 MB for 4 GB); before it, a stalled
  /// reader cost 33–270 MB for 256–512 MB and 500–790 MB for 1 GB. `CurlTransport` pauses the
  /// transfer instead and grows by 3 MB at most.
  ///
  /// While URLSession waits for the delegate, every URLSession of the process waits: on Linux
  /// they all run on one internal queue. The wait ends with the backlog almost worked off, and
  /// libcurl then reads at its own pace until the limit again, which lets the other sessions'
  /// work run in between: beside a stalled reader of a body sent at about 250 MB/s, a call on
  /// another session waited up to 0.15–0.5 s (0.07–0.7 s without this flow control), and up to
  /// seconds on a machine busy with other work (0–4.6 s at a load of 10 on 2 cores). A server
  /// that sends faster than FoundationNetworking reads (loopback) holds the other sessions up
  /// for seconds either way, and its own session longer: FoundationNetworking cancels a task only
  /// once the socket has nothing left to read, so a body whose reader stopped (or that crossed its
  /// size limit) ends for the reader at once, but its transfer may run on until the server
  /// pauses or the body ends. For large bodies on Linux, prefer `CurlTransport`.
  /// - Parameter request: The request to send.
  /// - Returns: The head of the response, with its body stream.
  /// - Throws: What ``send(_:)`` throws before the head arrives.
  public func stream(_ request: HTTPRequest) async throws -> HTTPResponse {
    try await exchange(request, Exchange(streams: true))
      .settlingBody(limit: request.maximumResponseSize, streams: true, deadline: nil)
  }

  /// Send a request and return at the response's head, its body following in
  /// ``HTTPResponse/bodyStream``, ending the wait itself at the exchange's deadline (with
  /// ``APIError/timedOut(_:)``) or when the calling task is cancelled, at once, while the task is
  /// cancelled in the background.
  /// - Parameters:
  ///   - request: The request to send.
  ///   - exchange: Whether the caller reads the body as it arrives (paced on Linux) or collects
  ///     it, the call's deadline, who hears about the request body being sent and about the
  ///     redirects followed.
  /// - Returns: The response, whatever its status.
  /// - Throws: What ``send(_:)`` throws, ``APIError/timedOut(_:)`` or `CancellationError`.
  public func exchange(_ request: HTTPRequest, _ exchange: Exchange) async throws -> HTTPResponse {
    let running = Locked(RunningTask())
    let delegate = exchange.streams ? streamingDelegate : delegate
    let disarm = exchange.whenDeadlinePasses {
      URLSessionTransport.abandon(running, with: APIError.timedOut, delegate: delegate)
    }
    let disarmCancel = exchange.whenCancelled {
      URLSessionTransport.abandon(running, with: CancellationError(), delegate: delegate)
    }
    defer {
      disarm()
      disarmCancel()
    }
    return try await start(request, exchange, running: running)
  }

  private func start(
    _ request: HTTPRequest, _ exchange: Exchange, running: Locked<RunningTask>
  ) async throws -> HTTPResponse {
    var request = request
    var hops: [TransferMetrics] = []
    for _ in 0..<Self.maximumResends {
      do {
        var response = try await attempt(request, exchange, running: running)
        response.metrics?.redirects.insert(contentsOf: hops, at: 0)
        return response
      } catch let resend as SameOriginResend {
        request.url = resend.location
        if exchange.cookieJar != nil {
          request.headers["Cookie"] = exchange.cookieField(
            forRedirectTo: resend.location, proposed: request.headers)
        }
        hops += resend.hops
      }
    }
    throw URLError(.httpTooManyRedirects)
  }

  /// How many times a request is sent again, with its body, after `307`/`308` redirects within
  /// its origin (URLSession on Linux would repeat it without its body): as many as the redirects
  /// URLSession follows in one task.
  private static let maximumResends = RedirectPolicy.maximumRedirects

  /// Send the request once. `running` is shared with the deadline and the cancellation handler:
  /// whichever ends the wait first resumes the continuation, exactly once.
  private func attempt(
    _ request: HTTPRequest, _ exchange: Exchange, running: Locked<RunningTask>
  ) async throws -> HTTPResponse {
    if let refusal { throw APIError.invalidRequest(refusal) }
    try request.validate()
    if let refused = delegate?.trust?.refusal(for: request.url) { throw refused }
    var urlRequest = request.urlRequest
    delegate?.connection.prepare(&urlRequest)
    // The client's cookie jar sets `Cookie` and stores `Set-Cookie`: URLSession's own storage,
    // if the configuration has one, neither adds cookies nor keeps them.
    if exchange.cookieJar != nil { urlRequest.httpShouldHandleCookies = false }
    if let timeout = request.timeout {
      urlRequest.timeoutInterval = Double(
        RequestDeadline.backstopSeconds(
          for: timeout, enforcedByTransport: exchange.deadline != nil))
    }
    let (session, delegate) =
      exchange.streams ? (streamingSession, streamingDelegate) : (self.session, self.delegate)
    // Read here, in the caller's task: the delegate decides redirects on a queue of its own.
    let staysHome = RequestContext.current?.clientHeaders ?? []
    return try await withTaskCancellationHandler {
      try await Waiting.wait { waiting in
        // Shared with the deadline and the cancellation handler before anything else happens,
        // so that either can end the wait at once, even while the task is still being created.
        let abandoned = running.withLock { state in
          state.waiting = waiting
          return state.abandoned
        }
        if let abandoned {
          waiting.resume(throwing: abandoned)
          return
        }
        // Off the caller's thread: creating and resuming a task wait for URLSession's internal
        // queue, which all sessions in the process share and a busy transfer can hold for
        // seconds; waiting here would take a thread from the cooperative pool every task runs on.
        URLSessionTransport.starting.async { [urlRequest] in
          guard running.withLock({ $0.abandoned == nil }) else { return }
          let task: URLSessionDataTask
          if let delegate {
            if let file = request.bodyFile {
              task = session.uploadTask(with: urlRequest, fromFile: file)
            } else {
              task = session.dataTask(with: urlRequest)
            }
            delegate.register(
              task, waiting: waiting, exchange: exchange, limit: request.maximumResponseSize,
              redaction: request.redaction, staysHome: staysHome)
          } else {
            // The session's delegate is the app's, and hears URLSession's metrics: the answer
            // has what Errand observes (when it started and ended, the body's size).
            let (start, began) = (Date(), ContinuousClock.now)
            let completion: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = {
              data, response, error in
              if let error {
                waiting.resume(throwing: URLSessionTransport.clarify(error))
              } else if let response = response as? HTTPURLResponse {
                var answer = HTTPResponse(response, body: data ?? Data())
                var observed = TransferMetrics()
                observed.start = start
                observed.responseEnd = began.duration(to: .now)
                observed.responseBodyBytes = answer.body.count
                answer.metrics = observed
                waiting.resume(returning: answer)
              } else {
                waiting.resume(throwing: URLError(.badServerResponse))
              }
            }
            if let file = request.bodyFile {
              task = session.uploadTask(
                with: urlRequest, fromFile: file, completionHandler: completion)
            } else {
              task = session.dataTask(with: urlRequest, completionHandler: completion)
            }
          }
          let abandoned = running.withLock { state in
            state.task = task
            return state.abandoned
          }
          if let abandoned {
            // Ended while the task was being created: its waiter has its answer already.
            _ = delegate?.abandon(task.taskIdentifier, with: abandoned)
            URLSessionTransport.stop(task)
          } else {
            task.resume()
          }
        }
      }
    } onCancel: {
      URLSessionTransport.abandon(running, with: CancellationError(), delegate: delegate)
    }
  }
}

/// Ends its own waits at the client's deadline, so the client calls it without a racing task.
extension URLSessionTransport: ExchangeTransport {}

// Its wait for a task ends when the call's client cancels the call.
extension URLSessionTransport: CallCancellationAware {}
