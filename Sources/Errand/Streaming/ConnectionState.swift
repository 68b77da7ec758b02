import Foundation

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
