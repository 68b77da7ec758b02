import Foundation

extension APIClient {
  /// The most events that wait for one listener, whichever clients they come from, besides the
  /// one it is hearing: 10,000 (about 2,000 calls' worth, a few megabytes at most).
  ///
  /// A listener that keeps up never comes near it. One that is slow or blocked falls behind:
  /// once this many of its events wait, each new event for it is dropped (the newest, not the
  /// oldest), so that what it hears is every event up to the gap, in order, then the events
  /// posted once it has made room. ``droppedEventCount(for:)`` counts what it missed. Calls are
  /// never slowed or held for a listener.
  public static let maximumPendingEvents = ListenerMailbox.capacity

  /// How many of this client's events `listener` missed because ``maximumPendingEvents`` of
  /// its events were waiting already (it was slow or blocked), since the client was created.
  ///
  /// ```swift
  /// let missed = client.droppedEventCount(for: auditLog)
  /// if missed > 0 { print("the audit log missed \(missed) events") }
  /// ```
  ///
  /// Listeners are told apart as their events are queued: an instance of a class by its
  /// identity, a value (a struct or an enum) by its type, so for a value this counts every
  /// listener of its type on this client. `0` for a listener the client does not have.
  /// - Parameter listener: A listener in ``APIClient/Configuration/eventListeners``.
  /// - Returns: The number of events dropped for it.
  public nonisolated func droppedEventCount(for listener: any EventListener) -> Int {
    let key = ListenerKey(listener)
    return eventDispatchers.filter { $0.key == key }.reduce(0) { $0 + $1.droppedEvents }
  }

  /// The events waiting for `listener`, from every client, besides the one it is hearing: at
  /// most ``maximumPendingEvents``. `0` for a listener the client does not have.
  package nonisolated func pendingEventCount(for listener: any EventListener) -> Int {
    let key = ListenerKey(listener)
    return eventDispatchers.first { $0.key == key }?.pendingEvents ?? 0
  }
}
