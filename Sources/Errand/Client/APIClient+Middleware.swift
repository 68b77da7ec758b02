import Foundation

extension APIClient {
  /// Send an endpoint's request through the client's and the endpoint's middleware and the
  /// transport, with the endpoint's context, mapping every failure to ``APIError``.
  ///
  /// The request's timeout becomes one deadline for the whole call, counted from here: every
  /// exchange (a retry's too) ends by it, and ``RetryMiddleware`` does not start an attempt it
  /// could not start before it. `exchange` (whether the call streams, who hears its upload
  /// progress and its events) gets the deadline, the endpoint's sample and what to withhold, and
  /// goes as a parameter through the chain to the transport.
  ///
  /// `described` is the endpoint as ``Endpoint/description(redactedBy:)`` describes it with the
  /// client's redaction, when the caller has it already.
  nonisolated func run<Value>(
    _ request: HTTPRequest, for endpoint: Endpoint<Value>, as exchange: Exchange = Exchange(),
    described: String? = nil
  ) async throws -> HTTPResponse {
    var exchange = exchange
    if endpoint.withholdsSecrets {
      let configuration = configuration
      exchange.withholding = { field in
        configuration.goesToOtherOrigins(field)
          || Self.describingHeaders.contains(field.name.lowercased())
      }
    }
    exchange.deadline = request.timeout.map {
      RequestDeadline(timeout: $0, clock: configuration.clock)
    }
    exchange.sampleBox = endpoint.sampleBox
    exchange.priority = endpoint.priority
    exchange.shares = sharing != nil && endpoint.sharesInFlight && !exchange.streams
    var context = RequestContext(
      endpoint: described ?? endpoint.description(redactedBy: configuration.redaction),
      requiresAuthentication: endpoint.requiresAuthentication && !endpoint.withholdsSecrets
        && !endpoint.leavesOrigin(of: baseURL, trustedHosts: configuration.trustedHosts),
      isIdempotent: endpoint.retriesSafely)
    context.sampleBox = endpoint.sampleBox
    context.deadline = exchange.deadline
    context.clock = configuration.clock
    context.cachePolicy = endpoint.cachePolicy
    context.events = exchange.events
    context.cancellation = exchange.cancellation
    context.clientHeaders = clientHeaderNames
    let chain =
      endpoint.middleware.isEmpty
      ? orderedMiddleware : Self.ordered(configuration.middleware + endpoint.middleware)
    var response: HTTPResponse
    do {
      response = try await RequestContext.$current.withValue(context) {
        try await pipeline.send(request, through: chain[...], as: exchange)
      }
    } catch {
      throw APIError(transportError: error, request: request)
    }
    response.url = response.url ?? request.url
    // The request as the transport got it (tokens and headers the middleware added included, so
    // that an echo of them is scrubbed from what is printed), else as the client built it.
    if response.request == nil { response.request = request }
    if let events = exchange.events, let status = response.cacheStatus {
      events.post(.cacheOutcome(status))
    }
    return response
  }

  /// Headers that describe the request itself (its body, the answer it can take) and say nothing
  /// of who sends it: kept, beside the safe defaults, when a call withholds its headers.
  static let describingHeaders: Set<String> = [
    "content-type", "content-encoding", "content-language", "if-none-match", "if-match",
    "if-modified-since", "if-unmodified-since", "if-range", "range",
  ]

  /// The chain in the order it runs: as written, except that every ``CachingMiddleware`` runs
  /// after all the others, and every ``SigningMiddleware`` after that, just before the transport.
  /// So a cache keys, varies and decides what is authenticated on the request exactly as it is
  /// sent, whatever order the app wrote: a token or an API key a middleware adds can never be
  /// missing from what the cache sees. And a signature covers the request as it is sent, signed
  /// anew for each exchange, without the cache keying on it.
  static func ordered(_ chain: [any Middleware]) -> [any Middleware] {
    guard chain.contains(where: Pipeline.sendsAsTheTransportDoes) else { return chain }
    return chain.filter { !Pipeline.sendsAsTheTransportDoes($0) }
      + chain.filter { $0 is CachingMiddleware } + chain.filter { $0 is SigningMiddleware }
  }

  /// The end of the chain, apart from the client.
  nonisolated var pipeline: Pipeline {
    Pipeline(
      transport: transport, exchangeTransport: exchangeTransport,
      backgroundWork: backgroundWork, clock: configuration.clock, limiter: limiter,
      sharing: sharing, connectivity: connectivityGate, cookieJar: configuration.cookieJar)
  }
}

/// What a call goes through once it leaves the client: the middleware chain and the transport.
/// It holds what the client's transport needs, not the client, so that what a call leaves running
/// in the background (a cache's revalidation) does not keep the client alive.
struct Pipeline: Sendable {
  let transport: any Transport
  let exchangeTransport: (any ExchangeTransport)?
  let backgroundWork: BackgroundWork
  let clock: any Clock<Duration>
  /// Holds each exchange to the client's call limits, when it has any.
  let limiter: CallLimiter?
  /// Shares identical calls' exchanges, when the client does.
  let sharing: InFlightSharing?
  /// Holds each attempt while the network is down, when the client waits for it.
  let connectivity: ConnectivityGate?
  /// The client's cookies, when it keeps any.
  let cookieJar: CookieJar?

  /// Send a request through the middleware chain, outermost first, then the transport, as
  /// `exchange` says. A call that withholds its secrets (a next page at an origin the app did not
  /// choose) has them removed before the cache and the transport see it. A cache gets a way to
  /// revalidate in the background through the rest of the chain.
  func send(
    _ request: HTTPRequest, through chain: ArraySlice<any Middleware>, as exchange: Exchange
  ) async throws -> HTTPResponse {
    if needsPreparing(exchange, before: chain.first) {
      let (request, exchange) = prepared(request, exchange)
      return try await send(request, through: chain, as: exchange)
    }
    guard let first = chain.first else {
      var response = try await sendWhenOnline(request, as: exchange)
      response.request = request
      return response
    }
    let rest = chain.dropFirst()
    if first is SigningMiddleware, exchange.withholding != nil {
      // A call to an origin the app did not choose is not signed: its signature stays home.
      return try await send(request, through: rest, as: exchange)
    }
    if let cache = first as? CachingMiddleware {
      return try await cache.intercept(
        request, revalidatingWith: revalidator(through: rest, as: exchange)
      ) { next in
        try await send(next, through: rest, as: exchange)
      }
    }
    return try await first.intercept(request) { next in
      try await send(next, through: rest, as: exchange)
    }
  }

  /// Whether `exchange`'s request is made ready for the transport (``prepared(_:_:)``) before
  /// `next`: once only the middleware that see the request as the transport sends it are left,
  /// once per exchange, when the call withholds its secrets or the client keeps cookies (else
  /// there is nothing to do).
  private func needsPreparing(_ exchange: Exchange, before next: (any Middleware)?) -> Bool {
    (next.map(Self.sendsAsTheTransportDoes) ?? true) && !exchange.preparedForTransport
      && (exchange.withholding != nil || cookieJar != nil)
  }

  /// `request` and `exchange` made ready for the transport: without what a call that withholds
  /// its secrets withholds, and with the jar's cookies.
  private func prepared(_ request: HTTPRequest, _ exchange: Exchange) -> (HTTPRequest, Exchange) {
    var request = request
    var exchange = exchange
    exchange.preparedForTransport = true
    if let keeps = exchange.withholding {
      request.headers = HTTPHeaders(request.headers.fields.filter(keeps))
    }
    if let cookieJar {
      exchange.cookieJar = cookieJar
      let own = request.headers.values(for: "Cookie")
      exchange.appCookieField = own.isEmpty ? nil : own.joined(separator: "; ")
      request.headers["Cookie"] = CookieStore.merging(
        exchange.appCookieField, cookieJar.cookies(for: request.url))
    }
    return (request, exchange)
  }

  /// Whether `middleware` is one that sees the request as the transport sends it, and runs
  /// after the others (``APIClient/ordered(_:)``): a cache, or a signer.
  static func sendsAsTheTransportDoes(_ middleware: any Middleware) -> Bool {
    middleware is CachingMiddleware || middleware is SigningMiddleware
  }

  /// How a cache revalidates in the background through `rest` of the chain, after the call has
  /// returned: a buffered exchange with a deadline of its own (the call's timeout, at most
  /// ``CachingMiddleware/backgroundRevalidationTimeout``), no listeners (the call has ended), the
  /// call's context for the middleware below, and the client's ``BackgroundWork``, which cancels
  /// it when the client goes away.
  private func revalidator(through rest: ArraySlice<any Middleware>, as exchange: Exchange)
    -> CachingMiddleware.Revalidator
  {
    let context = RequestContext.current
    let withholding = exchange.withholding
    let timeout = min(
      exchange.deadline?.timeout ?? CachingMiddleware.backgroundRevalidationTimeout,
      CachingMiddleware.backgroundRevalidationTimeout)
    return CachingMiddleware.Revalidator(work: backgroundWork) { [self] request in
      var exchange = Exchange(
        streams: false, deadline: RequestDeadline(timeout: timeout, clock: clock), progress: nil,
        events: nil)
      exchange.withholding = withholding
      // Its request is the call's, made ready already: it sends the cookies it holds (those the
      // cache keyed it by), and stores none: a cookie removed once the call returned (at
      // sign-out) stays removed.
      exchange.preparedForTransport = true
      var background = context
      background?.deadline = exchange.deadline
      background?.events = nil
      background?.cancellation = nil
      return try await RequestContext.$current.withValue(background) {
        try await send(request, through: rest, as: exchange)
      }
    }
  }

  /// Send a request through the transport by the exchange's deadline, mapping failures to
  /// ``APIError``.
  ///
  /// A buffered call waits for the whole body (within the deadline and the size limit); a
  /// streamed call (``Exchange/streams``) returns at the head, its body in
  /// ``HTTPResponse/bodyStream``.
  func send(_ request: HTTPRequest, as exchange: Exchange) async throws -> HTTPResponse {
    guard let sharing, exchange.shares, let key = InFlightSharing.key(for: request) else {
      return try await exchangeNow(request, as: exchange)
    }
    // A server's pause or window past this caller's deadline fails it at once, saying so, as
    // it does an unshared call (the shared exchange below has no deadline to check).
    try limiter?.refuseHeldPast(exchange.deadline, for: request.url)
    // Shared: the exchange runs without a deadline or timeout of its own (the transport's idle
    // timeout would be the first caller's), and no caller's `cancelAll()` ends it; each caller
    // waits within its own deadline, and the last to leave ends it. It waits for a slot at the
    // highest priority among its callers, and its events go to every caller's listeners.
    let callers = SharedCallers(priority: exchange.priority, events: exchange.events)
    var shared = exchange
    shared.deadline = nil
    shared.cancellation = nil
    shared.callers = callers
    shared.events = callers.events
    var sharedRequest = request
    sharedRequest.timeout = nil
    return try await sharing.share(
      key, callers: callers, deadline: exchange.deadline, endedBy: exchange.cancellation
    ) { [shared, sharedRequest] in
      try await exchangeNow(sharedRequest, as: shared)
    }
  }

  /// Send a request through the transport now, as ``send(_:as:)`` says.
  private func exchangeNow(_ request: HTTPRequest, as exchange: Exchange) async throws
    -> HTTPResponse
  {
    var request = request
    if !exchange.streams, request.maximumResponseSize == nil {
      request.maximumResponseSize = APIClient.Configuration.defaultBufferedResponseLimit
    }
    // A slot of the client's call limits, held until the answer has arrived (a streamed call's
    // head): a retry waits for one again, and its backoff holds none.
    var permit: CallLimiter.Permit?
    defer { permit?.release() }
    do {
      if let limiter {
        let events = exchange.events
        let (held, waited) = try await limiter.acquire(
          for: request.url, priority: exchange.priority, deadline: exchange.deadline,
          endedBy: exchange.cancellation, raisedBy: exchange.callers
        ) { events?.post(.callQueued) }
        if let waited { events?.post(.callDequeued(waited: waited)) }
        permit = held
      }
      // A call its client cancelled while it was between two waits (in a middleware, say),
      // which no wait of its has seen, is not sent: its task was not cancelled.
      if exchange.cancellation?.isCancelled == true { throw CancellationError() }
      // A call in a task of its own (it met a middleware of the app's) that was cancelled while
      // that middleware ran, which went on to `next` without a wait that would have thrown, is
      // not sent either: a transport of the app's need not look at cancellation before it sends.
      try Task.checkCancellation()
      // Nor is one whose whole timeout ran out while such a middleware held it: it has timed
      // out, and a fast transport would otherwise answer it past its deadline.
      if let deadline = exchange.deadline, deadline.remaining <= .zero { throw APIError.timedOut }
      exchange.events?.attemptStarted(sending: request)
      let head: HTTPResponse
      if let direct = exchangeTransport {
        head = try await direct.exchange(request, exchange)
      } else {
        head = try await transport.send(request, as: exchange)
      }
      // The server that answered: after a redirect, not the one the request went to first.
      limiter?.observe(head, for: head.url ?? request.url)
      exchange.receivedCookies(head.headers, from: head.url ?? request.url)
      exchange.events?.responseHead(head, answering: request)
      return try await head.settlingBody(
        limit: request.maximumResponseSize, streams: exchange.streams,
        deadline: exchange.deadline, endedBy: exchange.cancellation)
    } catch {
      throw APIError(transportError: error, request: request)
    }
  }
}
