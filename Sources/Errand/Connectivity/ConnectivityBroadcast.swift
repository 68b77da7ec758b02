import Foundation

/// The state a source reports and the observers it reports to: what ``ManualConnectivity``,
/// ``InferredConnectivity`` and `PathMonitorConnectivity` share.
///
/// Each change is told to every observer in order, one at a time: the thread that finds no one
/// telling becomes the teller and tells every change queued meanwhile, after releasing the lock
/// (so an observer may set the state again: its change is queued, not told inside the call). An
/// observer hears the state when it starts observing (through the same queue, so never after a
/// later change), then only the changes made after that.
final class ConnectivityBroadcast: Sendable {
  private typealias Observer = @Sendable (Connectivity) -> Void

  private struct State {
    var current: Connectivity
    /// The number of the last change.
    var version: UInt64 = 0
    /// Each observer, with the number of the last change it has been told (or that came before
    /// it started).
    var observers: [UInt64: (tell: Observer, since: UInt64)] = [:]
    var nextObserver: UInt64 = 0
    /// Changes not told yet, with their numbers; a new observer's first report goes to it `only`.
    var untold: [(version: UInt64, state: Connectivity, only: UInt64?)] = []
    var telling = false

    /// Whether the caller is to tell the queued changes: when no one else is.
    mutating func becomeTeller() -> Bool {
      guard !telling else { return false }
      telling = true
      return true
    }
  }

  private let state: Locked<State>

  init(_ initial: Connectivity) {
    state = Locked(State(current: initial))
  }

  /// The state now.
  var current: Connectivity {
    state.withLock { $0.current }
  }

  /// How many observers there are.
  var observerCount: Int {
    state.withLock { $0.observers.count }
  }

  /// Change the state and tell it; a change to the same state is not told.
  func publish(_ new: Connectivity) {
    if queue(new) { tellUntold() }
  }

  /// Change the state, queueing the change, and say whether the caller is to tell it
  /// (``tellUntold()``, once it holds no lock): for a source that decides its state under a lock
  /// of its own, so that changes are queued in the order it decided them.
  /// - Returns: Whether the caller is to tell the queued changes.
  func queue(_ new: Connectivity) -> Bool {
    state.withLock { state -> Bool in
      guard state.current != new else { return false }
      state.current = new
      state.version += 1
      state.untold.append((state.version, new, nil))
      return state.becomeTeller()
    }
  }

  /// Tell the queued changes until none is left.
  func tellUntold() {
    while true {
      let next = state.withLock { state -> (Connectivity, [Observer])? in
        guard !state.untold.isEmpty else {
          state.telling = false
          return nil
        }
        let change = state.untold.removeFirst()
        if let only = change.only {
          return (change.state, state.observers[only].map { [$0.tell] } ?? [])
        }
        var told: [Observer] = []
        for (id, observer) in state.observers where observer.since < change.version {
          state.observers[id]?.since = change.version
          told.append(observer.tell)
        }
        return (change.state, told)
      }
      guard let (change, observers) = next else { return }
      for tell in observers { tell(change) }
    }
  }

  /// Start telling `update` the state: the current one at once (before returning, unless
  /// another thread is telling a change, which then tells it next), then each later change.
  func observe(_ update: @escaping @Sendable (Connectivity) -> Void) -> ConnectivityObservation {
    let (id, tells) = state.withLock { state -> (UInt64, Bool) in
      let id = state.nextObserver
      state.nextObserver += 1
      state.observers[id] = (update, state.version)
      state.untold.append((state.version, state.current, id))
      return (id, state.becomeTeller())
    }
    if tells { tellUntold() }
    return ConnectivityObservation { [weak self] in
      _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
    }
  }
}

/// A source of Errand's own whose state can be read as it is now, before its observers have
/// been told a change (another thread may be telling an earlier one): a client decides whether
/// to wait on it, so that a state set just before a failure is the one the failure is judged by.
protocol ConnectivityNow: Sendable {
  /// The state now.
  var connectivityNow: Connectivity { get }
}

extension ManualConnectivity: ConnectivityNow {
  var connectivityNow: Connectivity { state }
}

extension InferredConnectivity: ConnectivityNow {
  var connectivityNow: Connectivity { current }
}
