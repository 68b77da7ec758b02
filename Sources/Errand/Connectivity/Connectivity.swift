import Foundation

/// Whether the network can be reached, as a ``ConnectivitySource`` tells it.
///
/// A client with a ``ConnectivityPolicy`` holds its calls back only while its source says
/// ``offline``; ``online`` and ``unknown`` let them go.
public enum Connectivity: Sendable, Hashable, CaseIterable {
  /// The network can be reached: calls go.
  case online
  /// It cannot (no interface is up, the path is unsatisfied, or the client's own calls cannot
  /// connect): calls wait for it.
  case offline
  /// Not known yet, or not for certain (before a path monitor's first report, while a connection
  /// would have to be brought up, or while ``InferredConnectivity`` tries again): calls go.
  case unknown
}
