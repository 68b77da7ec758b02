import Foundation

/// Delivers events to one listener on a serial queue of its own, in the order they were posted,
/// without making the poster wait: posting appends to a list under a lock, and schedules a drain
/// (five milliseconds later, so that the events of many calls go over in one hand-off instead
/// of waking a thread for each) only when none is pending. The only mutable state is inside a
/// `Locked`; the listener is called from the queue alone.
final class EventDispatcher: Sendable {
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
      queue.asyncAfter(deadline: .now() + Self.gathering) { self.drain() }
    }
  }

  /// How long events gather before a drain hands them over.
  private static let gathering = DispatchTimeInterval.milliseconds(5)

  /// Hand every queued event to the listener, until none is left.
  private func drain() {
    // Two lists take turns: the posters fill one while this hands over the other.
    var batch: [CallEvent] = []
    while true {
      batch.removeAll(keepingCapacity: true)
      pending.withLock { pending in
        swap(&batch, &pending.events)
        pending.draining = !batch.isEmpty
      }
      guard !batch.isEmpty else { return }
      for event in batch {
        // What a listener throws is its own business: it cannot change the call.
        try? listener.receive(event)
      }
    }
  }
}
