import Foundation

/// Tells a client whether the network can be reached, so that its calls wait for it
/// (``ConnectivityPolicy``).
///
/// Errand has three: `PathMonitorConnectivity` (Apple platforms: `NWPathMonitor`),
/// ``InferredConnectivity`` (judged from the client's own calls; the default off Apple
/// platforms) and ``ManualConnectivity`` (what the app, or a test, sets). A source of your own
/// reports its state through ``observe(_:)``:
///
/// ```swift
/// final class ReachabilityConnectivity: ConnectivitySource {
///   private let states = ManualConnectivity()
///   init(reachability: Reachability) {
///     reachability.onChange = { [states] up in states.state = up ? .online : .offline }
///   }
///   func observe(_ update: @escaping @Sendable (Connectivity) -> Void) -> ConnectivityObservation {
///     states.observe(update)
///   }
/// }
/// ```
public protocol ConnectivitySource: Sendable {
  /// Report the state of the network to `update`: what is known now, before returning (a source
  /// that knows nothing yet may wait for its first report), then every change, in order and one
  /// at a time, until the returned observation is cancelled or goes away.
  ///
  /// `update` may be called on any thread and returns quickly; until it is first called, the
  /// client takes the state as ``Connectivity/unknown`` and sends its calls.
  /// - Parameter update: Told each state.
  /// - Returns: What ends the reports.
  func observe(_ update: @escaping @Sendable (Connectivity) -> Void) -> ConnectivityObservation

  /// Learn from what became of an attempt of a call the client made; a source that watches the
  /// network itself ignores it (the default does nothing).
  /// - Parameter outcome: Whether a server answered, or no connection could be made.
  func learn(from outcome: ConnectionOutcome)
}

extension ConnectivitySource {
  /// Does nothing: a source that watches the network itself learns nothing from calls.
  /// - Parameter outcome: Ignored.
  public func learn(from outcome: ConnectionOutcome) {}
}
