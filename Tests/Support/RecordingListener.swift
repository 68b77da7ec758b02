import Errand
import Foundation

/// An event listener for tests: hands every event to an async sequence, so a test waits for the
/// events it expects instead of sleeping.
package final class RecordingListener: EventListener {
  private let continuation: AsyncStream<CallEvent>.Continuation
  private let stream: AsyncStream<CallEvent>

  package init() {
    (stream, continuation) = AsyncStream.makeStream(of: CallEvent.self)
  }

  package func receive(_ event: CallEvent) throws {
    continuation.yield(event)
  }

  /// The events heard, in order, up to and including the first that ends a call.
  package func eventsOfOneCall() async -> [CallEvent] {
    var events: [CallEvent] = []
    for await event in stream {
      events.append(event)
      switch event.kind {
      case .callEnded, .callFailed, .callCancelled: return events
      default: continue
      }
    }
    return events
  }

  /// The events heard, in order, up to and including the first of `name`.
  package func events(through name: String) async -> [CallEvent] {
    var events: [CallEvent] = []
    for await event in stream {
      events.append(event)
      if event.kind.name == name { return events }
    }
    return events
  }

  /// The names of the events heard, by call, until `count` calls have ended.
  package func eventNames(ofCalls count: Int) async -> [UInt64: [String]] {
    var names: [UInt64: [String]] = [:]
    var ended = 0
    for await event in stream {
      names[event.callID, default: []].append(event.kind.name)
      switch event.kind {
      case .callEnded, .callFailed, .callCancelled:
        ended += 1
        if ended == count { return names }
      default: continue
      }
    }
    return names
  }
}
