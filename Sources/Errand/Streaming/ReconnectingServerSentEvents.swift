import Foundation

/// What a reconnecting event stream's next connection is for, as the closure of
/// ``APIClient/events(reconnect:onState:endpoint:)`` sees it.
public struct ReconnectAttempt: Sendable, Hashable {
  /// Which connection this is, from 1 for the first.
  public var connection: Int
  /// The stream's last event ID: the last `id` the server sent in a block that ended (on any
  /// connection), else the `Last-Event-ID` the first endpoint carried; `nil` while there is none,
  /// or once the server cleared it with an empty `id`. Errand sends it as `Last-Event-ID`; a
  /// service that wants a cursor in the query instead reads it here.
  public var lastEventID: String?

  /// Describe a connection.
  /// - Parameters:
  ///   - connection: Which connection this is, from 1.
  ///   - lastEventID: The stream's last event ID, if any.
  public init(connection: Int, lastEventID: String?) {
    self.connection = connection
    self.lastEventID = lastEventID
  }
}

/// The events of a stream that reconnects when its connection ends; see
/// ``APIClient/events(_:reconnect:onState:)``.
public struct ReconnectingServerSentEvents: AsyncSequence, Sendable {
  /// An event.
  public typealias Element = ServerSentEvent

  /// One connection, about to be opened: whether its request has a body, and how to open it
  /// with the stream's last event ID buffer.
  struct Connection: Sendable {
    var hasBody: Bool
    /// The endpoint, as ``APIClient/inFlight`` lists the stream from now on, and its tags.
    var endpoint: String
    var tags: Set<String>
    var open: @Sendable (_ lastEventID: String?) async throws -> ServerSentEvents
  }

  /// Lists a loop reading the stream among its client's calls, from before its first endpoint
  /// is made until it ends.
  let register: @Sendable () -> CallRegistration
  let prepare: @Sendable (ReconnectAttempt) async throws -> Connection
  let policy: ReconnectPolicy
  let clock: any Clock<Duration>
  let onState: (@Sendable (ConnectionState) -> Void)?
  /// The client's wait for the network (``ConnectivityPolicy``), when it has one: the stream
  /// does not reconnect while it says offline.
  let connectivity: ConnectivityGate?
  let restarts = ReconnectRestarts()

  /// End the connection now and open the next one at once: with the stream's last event ID (and,
  /// for ``APIClient/events(reconnect:onState:endpoint:)``, a request made anew), without
  /// waiting, and without counting the connection ended here as a failure. A stream that is
  /// waiting to reconnect stops waiting; a request being made (in the endpoint closure) when the
  /// restart comes is not sent. Events already read from the ended connection are still
  /// delivered; a stream that has ended, or whose loop has not started, is not affected. Every
  /// loop reading the stream restarts.
  ///
  /// ```swift
  /// let feed = client.events(reconnect: .default) { _ in
  ///   Endpoint<Data>(path: "feed", query: [URLQueryItem(name: "cursor", value: cursor.value)])
  /// }
  /// cursor.value = "from-the-start"
  /// feed.restart()   // the loop reading `feed` goes on with the new cursor's events
  /// ```
  public func restart() {
    restarts.restart()
  }

  /// Reads the events of one connection after another.
  public struct AsyncIterator: AsyncIteratorProtocol {
    let sequence: ReconnectingServerSentEvents
    /// Identifies this loop to ``ReconnectRestarts``, and lets its connection go with the loop.
    let reader: ReconnectRestarts.Reader
    var events: ServerSentEvents?
    var iterator: ServerSentEvents.AsyncIterator?
    /// The last event ID, kept across connections as the standard says: `nil` until the first
    /// endpoint or the server sets it, empty once the server cleared it.
    var lastEventID: String?
    var reconnectionTime: Duration?
    /// Whether the last request made had a body.
    var hasBody = false
    /// The ``ReconnectRestarts`` generation the current connection (or wait) belongs to.
    var generation = 0
    /// Reconnections in a row that failed to connect or ended before an event: the stream gives
    /// up when they reach the policy's `maximumAttempts`.
    var failedReconnections = 0
    /// Connections in a row that failed or ended before `backoffResetTime`: each doubles the
    /// next wait after the first.
    var shortConnections = 0
    var connections = 0
    var receivedOnThisConnection = false
    /// Measures the open connection, from its head, on the client's clock.
    var openFor: Stopwatch?
    var ended = false
    /// The loop's place among its client's calls (``APIClient/inFlight``), from before its first
    /// endpoint is made until it ends: ``APIClient/cancelAll()`` stops it, waits included.
    var registration: CallRegistration?

    /// The next event, from this connection or the next ones.
    /// - Returns: The event; `nil` once the server answers `204 No Content`.
    /// - Throws: ``APIError``: the status or decoding error of an answer that is not an event
    ///   stream, `.transport` with a ``ReconnectionError`` once too many attempts failed (or the
    ///   error that ended a connection, for a request with a body that is not sent again), what
    ///   the endpoint closure threw (unless it is a lost connection or a timeout, which is
    ///   tried again), and `.cancelled` as soon as the task is cancelled.
    public mutating func next() async throws -> ServerSentEvent? {
      while !ended {
        if sequence.restarts.isStopped(reader: reader.number) {
          // Its client cancelled it: its connection and its wait have ended.
          try fail(APIError.cancelled)
        }
        guard iterator != nil else {
          try await open()
          continue
        }
        // Only the read is caught here: what the steps after it throw ends the stream as it
        // is, told once.
        let read: Result<ServerSentEvent?, any Error>
        do {
          read = .success(try await iterator?.next())
        } catch {
          read = .failure(error)
        }
        if case .success(let event?) = read {
          receivedOnThisConnection = true
          failedReconnections = 0
          return event
        }
        if sequence.restarts.generation != generation {
          closeConnection(cancelling: true)
          continue
        }
        switch read {
        case .success:
          try await connectionEnded(nil)
        case .failure(let error as APIError) where Self.reconnectsAfter(error):
          try await connectionEnded(error)
        case .failure(let error):
          try fail(error)
        }
      }
      return nil
    }

    /// Connect (again), or fail for good. Offline after the first attempt (with a
    /// ``ConnectivityPolicy``), wait for the network instead, counting nothing; the loop then
    /// comes back here. A restart or a cancellation ends the wait too: the loop stops, or waits
    /// again while the network is down (a request made now would wait for it all the same).
    private mutating func open() async throws {
      if connections > 0, let gate = sequence.connectivity, gate.isOffline {
        do {
          try await sequence.restarts.wait(
            unlessPast: sequence.restarts.generation, reader: reader.number
          ) {
            try await gate.waitWhileOffline(by: nil)
          }
        } catch {
          try fail(APIError.cancelled)
        }
        return
      }
      connections += 1
      generation = sequence.restarts.generation
      if registration == nil {
        // Listed before its first endpoint is made (which may wait, or fail and be waited for):
        // a `cancelAll()` from now on ends the loop.
        let registration = sequence.register()
        let (restarts, number) = (sequence.restarts, reader.number)
        registration.setCancel { restarts.stop(reader: number) }
        self.registration = registration
      }
      let opened: ServerSentEvents
      do {
        try Task.checkCancellation()
        // Made while a restart or a stop (`cancelAll()`) can end the wait for it: a closure that
        // waits without looking at cancellation is left to finish in the background.
        let attempt = ReconnectAttempt(
          connection: connections, lastEventID: lastEventID.flatMap { $0.isEmpty ? nil : $0 })
        let made = Locked<Connection?>(nil)
        let prepare = sequence.prepare
        try await sequence.restarts.wait(unlessPast: generation, reader: reader.number) {
          let connection = try await prepare(attempt)
          made.withLock { $0 = connection }
        }
        guard let connection = made.withLock({ $0 }) else {
          // Restarted or stopped while the request was made: not sent.
          return
        }
        hasBody = connection.hasBody
        registration?.describe(endpoint: connection.endpoint, tags: connection.tags)
        // Restarted or stopped while the request was made: it is stale (its cursor, say), or
        // cancelled, so it is not sent.
        guard sequence.restarts.generation == generation,
          !sequence.restarts.isStopped(reader: reader.number)
        else { return }
        opened = try await connection.open(lastEventID)
      } catch let error as APIError where Self.reconnectsAfter(error) {
        return try await connectionEnded(error)
      } catch {
        try fail(error)
      }
      let response = opened.stream.response
      if response.status == 204 {
        // Read to its end (HTTP gives a 204 no body), so that a recorder sees the exchange end.
        _ = try? await opened.stream.collect()
        ended = true
        registration?.end()
        sequence.onState?(.closed)
        return
      }
      // The standard: any status but 200 fails the connection, for good; so does any type but
      // text/event-stream.
      guard response.status == 200 else {
        opened.stream.cancel()
        try fail(APIError.unacceptableStatus(response))
      }
      let type = response.headers["Content-Type"]
      guard Self.isEventStream(type) else {
        opened.stream.cancel()
        try fail(APIError.decoding(NotAnEventStream(contentType: type), response))
      }
      guard sequence.restarts.adopt(opened.stream, reader: reader.number, generation: generation)
      else {
        // Restarted while connecting: this answer is for the request from before.
        opened.stream.cancel()
        return
      }
      events = opened
      iterator = opened.makeAsyncIterator()
      receivedOnThisConnection = false
      openFor = Stopwatch(sequence.clock)
      sequence.onState?(.connected(attempt: connections))
    }

    /// Whether a `Content-Type` is `text/event-stream`, parameters aside.
    static func isEventStream(_ type: String?) -> Bool {
      guard let type else { return false }
      let essence = type.split(separator: ";", maxSplits: 1).first ?? ""
      return essence.trimmingCharacters(in: .whitespaces).lowercased() == "text/event-stream"
    }

    /// Leave the current connection, keeping what it set: its last event ID and `retry`; cancel
    /// it when it has not ended.
    private mutating func closeConnection(cancelling: Bool = false) {
      if let events {
        lastEventID = events.lastEventIDString
        reconnectionTime = events.reconnectionTime ?? reconnectionTime
        if cancelling { events.stream.cancel() }
      }
      sequence.restarts.leave(reader: reader.number)
      events = nil
      iterator = nil
      openFor = nil
      receivedOnThisConnection = false
    }

    /// The connection ended, cleanly or with `error` (or failed to open): wait, then reconnect,
    /// unless the policy or the budget says otherwise.
    private mutating func connectionEnded(_ error: APIError?) async throws {
      let lasted = openFor.map { $0.elapsed >= sequence.policy.backoffResetTime } ?? false
      let failed = !receivedOnThisConnection
      closeConnection()
      shortConnections = lasted ? 1 : shortConnections + 1
      if hasBody && !sequence.policy.resendsBody {
        // Nothing is sent again: the stream ends as a stream without reconnection would.
        if let error { try fail(error) }
        ended = true
        registration?.end()
        return
      }
      if let gate = sequence.connectivity, gate.isOffline {
        // The network is down: no failed attempt, no backoff; the next connection waits for it
        // and is made as soon as it is back.
        shortConnections = 0
        return
      }
      if failed {
        // The first connection is not a reconnection; each one after it that fails counts.
        if connections > 1 { failedReconnections += 1 }
        if let limit = sequence.policy.maximumAttempts, failedReconnections >= limit {
          let last = error ?? APIError.transport(URLError(.networkConnectionLost))
          var context = last.context ?? APIError.Context()
          context.attempts = connections
          context.retryPastDeadline = nil
          try fail(
            APIError.transport(
              ReconnectionError(attempts: failedReconnections, lastError: last, context: context)))
        }
      }
      let delay = sequence.policy.delay(
        reconnectionTime: reconnectionTime, doublings: shortConnections - 1)
      sequence.onState?(.reconnecting(after: delay, attempt: connections + 1))
      do {
        try await sequence.restarts.wait(
          for: delay, on: sequence.clock, unlessPast: generation, reader: reader.number)
      } catch {
        try fail(APIError.cancelled)
      }
    }

    /// End the stream with `error`, told once to `onState`.
    private mutating func fail(_ error: any Error) throws -> Never {
      ended = true
      registration?.end()
      events?.stream.cancel()
      sequence.restarts.leave(reader: reader.number)
      events = nil
      iterator = nil
      let failure = error as? APIError ?? APIError(transportError: error, request: nil)
      sequence.onState?(.failed(failure))
      throw failure
    }

    /// Whether an error ends a connection that is worth making again: a lost or refused
    /// connection, or a stall; not a status, a decoding error, a cancellation, or a redirect
    /// refused or going round in a loop (the same request would meet it again).
    static func reconnectsAfter(_ error: APIError) -> Bool {
      switch error.kind {
      case .transport:
        return !(error.underlyingError is RefusedRedirectError)
          && !(error.underlyingError is LineTooLongError)
          && error.urlError?.code != .dataLengthExceedsMaximum
          && error.urlError?.code != .httpTooManyRedirects
      case .timedOut: return true
      default: return false
      }
    }
  }

  /// An iterator over the events.
  /// - Returns: The iterator.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(sequence: self, reader: restarts.newReader())
  }
}
