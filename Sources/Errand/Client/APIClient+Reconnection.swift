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
  /// Every request sends `Accept: text/event-stream` and `Cache-Control: no-cache` unless the
  /// endpoint sets them. The endpoint's own `Last-Event-ID`, if it has one, is the stream's
  /// starting ID: sent on the first request, and on every reconnection until the server sends an
  /// `id`. The last event ID is the stream's, kept across connections: a connection without an
  /// `id` field goes on with the one before (its events carry it, and the next reconnection sends
  /// it), and an empty `id` clears it. An `id` counts once its block ends (its blank line): the
  /// `id` of an event the connection cut off is not sent, so that the server sends it again.
  ///
  /// A `204 No Content` ends the stream. As the standard says, any other status but `200`
  /// (another 2xx included), an answer that is not `text/event-stream`, or a redirect refused,
  /// going round in a loop or without a `Location`, fails it with ``APIError`` and no
  /// reconnection. Every wait is between ``ReconnectPolicy/minimumDelay``
  /// (half a second, whatever the server's `retry`) and the policy's maximum, and doubles while
  /// connections fail or end soon after they open (see ``ReconnectPolicy``). Waits run on the
  /// client's clock, so a `TestClock` drives them in tests. Each connection goes through the
  /// middleware, so a token refresh works on reconnects, and the call's timeout bounds each wait
  /// for the next event, as in ``events(_:)``.
  /// - Parameters:
  ///   - endpoint: What to call; its `Accept` is `text/event-stream` unless it sets one, and its
  ///     `Last-Event-ID`, if any, the stream's starting ID.
  ///   - policy: When and how often to reconnect, and whether a body is sent again.
  ///   - onState: Called, on the reading task, as the stream connects, waits and ends.
  /// - Returns: The events; nothing is sent until the first is asked for. Their
  ///   ``ReconnectingServerSentEvents/restart()`` reconnects at once.
  public nonisolated func events<Value>(
    _ endpoint: Endpoint<Value>, reconnect policy: ReconnectPolicy,
    onState: (@Sendable (ConnectionState) -> Void)? = nil
  ) -> ReconnectingServerSentEvents {
    events(reconnect: policy, onState: onState, known: endpoint) { _ in endpoint }
  }

  /// Read a Server-Sent Events stream that reconnects, with a request made for each connection:
  /// for a service that wants its cursor in the query rather than in `Last-Event-ID`, a token
  /// the app renews itself, or a stream the app moves elsewhere. Everything else is as
  /// ``events(_:reconnect:onState:)`` says; `Last-Event-ID` is still sent when the stream has an
  /// ID.
  ///
  /// ```swift
  /// let feed = client.events(reconnect: .default) { attempt in
  ///   Endpoint<Data>(path: "changes", query: [URLQueryItem(name: "since", value: attempt.lastEventID ?? "0")])
  /// }
  /// for try await change in feed { apply(change) }
  /// ```
  /// - Parameters:
  ///   - policy: When and how often to reconnect, and whether a body is sent again.
  ///   - onState: Called, on the reading task, as the stream connects, waits and ends.
  ///   - endpoint: Makes the request for each connection, from its number and the stream's last
  ///     event ID, on the reading task (cancelling the loop cancels it). A lost connection or a
  ///     timeout it throws (an ``APIError`` of a call it made itself) is a failed connection,
  ///     waited for and tried again; anything else it throws ends the stream, as ``APIError``.
  ///     The stream is in ``inFlight`` from the first event asked for, so ``cancelAll()`` ends
  ///     it while this makes the first endpoint too; it takes its tags from the endpoints made,
  ///     so ``cancelAll(tagged:)`` reaches it once the first is made.
  /// - Returns: The events; nothing is sent until the first is asked for.
  public nonisolated func events<Value>(
    reconnect policy: ReconnectPolicy, onState: (@Sendable (ConnectionState) -> Void)? = nil,
    endpoint: @escaping @Sendable (ReconnectAttempt) async throws -> Endpoint<Value>
  ) -> ReconnectingServerSentEvents {
    events(reconnect: policy, onState: onState, known: nil, endpoint: endpoint)
  }

  /// What ``APIClient/inFlight`` lists for a reconnecting event stream whose first endpoint is
  /// still being made by its closure.
  static let endpointBeingMade = "(endpoint being made)"

  /// ``events(reconnect:onState:endpoint:)``, listed in ``inFlight`` as `known` until its first
  /// endpoint is made (as ``endpointBeingMade`` when `nil`), then as its latest endpoint.
  nonisolated func events<Value>(
    reconnect policy: ReconnectPolicy, onState: (@Sendable (ConnectionState) -> Void)?,
    known: Endpoint<Value>?,
    endpoint: @escaping @Sendable (ReconnectAttempt) async throws -> Endpoint<Value>
  ) -> ReconnectingServerSentEvents {
    let redaction = configuration.redaction
    return ReconnectingServerSentEvents(
      register: { [calls] in
        CallRegistration(
          calls, endpoint: known?.description(redactedBy: redaction) ?? Self.endpointBeingMade,
          tags: known?.tags ?? [], kind: .eventStream)
      },
      prepare: { [self] attempt in
        // Raced against cancellation, as a token provider is: a closure that waits without
        // looking at cancellation (for a cursor, a sign-in) does not hold a stream that ended.
        let made = try await withCancellation { try await endpoint(attempt) }
        return ReconnectingServerSentEvents.Connection(
          hasBody: made.body != nil, endpoint: made.description(redactedBy: redaction),
          tags: made.tags
        ) { buffer in
          var next = made
          // The stream's ID, once it has one (an empty one clears it); until then the endpoint's.
          let id = buffer ?? next.headers["Last-Event-ID"] ?? ""
          // An ID that cannot be sent as a header (a control character in it) is left out,
          // rather than fail every reconnection.
          next.headers["Last-Event-ID"] = id.isEmpty || !HTTPHeaders.canSend(id) ? nil : id
          return try await self.events(next, lastEventID: id)
        }
      }, policy: policy, clock: configuration.clock, onState: onState,
      connectivity: connectivityGate)
  }
}
