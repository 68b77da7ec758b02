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
  nonisolated func run<Value>(
    _ request: HTTPRequest, for endpoint: Endpoint<Value>, as exchange: Exchange = Exchange()
  ) async throws -> HTTPResponse {
    var exchange = exchange
    exchange.withholding = endpoint.withholdsSecrets ? configuration.redaction : nil
    exchange.deadline = request.timeout.map {
      RequestDeadline(timeout: $0, clock: configuration.clock)
    }
    exchange.sample = endpoint.sample
    var context = RequestContext(
      endpoint: endpoint.description(redactedBy: configuration.redaction),
      requiresAuthentication: endpoint.requiresAuthentication
        && !endpoint.leavesOrigin(of: baseURL, trustedHosts: configuration.trustedHosts),
      sample: endpoint.sample, isIdempotent: endpoint.isIdempotent ?? endpoint.method.isIdempotent)
    context.deadline = exchange.deadline
    context.clock = configuration.clock
    context.cachePolicy = endpoint.cachePolicy
    context.events = exchange.events
    let chain =
      endpoint.middleware.isEmpty
      ? configuration.middleware : configuration.middleware + endpoint.middleware
    var response: HTTPResponse
    do {
      response = try await RequestContext.$current.withValue(context) {
        try await send(request, through: chain[...], as: exchange)
      }
    } catch {
      throw APIError(transportError: error, request: request)
    }
    response.url = response.url ?? request.url
    response.request = request
    if let events = exchange.events, let status = response.cacheStatus {
      events.post(.cacheOutcome(status))
    }
    return response
  }

  /// Send a request through the middleware chain, outermost first, then the transport, as
  /// `exchange` says.
  nonisolated func send(
    _ request: HTTPRequest, through chain: ArraySlice<any Middleware>, as exchange: Exchange
  ) async throws -> HTTPResponse {
    guard let first = chain.first else {
      var request = request
      if let secrets = exchange.withholding {
        request.headers = HTTPHeaders(
          request.headers.fields.filter { !secrets.hidesHeader($0.name) })
      }
      return try await send(request, as: exchange)
    }
    return try await first.intercept(request) { next in
      try await send(next, through: chain.dropFirst(), as: exchange)
    }
  }

  /// Send a request through the transport by the exchange's deadline, mapping failures to
  /// ``APIError``.
  ///
  /// A buffered call waits for the whole body (within the deadline and the size limit); a
  /// streamed call (``Exchange/streams``) returns at the head, its body in
  /// ``HTTPResponse/bodyStream``.
  private nonisolated func send(
    _ request: HTTPRequest, as exchange: Exchange
  ) async throws -> HTTPResponse {
    var request = request
    if !exchange.streams, request.maximumResponseSize == nil {
      request.maximumResponseSize = APIClient.Configuration.defaultBufferedResponseLimit
    }
    exchange.events?.attemptStarted()
    do {
      let head: HTTPResponse
      if let direct = exchangeTransport {
        head = try await direct.exchange(request, exchange)
      } else {
        head = try await transport.send(request, as: exchange)
      }
      exchange.events?.responseHead(head)
      return try await head.settlingBody(
        limit: request.maximumResponseSize, streams: exchange.streams,
        deadline: exchange.deadline)
    } catch {
      throw APIError(transportError: error, request: request)
    }
  }
}
