import Foundation

/// Whether a client's calls wait for the network instead of failing: set
/// ``APIClient/Configuration/connectivity`` to use it (by default a call made offline fails at
/// once, as the transport fails it).
///
/// ```swift
/// var configuration = APIClient.Configuration()
/// configuration.connectivity = ConnectivityPolicy()   // the platform's source
/// ```
///
/// With it:
/// - **A call made while its ``source`` says ``Connectivity/offline`` waits** until the source
///   says otherwise, then goes. Each attempt waits (a retry of ``RetryMiddleware`` too), before it
///   takes a slot of the client's ``CallLimits``. The wait counts towards the call's deadline, on
///   the client's clock: when the deadline passes first, the call fails with
///   ``APIError/timedOut(_:)``, is never sent, and ``APIError/Context/connectivityWait`` says how
///   long it waited for the network. A waiting call that is cancelled (its task, or
///   ``APIClient/cancelAll()``) is never sent. A call without a timeout waits as long as the
///   network is down.
/// - **An attempt that could not connect** (one of ``ConnectionOutcome/noConnectionCodes``:
///   nothing of it reached a server, so sending it again cannot do anything twice, whatever its
///   method) **is sent once more when the network comes back**, if the source says offline once
///   it has failed (``retriesWhenOnline``). The wait is bounded by the deadline as above. An
///   attempt let through while the source was only trying (``Connectivity/unknown`` after
///   offline) that cannot connect waits again without using up that one retry. Other failures
///   (a connection lost midway, a timeout) are ``RetryMiddleware``'s to retry.
/// - **A reconnecting event stream** (``APIClient/events(_:reconnect:onState:)``) does not
///   reconnect while the source says offline: a connection that ends or fails then counts as no
///   failed attempt and starts no backoff; the stream waits, telling no state, and reconnects as
///   soon as the source says the network is back. ``APIClient/cancelAll()`` still ends it; a
///   ``ReconnectingServerSentEvents/restart()`` meanwhile changes nothing (the stream reconnects
///   when the network is back all the same).
/// - The client tells its source what became of every attempt (``ConnectivitySource/learn(from:)``),
///   which is how ``InferredConnectivity`` judges the network.
///
/// Without it (`nil`, the default) none of this happens, and it costs nothing.
public struct ConnectivityPolicy: Sendable {
  /// Where the client learns whether the network is up; `nil` (the default) for the platform's:
  /// a `PathMonitorConnectivity` on Apple platforms, an ``InferredConnectivity`` on the client's
  /// clock elsewhere. Each client makes its own default source.
  public var source: (any ConnectivitySource)?
  /// Whether an attempt that could not connect, while the source says offline, is sent once more
  /// when the network comes back; `true` by default.
  public var retriesWhenOnline: Bool

  /// A policy.
  /// - Parameters:
  ///   - source: Where the client learns whether the network is up; `nil` for the platform's.
  ///   - retriesWhenOnline: Whether an attempt that could not connect while offline is sent once
  ///     more when the network comes back.
  public init(source: (any ConnectivitySource)? = nil, retriesWhenOnline: Bool = true) {
    self.source = source
    self.retriesWhenOnline = retriesWhenOnline
  }

  /// The source the platform has: `NWPathMonitor` on Apple platforms, the client's own calls
  /// elsewhere.
  static func platformSource(clock: any Clock<Duration>) -> any ConnectivitySource {
    #if canImport(Network)
      PathMonitorConnectivity()
    #else
      InferredConnectivity(clock: clock)
    #endif
  }
}
