import Foundation

/// How many calls a client sends at once, how fast, and in which order the others wait: set
/// ``APIClient/Configuration/callLimits`` to use them (by default a client sends every call at
/// once).
///
/// ```swift
/// var configuration = APIClient.Configuration()
/// configuration.callLimits = CallLimits(
///   maximumCalls: 8, maximumCallsPerHost: 4, rate: RequestRate(10, per: .seconds(1)))
/// ```
///
/// A limit counts exchanges with servers: each attempt holds a slot from the moment it is sent
/// until its answer has arrived (a buffered call's whole body; a streamed call's head, so that a
/// long stream, a download or an event stream never keeps other calls waiting). A retry waits
/// for a slot again; its backoff holds none. Calls wait by ``CallPriority``, then in the order
/// they came (a call passed over 8 times moves up a level: see ``CallPriority``); a call that
/// cannot start because its host is at its limit (or paused) does not hold up calls to other
/// hosts. A waiting call's deadline counts, and a cancelled one (its task, or
/// ``APIClient/cancelAll()``), even one cancelled just as its slot comes, is never sent. A shared
/// exchange (``APIClient/Configuration/sharesInFlightRequests``) waits at the highest priority
/// among its callers.
///
/// The server can slow the client down: with ``followsServerLimits`` (the default), a `429` or
/// `503` with `Retry-After` pauses every call to that host until then (at most
/// ``longestPause``), not only the call that got it (after a redirect, the host that answered),
/// and the `RateLimit` field (draft-ietf-httpapi-ratelimit-headers: `RateLimit:
/// "default";r=0;t=30`) or the older `RateLimit-Remaining` with `RateLimit-Reset` caps how many
/// calls go to the host before the window it names ends. Every policy the field lists counts,
/// each until its own window ends; a policy without `t` holds nothing back; a field that is not a
/// valid Structured Field List is ignored, an item without a valid `r` alone, and so is a
/// response with a positive `Age`. A call that such a pause or cap would hold past its deadline fails at
/// once with ``APIError/timedOut(_:)``, whose ``APIError/Context/rateLimitWait`` says how long it
/// would have waited.
public struct CallLimits: Sendable, Hashable {
  /// The most exchanges the client has with servers at once, or `nil` for no limit; at least 1
  /// (a smaller number set here counts as 1, as in the initializer: 0 would hold every call).
  public var maximumCalls: Int? {
    didSet { maximumCalls = maximumCalls.map { max(1, $0) } }
  }
  /// The most exchanges with one origin (scheme, host and port) at once, or `nil` for no limit;
  /// at least 1, as ``maximumCalls``.
  public var maximumCallsPerHost: Int? {
    didSet { maximumCallsPerHost = maximumCallsPerHost.map { max(1, $0) } }
  }
  /// How fast calls may go to one origin, or `nil` for as fast as they come.
  public var rate: RequestRate?
  /// Whether a host's `Retry-After` (on a `429` or `503`) and `RateLimit` fields hold back every
  /// call to it; `true` by default.
  public var followsServerLimits: Bool
  /// The longest a server's `Retry-After` or `RateLimit` window holds its host back: 5 minutes
  /// by default; at least zero.
  public var longestPause: Duration {
    didSet { longestPause = max(.zero, longestPause) }
  }

  /// Limits for a client.
  /// - Parameters:
  ///   - maximumCalls: The most exchanges at once, or `nil` for no limit.
  ///   - maximumCallsPerHost: The most exchanges with one origin at once, or `nil`.
  ///   - rate: How fast calls may go to one origin, or `nil`.
  ///   - followsServerLimits: Whether a server's `Retry-After` and `RateLimit` fields hold back
  ///     every call to its host.
  ///   - longestPause: The longest a server can hold its host back.
  public init(
    maximumCalls: Int? = nil, maximumCallsPerHost: Int? = nil, rate: RequestRate? = nil,
    followsServerLimits: Bool = true, longestPause: Duration = .seconds(300)
  ) {
    self.maximumCalls = maximumCalls.map { max(1, $0) }
    self.maximumCallsPerHost = maximumCallsPerHost.map { max(1, $0) }
    self.rate = rate
    self.followsServerLimits = followsServerLimits
    self.longestPause = max(.zero, longestPause)
  }
}

/// How fast calls may go to one host: a token bucket that holds up to ``count`` calls and
/// refills at ``count`` per ``interval``, so a burst of ``count`` goes at once and the rest
/// follow at the rate.
public struct RequestRate: Sendable, Hashable {
  /// How many calls per interval (and the largest burst); at least 1, whether set here or in
  /// the initializer (0 would divide the interval by zero, a negative count never let a call go).
  public var count: Int {
    didSet { count = max(1, count) }
  }
  /// The interval; at least a millisecond, whether set here or in the initializer.
  public var interval: Duration {
    didSet { interval = max(.milliseconds(1), interval) }
  }

  /// A rate of `count` calls per `interval`.
  /// - Parameters:
  ///   - count: How many calls; at least 1.
  ///   - interval: Per how long; at least a millisecond.
  public init(_ count: Int, per interval: Duration) {
    self.count = max(1, count)
    self.interval = max(.milliseconds(1), interval)
  }
}

/// Which waiting calls start first when a client's ``CallLimits`` hold some back.
///
/// Higher priorities start first, and calls of one priority in the order they came, with one
/// exception that keeps a steady stream of higher calls from holding a lower one back for ever:
/// a waiting call that 8 calls of a higher priority have started ahead of moves up one level
/// (``background`` to ``normal``, ``normal`` to ``userInitiated``), and counts again from there.
/// It keeps its place by arrival among the calls of its new level, so under any load it starts
/// after at most 16 such calls plus those of the top level that came before it.
public enum CallPriority: Int, Sendable, Hashable, Comparable, CaseIterable {
  /// Work the user is not waiting for: prefetching, syncing in the background.
  case background = 0
  /// The default.
  case normal = 1
  /// What the user just asked for and waits to see.
  case userInitiated = 2

  /// Whether `lhs` starts after `rhs`.
  /// - Parameters:
  ///   - lhs: A priority.
  ///   - rhs: Another priority.
  /// - Returns: `true` when `lhs` is the lower.
  public static func < (lhs: CallPriority, rhs: CallPriority) -> Bool {
    lhs.rawValue < rhs.rawValue
  }
}
