import Foundation

/// A transport that enforces a request's deadline and its caller's cancellation itself.
///
/// ``APIClient`` runs any other transport in a task of its own, raced against a timer, so that a
/// call returns at its deadline even when the transport is slow to notice. That costs a task and a
/// thread hop per request. A transport that can end its own wait (resume its continuation from the
/// timer, answer at once when it has nothing to wait for) adopts this protocol, and the client
/// calls it directly.
///
/// Not yet stable: Errand's own transports adopt it through `@_spi(Transports)`.
@_spi(Transports) public protocol DeadlineEnforcingTransport: Transport {
  /// Send a request and return at the response's head, its body in ``HTTPResponse/bodyStream``
  /// as it arrives (or, when the transport has it whole at once, in ``HTTPResponse/body``). The
  /// client settles the body in one place: it holds it to the request's
  /// ``HTTPRequest/maximumResponseSize`` and collects it for a buffered call.
  ///
  /// The call must throw ``APIError/timedOut`` once `deadline` passes before the head is
  /// complete, and throw `CancellationError` promptly when the calling task is cancelled, whether
  /// or not the work underneath has noticed yet.
  /// - Parameters:
  ///   - request: The request to send.
  ///   - streams: Whether the caller reads the body as it arrives (`true`) or collects it: a
  ///     transport may pace its reading by it; it returns at the head either way.
  ///   - deadline: When to give up; `nil` for never.
  ///   - progress: Who hears about the request body being sent, for this exchange only.
  /// - Returns: The response, whatever its status.
  /// - Throws: What ``Transport/send(_:)`` throws, ``APIError/timedOut`` or `CancellationError`.
  func exchange(
    _ request: HTTPRequest, streams: Bool, deadline: RequestDeadline?,
    progress: (@Sendable (TransferProgress) -> Void)?
  ) async throws -> HTTPResponse
}

extension Transport {
  /// Send a request as ``DeadlineEnforcingTransport/exchange(_:streams:deadline:progress:)``
  /// does: through it when the transport enforces deadlines itself, else through
  /// ``Transport/send(_:)`` or ``Transport/stream(_:)`` raced against the deadline.
  /// A transport that does not enforce deadlines cannot be told about upload progress: it
  /// reports none.
  /// - Parameters:
  ///   - request: The request to send.
  ///   - streams: Whether the caller reads the body as it arrives.
  ///   - deadline: When to give up; `nil` for never.
  ///   - progress: Who hears about the request body being sent, for this exchange only.
  /// - Returns: The response, whatever its status.
  /// - Throws: What the transport throws, ``APIError/timedOut`` or `CancellationError`.
  @_spi(Transports) public func exchange(
    _ request: HTTPRequest, streams: Bool, deadline: RequestDeadline?,
    progress: (@Sendable (TransferProgress) -> Void)? = nil
  ) async throws -> HTTPResponse {
    if let direct = self as? any DeadlineEnforcingTransport {
      return try await direct.exchange(
        request, streams: streams, deadline: deadline, progress: progress)
    }
    let operation: @Sendable () async throws -> HTTPResponse = { [self] in
      streams ? try await stream(request) : try await send(request)
    }
    guard let deadline else { return try await operation() }
    return try await deadline.race(operation)
  }
}
