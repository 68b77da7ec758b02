import Foundation

extension HTTPResponse {
  /// The one place a response's body is settled, whatever form the transport handed it in (a
  /// body stream, or a whole body): it becomes an ``HTTPBody`` held to `limit`; a streamed call
  /// gets it as ``bodyStream``, a buffered one has it collected into ``body`` by `deadline`.
  ///
  /// ``APIClient`` settles every exchange's response with it; Errand's transports settle what
  /// their own ``Transport/send(_:)`` and ``Transport/stream(_:)`` return with it.
  /// - Parameters:
  ///   - limit: The most bytes the body may have (the request's
  ///     ``HTTPRequest/maximumResponseSize``), or `nil` for no limit.
  ///   - streams: Whether to return at once with the body in ``bodyStream``.
  ///   - deadline: When a buffered call stops waiting for the rest of the body.
  /// - Returns: The response, its body streamed or whole.
  /// - Throws: `URLError(.dataLengthExceedsMaximum)` for a body over the limit, the error that
  ///   cut the transfer short, ``APIError/timedOut(_:)`` or `CancellationError`, when collecting.
  @_spi(Transports) public func settlingBody(
    limit: Int?, streams: Bool, deadline: RequestDeadline?
  ) async throws -> HTTPResponse {
    try await settlingBody(limit: limit, streams: streams, deadline: deadline, endedBy: nil)
  }

  /// ``settlingBody(limit:streams:deadline:)``, collecting until the call's client cancels the
  /// call too (`cancellation`), which stops the body with `CancellationError`.
  func settlingBody(
    limit: Int?, streams: Bool, deadline: RequestDeadline?,
    endedBy cancellation: CallCancellation?
  ) async throws -> HTTPResponse {
    if bodyStream == nil, !streams {
      // Whole already (a stub's answer, a custom transport's): nothing to collect or buffer.
      try BodyBuffer.admit(wholeBodyOf: body.count, limit: limit)
      return self
    }
    var response = self
    let body = bodyStream ?? HTTPBody(body)
    body.limit(to: limit)
    response.body = Data()
    response.bodyStream = nil
    if streams {
      response.bodyStream = body
      return response
    }
    if let whole = try body.buffer.takeWholeIfEnded() {
      response.body = whole
      return response.withMetrics(atEndOf: body)
    }
    let disarm = deadline?.whenExpired { body.stop(throwing: APIError.timedOut) }
    let disarmCancel = cancellation?.onCancel { body.stop(throwing: CancellationError()) }
    defer {
      disarm?()
      disarmCancel?()
    }
    response.body = try await body.collect()
    return response.withMetrics(atEndOf: body)
  }

  /// This response with the metrics its transport reported at `body`'s end, when it did: a head
  /// handed over before the end (a body that backed up) has what was known then.
  func withMetrics(atEndOf body: HTTPBody) -> HTTPResponse {
    guard let final = body.metrics else { return self }
    var response = self
    response.metrics = final.completing(head: metrics)
    return response
  }
}
