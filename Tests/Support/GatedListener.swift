import Errand
import Foundation

/// An event listener for tests that blocks on every event until ``open()`` is called, as a
/// listener stuck on a lock or a full pipe would: tells each time it is entered on ``entered``,
/// and hands each event, once let through, to ``recording``.
package final class GatedListener: EventListener {
  /// One element each time the listener is entered, before it blocks.
  package let entered: AsyncStream<Void>
  /// The events heard, in order, once let through.
  package let recording: AsyncStream<CallEvent>
  private let enteredContinuation: AsyncStream<Void>.Continuation
  private let recordingContinuation: AsyncStream<CallEvent>.Continuation
  private let gate = DispatchSemaphore(value: 0)
  private let inside = Locked((now: 0, most: 0))

  /// The most threads that were in the listener at once.
  package var mostAtOnce: Int {
    inside.withLock { $0.most }
  }

  package init() {
    (entered, enteredContinuation) = AsyncStream.makeStream(of: Void.self)
    (recording, recordingContinuation) = AsyncStream.makeStream(of: CallEvent.self)
  }

  /// Let every event through, from now on.
  package func open() {
    gate.signal()
  }

  package func receive(_ event: CallEvent) throws {
    inside.withLock {
      $0.now += 1
      $0.most = max($0.most, $0.now)
    }
    enteredContinuation.yield()
    // A turnstile: once opened, each waiter lets the next one through.
    gate.wait()
    gate.signal()
    inside.withLock { $0.now -= 1 }
    recordingContinuation.yield(event)
  }
}
