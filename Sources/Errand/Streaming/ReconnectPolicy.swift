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
