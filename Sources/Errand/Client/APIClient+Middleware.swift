import Foundation

extension APIClient {
  /// Send an endpoint's request through the client's and the endpoint's middleware and the
  /// transport, with the endpoint's context, mapping every failure to ``APIError``.
  ///
  /// The request's timeout becomes one deadline for the whole call, counted from here: every
  /// exchange (a retry's too) ends by it, and ``RetryMiddleware`` does not start an attempt it
  /// could not start before it.
  nonisolated func run<Value>(
    _ request: HTTPRequest, for endpoint: Endpoint<Value>, call: CallOptions = CallOptions()
  ) async throws -> HTTPResponse {
    var call = call
    call.withholding = endpoint.withholdsSecrets ? configuration.redaction : nil
    var context = RequestContext(
      endpoint: endpoint.description,
      requiresAuthentication: endpoint.requiresAuthentication
        && !endpoint.leavesOrigin(of: baseURL, trustedHosts: configuration.trustedHosts),
      sample: endpoint.sample, isIdempotent: endpoint.isIdempotent ?? endpoint.method.isIdempotent)
    let deadline = request.timeout.map {
      RequestDeadline(timeout: $0, clock: configuration.clock)
    }
    context.deadline = deadline
    context.clock = configuration.clock
    context.cachePolicy = endpoint.cachePolicy
    context.events = call.events
    let chain =
      endpoint.middleware.isEmpty
      ? configuration.middleware : configuration.middleware + endpoint.middleware
    var response: HTTPResponse
    do {
      response = try await RequestContext.$current.withValue(context) {
        try await send(request, through: chain[...], deadline: deadline, call: call)
      }
    } catch {
      throw APIError(transportError: error, request: request)
    }
    response.url = response.url ?? request.url
    response.request = request
    if let events = call.events, let status = response.cacheStatus {
      events.post(.cacheOutcome(status))
    }
    return response
  }

  /// Send a request through the middleware chain, outermost first, then the transport, as
  /// `call` says.
  nonisolated func send(
    _ request: HTTPRequest, through chain: ArraySlice<any Middleware>, deadline: RequestDeadline?,
    call: CallOptions
  ) async throws -> HTTPResponse {
    guard let first = chain.first else {
      var request = request
      if let secrets = call.withholding {
        request.headers = HTTPHeaders(
          request.headers.fields.filter { !secrets.hidesHeader($0.name) })
      }
      return try await exchange(request, deadline: deadline, call: call)
    }
    return try await first.intercept(request) { next in
      try await send(next, through: chain.dropFirst(), deadline: deadline, call: call)
    }
  }

  /// Send a request through the transport by the call's deadline, mapping failures to
  /// ``APIError``.
  ///
  /// A buffered call waits for the whole body (within the deadline and the size limit); a
  /// streamed call (``CallOptions/streams``) returns at the head, its body in
  /// ``HTTPResponse/bodyStream``.
  private nonisolated func exchange(
    _ request: HTTPRequest, deadline: RequestDeadline?, call: CallOptions
  ) async throws -> HTTPResponse {
    var request = request
    if !call.streams, request.maximumResponseSize == nil {
      request.maximumResponseSize = APIClient.Configuration.defaultBufferedResponseLimit
    }
    call.events?.attemptStarted()
    do {
      let head: HTTPResponse
      if let direct = deadlineEnforcingTransport {
        head = try await direct.exchange(
          request, streams: call.streams, deadline: deadline, progress: call.progress)
      } else {
        head = try await transport.exchange(
          request, streams: call.streams, deadline: deadline, progress: call.progress)
      }
      call.events?.responseHead(head)
      return try await head.settlingBody(
        limit: request.maximumResponseSize, streams: call.streams, deadline: deadline)
    } catch {
      throw APIError(transportError: error, request: request)
    }
  }
}

/// How one call is made, set by the method that starts it and handed as a parameter through the
/// middleware chain to every exchange of that call. Never a task-local: a call a middleware makes
/// meanwhile (a token refresh through an `APIClient`) starts from its own options, not the outer
/// call's.
struct CallOptions: Sendable {
  /// Whether the exchange returns at the head, its body in ``HTTPResponse/bodyStream``.
  var streams = false
  /// Who hears about the request body being sent.
  var progress: (@Sendable (TransferProgress) -> Void)?
  /// Headers to remove after the last middleware: a next page at another origin.
  var withholding: Redaction?
  /// Where the call's events go, when the client has listeners.
  var events: CallEventSink?
}
