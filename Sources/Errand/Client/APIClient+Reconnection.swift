import Foundation

extension APIClient {
  /// Read a Server-Sent Events stream that reconnects, as a browser's `EventSource` does: when
  /// the connection ends or drops, wait the stream's reconnection time (its `retry`, else the
  /// policy's), then send the request again with `Last-Event-ID` set to the last event ID, and go
  /// on with the events in the same sequence. An ID that cannot be sent as a header value (a
  /// control character in it) is not sent.
  ///
  /// ```swift
  /// for try await event in client.events(feed, reconnect: .default) { show(event) }
  /// // An LLM-style POST stream, sent again (body included) on a reconnect:
  /// let answer = client.events(prompt, reconnect: ReconnectPolicy(resendsBody: true)) { state in
  ///   if case .reconnecting(let delay, _) = state { print("reconnecting in \(delay)") }
  /// }
  /// ```
  ///
  /// A `204 No Content` ends the stream; a status other than 2xx, an answer that is not
  /// `text/event-stream`, or a redirect refused or going round in a loop, fails it with
  /// ``APIError`` and no reconnection. Every wait is between ``ReconnectPolicy/minimumDelay``
  /// (half a second, whatever the server's `retry`) and the policy's maximum, and doubles while
  /// connections fail or end soon after they open (see ``ReconnectPolicy``). Waits run on the
  /// client's clock, so a `TestClock` drives them in tests. Each connection goes through the
  /// middleware, so a token refresh works on reconnects, and the call's timeout bounds each wait
  /// for the next event, as in ``events(_:)``.
  /// - Parameters:
  ///   - endpoint: What to call; its `Accept` is `text/event-stream` unless it sets one.
  ///   - policy: When and how often to reconnect, and whether a body is sent again.
  ///   - onState: Called, on the reading task, as the stream connects, waits and ends.
  /// - Returns: The events; nothing is sent until the first is asked for.
  public nonisolated func events<Value>(
    _ endpoint: Endpoint<Value>, reconnect policy: ReconnectPolicy,
    onState: (@Sendable (ConnectionState) -> Void)? = nil
  ) -> ReconnectingServerSentEvents {
    ReconnectingServerSentEvents(
      connect: { [self] lastEventID in
        var next = endpoint
        // An ID that cannot be sent as a header (a control character in it) is left out, rather
        // than fail every reconnection.
        next.headers["Last-Event-ID"] = lastEventID.flatMap { HTTPHeaders.canSend($0) ? $0 : nil }
        return try await events(next)
      }, policy: policy, hasBody: endpoint.body != nil, clock: configuration.clock,
      onState: onState)
  }
}
