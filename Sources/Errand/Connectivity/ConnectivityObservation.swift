import Foundation

/// A ``ConnectivitySource``'s reports to one observer, until ``cancel()`` ends them (or the
/// observation goes away).
public final class ConnectivityObservation: Sendable {
  private let ending: Locked<(@Sendable () -> Void)?>

  /// An observation that `cancel` ends.
  /// - Parameter cancel: What stops the reports; run once, by the first ``cancel()`` or when the
  ///   observation goes away.
  public init(cancel: @escaping @Sendable () -> Void) {
    ending = Locked(cancel)
  }

  /// Stop the reports. Calling it again does nothing.
  public func cancel() {
    let end = ending.withLock { ending in
      defer { ending = nil }
      return ending
    }
    end?()
  }

  deinit {
    cancel()
  }
}
