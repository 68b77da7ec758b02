import Foundation

/// The callers of one shared exchange (``APIClient/Configuration/sharesInFlightRequests``), as
/// the exchange sees them: it waits for a slot of the client's ``CallLimits`` at the highest
/// priority among them, raised when a caller of a higher one joins, and its events (queued,
/// attempts, heads, redirects) go to every caller's listeners.
///
/// The first caller makes it; each caller that joins the exchange adds itself
/// (``join(_:)``). A caller that leaves does not lower the priority.
final class SharedCallers: Sendable {
  private struct State {
    var priority: CallPriority
    /// Told when the priority rises (the limiter, while the exchange waits in it).
    var onRaise: (@Sendable (CallPriority) -> Void)?
  }

  private let state: Locked<State>
  /// The first caller's own listeners.
  private let caller: CallEventSink?
  /// Where the exchange's events go: to every caller's listeners, or `nil` when the client has
  /// none.
  let events: CallEventSink?

  /// The callers of an exchange that `priority`'s caller starts, whose events go to `events`.
  init(priority: CallPriority, events: CallEventSink?) {
    state = Locked(State(priority: priority))
    caller = events
    self.events = events.map { CallEventSink(relayingTo: $0) }
  }

  /// The highest priority among the callers so far.
  var priority: CallPriority {
    state.withLock { $0.priority }
  }

  /// The caller that made `other` joins this exchange: the exchange waits at its priority if
  /// that is higher, and its listeners hear the exchange's events (those posted before it joined
  /// first).
  func join(_ other: SharedCallers) {
    let priority = other.priority
    if let sink = other.caller { events?.relay(to: sink) }
    let raised = state.withLock { state -> (@Sendable (CallPriority) -> Void)? in
      guard priority > state.priority else { return nil }
      state.priority = priority
      return state.onRaise
    }
    raised?(priority)
  }

  /// Hear of every rise of the priority from now on (replacing whoever heard before).
  /// - Returns: The priority now, read as the handler is set, so that no rise is missed.
  func onRaise(_ handler: (@Sendable (CallPriority) -> Void)?) -> CallPriority {
    state.withLock { state in
      state.onRaise = handler
      return state.priority
    }
  }
}
