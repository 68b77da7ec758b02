import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// How ``APIClient/events(_:reconnect:onState:)`` reconnects, as EventSource does: after the
/// server's `retry` time (else ``initialDelay``), with `Last-Event-ID`, backing off after
/// consecutive failures, and giving up after ``maximumAttempts`` of them.
public struct ReconnectPolicy: Sendable, Hashable {
  /// The wait before reconnecting while the server has sent no `retry`: 3 seconds by default.
  public var initialDelay: Duration
  /// The longest wait, however many failures came in a row: 60 seconds by default.
  public var maximumDelay: Duration
  /// How many reconnections in a row may fail (fail to connect, or end before an event) before
  /// the stream gives up; `nil` for no limit. 10 by default.
  public var maximumAttempts: Int?
  /// Whether a request with a body (a `POST` to an LLM or MCP endpoint) is sent again, body
  /// included, to reconnect; `false` by default, and the stream then ends with the error that
  /// ended the connection.
  public var resendsBody: Bool
  /// Whether a wait after a failure is drawn at random between half and all of its length, so
  /// that many clients dropped at once do not come back at once; `true` by default. The first
  /// wait after a connection that delivered events is the reconnection time exactly.
  public var jitter: Bool

  /// Create a policy.
  /// - Parameters:
  ///   - initialDelay: The wait before reconnecting while the server has sent no `retry`.
  ///   - maximumDelay: The longest wait.
  ///   - maximumAttempts: How many reconnections in a row may fail; `nil` for no limit.
  ///   - resendsBody: Whether a request with a body is sent again to reconnect.
  ///   - jitter: Whether waits after failures are drawn at random up to their length.
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

  /// 3 seconds before the first reconnection, doubling after each failure up to a minute, at most
  /// 10 failures in a row, with jitter; requests with a body are not sent again.
  public static let `default` = ReconnectPolicy()

  /// The wait before reconnection attempt `failures + 1` after `failures` failures in a row.
  func delay(reconnectionTime: Duration?, failures: Int) -> Duration {
    let base = reconnectionTime ?? initialDelay
    guard failures > 0 else { return min(base, maximumDelay) }
    var wait = base
    for _ in 0..<min(failures, 30) where wait < maximumDelay {
      wait = wait * 2
    }
    wait = min(wait, maximumDelay)
    guard jitter else { return wait }
    let fraction = Double.random(in: 0.5...1)
    return wait * fraction
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

/// The stream gave up reconnecting: too many attempts in a row failed.
public struct ReconnectionError: Error, LocalizedError, Sendable {
  /// How many attempts in a row failed.
  public var attempts: Int
  /// Why the last one failed.
  public var lastError: APIError
  /// The stream's request and how many times it was sent in all (every connection, the ones
  /// that delivered events too), with the last failure's metrics; ``APIError/context`` reads
  /// it.
  public var context: APIError.Context?

  /// Says how many attempts failed, and the last failure.
  public var errorDescription: String? {
    "gave up reconnecting the event stream after \(attempts) failed attempts in a row; the last: "
      + (lastError.errorDescription ?? "\(lastError)")
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
    /// Attempts in a row that failed to connect or ended before an event.
    var failures = 0
    var connections = 0
    var receivedOnThisConnection = false
    var ended = false

    /// The next event, from this connection or the next ones.
    /// - Returns: The event; `nil` once the server answers `204 No Content`.
    /// - Throws: ``APIError``: the status or decoding error of an answer that is not an event
    ///   stream, `.transport` with a ``ReconnectionError`` once too many attempts failed (or the
    ///   error that ended a connection, for a request with a body that is not sent again), and
    ///   `.cancelled` as soon as the task is cancelled.
    public mutating func next() async throws -> ServerSentEvent? {
      while !ended {
        if reader == nil {
          try await open()
          continue
        }
        do {
          if let event = try await reader?.next() {
            receivedOnThisConnection = true
            failures = 0
            return event
          }
          try await connectionEnded(nil)
        } catch let error as APIError where Self.reconnectsAfter(error) {
          try await connectionEnded(error)
        } catch {
          try fail(error)
        }
      }
      return nil
    }

    /// Connect (again), or fail for good.
    private mutating func open() async throws {
      connections += 1
      do {
        try Task.checkCancellation()
        let opened = try await sequence.connect(lastEventID)
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
          throw APIError.decoding(NotAnEventStream(contentType: type), response)
        }
        events = opened
        reader = opened.makeAsyncIterator()
        receivedOnThisConnection = false
        sequence.onState?(.connected(attempt: connections))
      } catch let error as APIError where Self.reconnectsAfter(error) {
        try await connectionEnded(error)
      } catch {
        try fail(error)
      }
    }

    /// The connection ended, cleanly or with `error`: wait, then reconnect, unless the policy or
    /// the budget says otherwise.
    private mutating func connectionEnded(_ error: APIError?) async throws {
      if let events {
        lastEventID = events.lastEventID
        reconnectionTime = events.reconnectionTime ?? reconnectionTime
      }
      events = nil
      reader = nil
      if !receivedOnThisConnection {
        failures += 1
      }
      receivedOnThisConnection = false
      if sequence.hasBody && !sequence.policy.resendsBody {
        // Nothing is sent again: the stream ends as a stream without reconnection would.
        if let error { try fail(error) }
        ended = true
        return
      }
      if let limit = sequence.policy.maximumAttempts, failures > limit {
        let last = error ?? APIError.transport(URLError(.networkConnectionLost))
        var context = last.context ?? APIError.Context()
        context.attempts = connections
        context.retryPastDeadline = nil
        try fail(
          APIError.transport(
            ReconnectionError(attempts: failures, lastError: last, context: context)))
      }
      let delay = sequence.policy.delay(
        reconnectionTime: reconnectionTime, failures: Swift.max(0, failures - 1))
      sequence.onState?(.reconnecting(after: delay, attempt: connections + 1))
      do {
        try await sequence.clock.sleep(for: delay)
      } catch {
        try fail(APIError.cancelled)
      }
    }

    private mutating func fail(_ error: any Error) throws -> Never {
      ended = true
      events?.stream.cancel()
      let failure = error as? APIError ?? APIError(transportError: error, request: nil)
      sequence.onState?(.failed(failure))
      throw failure
    }

    /// Whether an error ends a connection that is worth making again: a lost or refused
    /// connection, or a stall; not a status, a decoding error or a cancellation.
    static func reconnectsAfter(_ error: APIError) -> Bool {
      switch error.kind {
      case .transport:
        return !(error.underlyingError is RefusedRedirectError)
          && !(error.underlyingError is LineTooLongError)
          && error.urlError?.code != .dataLengthExceedsMaximum
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
