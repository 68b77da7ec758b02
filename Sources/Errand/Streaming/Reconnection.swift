import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// How ``APIClient/events(_:reconnect:onState:)`` reconnects, as EventSource does: after the
/// server's `retry` time (else ``initialDelay``), with `Last-Event-ID`, backing off while
/// connections fail or end soon after they open, and giving up after ``maximumAttempts`` failed
/// reconnections in a row.
///
/// Every wait is at least ``minimumDelay`` (half a second) and at most ``maximumDelay``, whatever
/// the server asks for. The first wait, and the first after a connection that stayed open for
/// ``backoffResetTime``, is the reconnection time; each connection after it that fails or ends
/// sooner doubles the wait, up to ``maximumDelay``. So a server that answers `retry: 0` and
/// closes every connection at once is reconnected to after 0.5, 1, 2, 4… seconds, then once a
/// minute, not in a loop.
public struct ReconnectPolicy: Sendable, Hashable {
  /// The wait before reconnecting while the server has sent no `retry`: 3 seconds by default.
  public var initialDelay: Duration
  /// The longest wait, however many failures came in a row, and the most a server's `retry` can
  /// ask for: 60 seconds by default. It is held between ``minimumDelay`` and a day: a longer one
  /// waits a day, so that no clock has to reach past what it can count.
  public var maximumDelay: Duration
  /// How many reconnections in a row may fail (fail to connect, or end before an event) before
  /// the stream gives up: after the first connection and this many reconnections have failed,
  /// it ends with a ``ReconnectionError`` whose ``ReconnectionError/attempts`` is this number;
  /// `0` gives up as soon as a connection fails. `nil` for no limit. 10 by default.
  public var maximumAttempts: Int?
  /// Whether a request with a body (a `POST` to an LLM or MCP endpoint) is sent again, body
  /// included, to reconnect; `false` by default, and the stream then ends with the error that
  /// ended the connection.
  public var resendsBody: Bool
  /// Whether a wait that backs off is drawn at random between half and all of its length (never
  /// under ``minimumDelay``), so that many clients dropped at once do not come back at once;
  /// `true` by default. The first wait after a connection that lasted ``backoffResetTime`` is the
  /// reconnection time exactly.
  public var jitter: Bool
  /// How long a connection must stay open (from its head to its end, on the client's clock) for
  /// the backoff to start over, so that the next wait is the reconnection time again: 60 seconds
  /// by default. A connection that fails, or ends sooner, even after delivering events, doubles
  /// the next wait.
  public var backoffResetTime: Duration = .seconds(60)

  /// The shortest wait before any reconnection: 500 milliseconds, whatever the policy or the
  /// server's `retry` says (`retry: 0` included).
  ///
  /// Without it a server that asks for no wait, or a policy with a zero delay, reconnects as
  /// fast as connections open: hundreds of requests a second from each client. Half a second
  /// is the floor Firefox puts on `retry`: short enough for a server that closes the stream on
  /// purpose after each event to be followed closely, long enough that a fleet of clients
  /// cannot be turned into a flood.
  public static let minimumDelay: Duration = .milliseconds(500)

  /// Create a policy.
  /// - Parameters:
  ///   - initialDelay: The wait before reconnecting while the server has sent no `retry`.
  ///   - maximumDelay: The longest wait.
  ///   - maximumAttempts: How many reconnections in a row may fail; `nil` for no limit.
  ///   - resendsBody: Whether a request with a body is sent again to reconnect.
  ///   - jitter: Whether waits that back off are drawn at random up to their length.
  public init(
    initialDelay: Duration = .seconds(3), maximumDelay: Duration = .seconds(60),
    maximumAttempts: Int? = 10, resendsBody: Bool = false, jitter: Bool = true
  ) {
    self.initialDelay = initialDelay
    self.maximumDelay = maximumDelay
    self.maximumAttempts = maximumAttempts
    self.resendsBody = resendsBody
    self.jitter = jitter
  }

  /// The most ``maximumDelay`` can be: a day.
  static let longestDelay: Duration = .seconds(86_400)

  /// 3 seconds before the first reconnection, doubling while connections fail or end within a
  /// minute, up to a minute, at most 10 failed reconnections in a row, with jitter; requests
  /// with a body are not sent again.
  public static let `default` = ReconnectPolicy()

  /// The wait before the next reconnection: the reconnection time (the server's, else
  /// ``initialDelay``) doubled `doublings` times, held between ``minimumDelay`` and
  /// ``maximumDelay`` without overflowing, then jittered when it backs off.
  func delay(reconnectionTime: Duration?, doublings: Int) -> Duration {
    let floor = Self.minimumDelay
    let ceiling = Swift.min(Swift.max(maximumDelay, floor), Self.longestDelay)
    var wait = Swift.min(Swift.max(reconnectionTime ?? initialDelay, floor), ceiling)
    guard doublings > 0 else { return wait }
    for _ in 0..<doublings {
      guard wait < ceiling / 2 else {
        wait = ceiling
        break
      }
      wait = wait * 2
    }
    guard jitter else { return wait }
    // Between half and all of it, in thousandths: integer steps, which cannot overflow.
    let cut = (wait / 1000) * Int.random(in: 0...500)
    return Swift.max(wait - cut, floor)
  }
}

/// Where a reconnecting event stream is, reported beside its events.
public enum ConnectionState: Sendable {
  /// Connected: the head arrived, and events follow. `attempt` counts connections from 1.
  case connected(attempt: Int)
  /// The connection ended; the next attempt starts after `delay`.
  case reconnecting(after: Duration, attempt: Int)
  /// The server answered `204 No Content`: the stream is over, as the standard says.
  case closed
  /// The stream gave up, with the error it ends with.
  case failed(APIError)
}

/// The stream gave up reconnecting: too many reconnections in a row failed.
public struct ReconnectionError: Error, LocalizedError, Sendable {
  /// How many reconnections in a row failed: the policy's
  /// ``ReconnectPolicy/maximumAttempts``. The connection before them (which failed too, or
  /// delivered events before it ended) is not counted.
  public var attempts: Int
  /// Why the last one failed.
  public var lastError: APIError
  /// The stream's request and how many times it was sent in all (every connection, the ones
  /// that delivered events too), with the last failure's metrics; ``APIError/context`` reads
  /// it.
  public var context: APIError.Context?

  /// Says how many attempts failed, and the last failure.
  public var errorDescription: String? {
    let last = lastError.errorDescription ?? "\(lastError)"
    guard attempts > 0 else {
      return "gave up on the event stream without reconnecting (the policy allows no failed "
        + "reconnection); the last failure: " + last
    }
    let reconnections = attempts == 1 ? "1 failed attempt" : "\(attempts) failed attempts"
    return "gave up reconnecting the event stream after \(reconnections) in a row; the last: "
      + last
  }
}

extension ReconnectionError: CarriesCallContext {}

/// The answer to an event stream request was not an event stream (`Content-Type` is not
/// `text/event-stream`): a reconnecting stream fails with it, inside ``APIError/decoding(_:_:)``.
public struct NotAnEventStream: Error, LocalizedError, Sendable {
  /// The `Content-Type` the server sent, if any.
  public var contentType: String?

  /// Names what arrived instead.
  public var errorDescription: String? {
    "the answer is \(contentType.map { "\"\($0)\"" } ?? "without a Content-Type"), not "
      + "text/event-stream"
  }
}

/// The events of a stream that reconnects when its connection ends; see
/// ``APIClient/events(_:reconnect:onState:)``.
public struct ReconnectingServerSentEvents: AsyncSequence, Sendable {
  /// An event.
  public typealias Element = ServerSentEvent

  let connect: @Sendable (_ lastEventID: String?) async throws -> ServerSentEvents
  let policy: ReconnectPolicy
  let hasBody: Bool
  let clock: any Clock<Duration>
  let onState: (@Sendable (ConnectionState) -> Void)?

  /// Reads the events of one connection after another.
  public struct AsyncIterator: AsyncIteratorProtocol {
    let sequence: ReconnectingServerSentEvents
    var events: ServerSentEvents?
    var reader: ServerSentEvents.AsyncIterator?
    var lastEventID: String?
    var reconnectionTime: Duration?
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

    /// The next event, from this connection or the next ones.
    /// - Returns: The event; `nil` once the server answers `204 No Content`.
    /// - Throws: ``APIError``: the status or decoding error of an answer that is not an event
    ///   stream, `.transport` with a ``ReconnectionError`` once too many attempts failed (or the
    ///   error that ended a connection, for a request with a body that is not sent again), and
    ///   `.cancelled` as soon as the task is cancelled.
    public mutating func next() async throws -> ServerSentEvent? {
      while !ended {
        guard reader != nil else {
          try await open()
          continue
        }
        // Only the read is caught here: what the steps after it throw ends the stream as it
        // is, told once.
        let read: Result<ServerSentEvent?, any Error>
        do {
          read = .success(try await reader?.next())
        } catch {
          read = .failure(error)
        }
        switch read {
        case .success(let event?):
          receivedOnThisConnection = true
          failedReconnections = 0
          return event
        case .success(nil):
          try await connectionEnded(nil)
        case .failure(let error as APIError) where Self.reconnectsAfter(error):
          try await connectionEnded(error)
        case .failure(let error):
          try fail(error)
        }
      }
      return nil
    }

    /// Connect (again), or fail for good.
    private mutating func open() async throws {
      connections += 1
      let opened: ServerSentEvents
      do {
        try Task.checkCancellation()
        opened = try await sequence.connect(lastEventID)
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
        sequence.onState?(.closed)
        return
      }
      let type = response.headers["Content-Type"]
      guard type?.lowercased().hasPrefix("text/event-stream") == true else {
        opened.stream.cancel()
        try fail(APIError.decoding(NotAnEventStream(contentType: type), response))
      }
      events = opened
      reader = opened.makeAsyncIterator()
      receivedOnThisConnection = false
      openFor = Stopwatch(sequence.clock)
      sequence.onState?(.connected(attempt: connections))
    }

    /// The connection ended, cleanly or with `error` (or failed to open): wait, then reconnect,
    /// unless the policy or the budget says otherwise.
    private mutating func connectionEnded(_ error: APIError?) async throws {
      if let events {
        lastEventID = events.lastEventID
        reconnectionTime = events.reconnectionTime ?? reconnectionTime
      }
      let lasted = openFor.map { $0.elapsed >= sequence.policy.backoffResetTime } ?? false
      events = nil
      reader = nil
      openFor = nil
      shortConnections = lasted ? 1 : shortConnections + 1
      let failed = !receivedOnThisConnection
      receivedOnThisConnection = false
      if sequence.hasBody && !sequence.policy.resendsBody {
        // Nothing is sent again: the stream ends as a stream without reconnection would.
        if let error { try fail(error) }
        ended = true
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
        try await sequence.clock.sleep(for: delay)
      } catch {
        try fail(APIError.cancelled)
      }
    }

    /// End the stream with `error`, told once to `onState`.
    private mutating func fail(_ error: any Error) throws -> Never {
      ended = true
      events?.stream.cancel()
      events = nil
      reader = nil
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
    AsyncIterator(sequence: self)
  }
}
