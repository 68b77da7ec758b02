import Foundation

/// Delivers events to one listener on a serial queue of its own, in the order they were posted,
/// without making the poster wait: posting appends to a list under a lock, and starts a drain on
/// the queue only when none is running, so a busy client posts many events per hand-off.
///
/// `@unchecked Sendable` is safe: the only mutable state is inside a `Locked`; the listener is
/// `Sendable` and called from the queue alone.
final class EventDispatcher: @unchecked Sendable {
  private let listener: any EventListener
  private let queue: DispatchQueue
  private let pending = Locked<(events: [CallEvent], draining: Bool)>(([], false))

  init(_ listener: any EventListener) {
    self.listener = listener
    queue = DispatchQueue(label: "errand.event-listener.\(type(of: listener))")
  }

  /// Queue an event for the listener.
  func post(_ event: CallEvent) {
    let startsDrain = pending.withLock { pending in
      pending.events.append(event)
      guard !pending.draining else { return false }
      pending.draining = true
      return true
    }
    if startsDrain {
      queue.async { self.drain() }
    }
  }

  /// Hand every queued event to the listener, until none is left.
  private func drain() {
    while true {
      let batch = pending.withLock { pending -> [CallEvent] in
        if pending.events.isEmpty {
          pending.draining = false
        }
        defer { pending.events.removeAll(keepingCapacity: true) }
        return pending.events
      }
      guard !batch.isEmpty else { return }
      for event in batch {
        // What a listener throws is its own business: it cannot change the call.
        try? listener.receive(event)
      }
    }
  }
}
