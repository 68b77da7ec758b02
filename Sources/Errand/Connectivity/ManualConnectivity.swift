import Foundation

/// A ``ConnectivitySource`` whose state the app sets: on Linux, from what the app knows of its
/// network (a system service, a health check of its own); in tests, to take a client offline and
/// back without a network.
///
/// ```swift
/// let network = ManualConnectivity(.offline)
/// var configuration = APIClient.Configuration()
/// configuration.connectivity = ConnectivityPolicy(source: network)
/// let client = APIClient(baseURL: base, transport: URLSessionTransport(), configuration: configuration)
/// // … calls made now wait …
/// network.state = .online   // … and go
/// ```
///
/// Setting ``state`` tells every client observing it before it returns (unless another thread is
/// telling a change at that moment, which then tells this one next): a waiting call is on its way
/// when the setter returns, though it may not have been sent yet.
public final class ManualConnectivity: ConnectivitySource {
  private let broadcast: ConnectivityBroadcast

  /// A source that says `state` until told otherwise.
  /// - Parameter state: The state to start with; ``Connectivity/unknown`` by default, which lets
  ///   calls go.
  public init(_ state: Connectivity = .unknown) {
    broadcast = ConnectivityBroadcast(state)
  }

  /// The state the source says; set it to tell every client observing it.
  public var state: Connectivity {
    get { broadcast.current }
    set { broadcast.publish(newValue) }
  }

  /// Report the state to `update`: now, then each change.
  /// - Parameter update: Told each state.
  /// - Returns: What ends the reports.
  public func observe(_ update: @escaping @Sendable (Connectivity) -> Void)
    -> ConnectivityObservation
  {
    broadcast.observe(update)
  }

  /// How many observers it has: one per client that uses it and still exists.
  var observerCount: Int {
    broadcast.observerCount
  }
}
