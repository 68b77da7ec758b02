import Foundation

/// A transport that takes each request with its ``Exchange``: it honours the call's deadline
/// and its caller's cancellation itself, reports upload progress and tells the call's listeners
/// about redirects.
///
/// ``APIClient`` runs any other transport in a task of its own, raced against a timer, so that a
/// call returns at its deadline even when the transport is slow to notice; such a transport
/// reports no upload progress. That costs a task and a thread hop per request. A transport that
/// can end its own wait (resume its continuation from the timer, answer at once when it has
/// nothing to wait for) adopts this protocol, and the client calls it directly. Errand's own
/// transports and `StubTransport` do.
///
/// ```swift
/// struct EchoTransport: ExchangeTransport {
///   func exchange(_ request: HTTPRequest, _ exchange: Exchange) async throws -> HTTPResponse {
///     if let remaining = exchange.remainingTime, remaining <= .zero { throw APIError.timedOut }
///     let body = request.body ?? Data()
///     exchange.reportUploadProgress(
///       TransferProgress(completedBytes: body.count, expectedBytes: body.count))
///     return HTTPResponse(status: 200, headers: request.headers, body: body, url: request.url)
///   }
///
///   func send(_ request: HTTPRequest) async throws -> HTTPResponse {
///     try await exchange(request, Exchange())
///   }
/// }
/// ```
public protocol ExchangeTransport: Transport {
  /// Send a request and return at the response's head, its body in ``HTTPResponse/bodyStream``
  /// as it arrives (or, when the transport has it whole at once, in ``HTTPResponse/body``); a
  /// buffered exchange (``Exchange/streams`` is `false`) may return once its body has ended or
  /// backs up instead. The
  /// client settles the body in one place: it holds it to the request's
  /// ``HTTPRequest/maximumResponseSize`` and collects it for a buffered call.
  ///
  /// The call must throw ``APIError/timedOut(_:)`` once the exchange's deadline passes before the
  /// head is complete, and throw `CancellationError` promptly when the calling task is
  /// cancelled, whether or not the work underneath has noticed yet.
  /// - Parameters:
  ///   - request: The request to send, as the last middleware passed it on.
  ///   - exchange: What the call asks of this exchange: whether it streams, its deadline, who
  ///     hears its progress and its redirects.
  /// - Returns: The response, whatever its status.
  /// - Throws: What ``Transport/send(_:)`` throws, ``APIError/timedOut(_:)`` or
  ///   `CancellationError`.
  func exchange(_ request: HTTPRequest, _ exchange: Exchange) async throws -> HTTPResponse
}

extension Transport {
  /// Send a request as ``ExchangeTransport/exchange(_:_:)`` does: through it when the transport
  /// adopts it, else through ``Transport/send(_:)`` or ``Transport/stream(_:)`` raced against
  /// the exchange's deadline (reporting no upload progress).
  /// - Parameters:
  ///   - request: The request to send.
  ///   - exchange: The exchange.
  /// - Returns: The response, whatever its status.
  /// - Throws: What the transport throws, ``APIError/timedOut(_:)`` or `CancellationError`.
  package func send(_ request: HTTPRequest, as exchange: Exchange) async throws -> HTTPResponse {
    // A transport of the app's, asked by one of Errand's (a stub's passthrough) within a call
    // that runs in its caller's task: raced against the client's cancelling the call too.
    let cancellation = self is any CallCancellationAware ? nil : exchange.cancellation
    if let direct = self as? any ExchangeTransport {
      guard let cancellation else { return try await direct.exchange(request, exchange) }
      return try await withCancellation(endedBy: cancellation) {
        try await direct.exchange(request, exchange)
      }
    }
    let streams = exchange.streams
    let operation: @Sendable () async throws -> HTTPResponse = { [self] in
      streams ? try await stream(request) : try await send(request)
    }
    if let deadline = exchange.deadline {
      return try await deadline.race(endedBy: cancellation, operation)
    }
    guard let cancellation else { return try await operation() }
    return try await withCancellation(endedBy: cancellation, operation)
  }
}
