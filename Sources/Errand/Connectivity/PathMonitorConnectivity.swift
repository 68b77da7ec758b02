#if canImport(Network)
  import Foundation
  import Network

  /// A ``ConnectivitySource`` that follows the system's network path with `NWPathMonitor`: the
  /// default on Apple platforms.
  ///
  /// A satisfied path is ``Connectivity/online``, an unsatisfied one ``Connectivity/offline``,
  /// and one that requires a connection to be brought up (a VPN on demand, say)
  /// ``Connectivity/unknown``, which lets calls go, as does the time before the monitor's first
  /// report. The monitor starts when the source is made and stops when it goes away; each client
  /// whose ``ConnectivityPolicy`` names no source makes its own.
  ///
  /// ```swift
  /// var configuration = APIClient.Configuration()
  /// configuration.connectivity = ConnectivityPolicy(source: PathMonitorConnectivity(requiredInterfaceType: .wifi))
  /// ```
  ///
  /// A satisfied path says a route exists, not that a server answers: a call that cannot connect
  /// meanwhile fails as it would without the policy.
  public final class PathMonitorConnectivity: ConnectivitySource {
    private let broadcast: ConnectivityBroadcast
    private let monitor: Monitor

    /// `@unchecked Sendable`, because `NWPathMonitor` may not be declared `Sendable` by the SDK
    /// in use. It is safe: the monitor is set up and started in ``init(requiredInterfaceType:)``
    /// before the source can be shared, and otherwise touched only by `cancel()` in `deinit`,
    /// once no other reference exists; its handler runs on the monitor's own serial queue and
    /// reaches only the broadcast, which is `Sendable`.
    private final class Monitor: @unchecked Sendable {
      let monitor: NWPathMonitor

      init(_ monitor: NWPathMonitor) {
        self.monitor = monitor
      }

      deinit {
        monitor.cancel()
      }
    }

    /// A source that follows the path of every interface, or of one type.
    /// - Parameter requiredInterfaceType: The only kind of interface that counts (`.wifi`, say);
    ///   `nil` (the default) for any.
    public init(requiredInterfaceType: NWInterface.InterfaceType? = nil) {
      let monitor =
        requiredInterfaceType.map { NWPathMonitor(requiredInterfaceType: $0) }
        ?? NWPathMonitor()
      let broadcast = ConnectivityBroadcast(.unknown)
      monitor.pathUpdateHandler = { path in
        broadcast.publish(PathMonitorConnectivity.connectivity(of: path.status))
      }
      monitor.start(queue: DispatchQueue(label: "Errand.PathMonitorConnectivity"))
      self.broadcast = broadcast
      self.monitor = Monitor(monitor)
    }

    /// The state the monitor last reported; ``Connectivity/unknown`` before its first report.
    public var current: Connectivity {
      broadcast.current
    }

    /// Report the state to `update`: now, then each change.
    /// - Parameter update: Told each state.
    /// - Returns: What ends the reports.
    public func observe(_ update: @escaping @Sendable (Connectivity) -> Void)
      -> ConnectivityObservation
    {
      broadcast.observe(update)
    }

    /// What a path's status means for calls.
    static func connectivity(of status: NWPath.Status) -> Connectivity {
      if status == .satisfied { return .online }
      if status == .unsatisfied { return .offline }
      return .unknown
    }
  }
#endif
