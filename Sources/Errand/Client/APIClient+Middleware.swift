import Foundation

extension APIClient {
  /// Send an endpoint's request through the client's and the endpoint's middleware and the
  /// transport, with the endpoint's context, mapping every failure to ``APIError``.
  ///
  /// The request's timeout becomes one deadline for the whole call, counted from here: every
  /// exchange (a retry's too) ends by it, and ``RetryMiddleware`` does not start an attempt it
  /// could not start before it.
  nonisolated func run<Value>(_ request: HTTPRequest, for endpoint: Endpoint<Value>) async throws
    -> HTTPResponse
  {
    var context = RequestContext(
      endpoint: endpoint.description,
      requiresAuthentication: endpoint.requiresAuthentication
        && !endpoint.leavesOrigin(of: baseURL, trustedHosts: configuration.trustedHosts),
      sample: endpoint.sample, isIdempotent: endpoint.isIdempotent ?? endpoint.method.isIdempotent)
    let deadline = request.timeout.map {
      RequestDeadline(timeout: $0, clock: configuration.clock)
    }
    context.deadline = deadline
    let chain =
      endpoint.middleware.isEmpty
      ? configuration.middleware : configuration.middleware + endpoint.middleware
    var response: HTTPResponse
    do {
      response = try await RequestContext.$current.withValue(context) {
        try await send(
          request, through: chain[...], deadline: deadline,
          withholding: endpoint.withholdsSecrets ? configuration.redaction : nil)
      }
    } catch {
      throw APIError(transportError: error, request: request)
    }
    response.url = response.url ?? request.url
    response.request = request
    return response
  }

  /// Send a request through the middleware chain, outermost first, then the transport; with
  /// `withholding`, the headers it hides are removed after the last middleware.
  nonisolated func send(
    _ request: HTTPRequest, through chain: ArraySlice<any Middleware>, deadline: RequestDeadline?,
    withholding secrets: Redaction? = nil
  ) async throws -> HTTPResponse {
    guard let first = chain.first else {
      var request = request
      if let secrets {
        request.headers = HTTPHeaders(
          request.headers.fields.filter { !secrets.hidesHeader($0.name) })
      }
      return try await exchange(request, deadline: deadline)
    }
    return try await first.intercept(request) { next in
      try await send(next, through: chain.dropFirst(), deadline: deadline, withholding: secrets)
    }
  }

  /// Send a request through the transport by the call's deadline, mapping failures to
  /// ``APIError``.
  ///
  /// A buffered call waits for the whole body (within the timeout and the size limit); a
  /// streamed call (``ExchangeMode/streams``) returns at the head, its body in
  /// ``HTTPResponse/bodyStream``.
  private nonisolated func exchange(_ request: HTTPRequest, deadline: RequestDeadline?)
    async throws -> HTTPResponse
  {
    let streams = ExchangeMode.streams
    var request = request
    if !streams, request.maximumResponseSize == nil {
      request.maximumResponseSize = APIClient.Configuration.defaultBufferedResponseLimit
    }
    do {
      if let direct = deadlineEnforcingTransport {
        return try await direct.exchange(request, streams: streams, deadline: deadline)
      }
      return try await transport.exchange(request, streams: streams, deadline: deadline)
    } catch {
      throw APIError(transportError: error, request: request)
    }
  }
}

/// Whether the client is streaming the current call: its exchange then returns at the head.
enum ExchangeMode {
  @TaskLocal static var streams = false
}
