import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Hostile probes of event delivery: a listener that calls back into its client, one
/// registered twice or on many clients at once, one that throws on every event, one that
/// blocks while another keeps up, and one whose clients go away. Each probe asserts the safe
/// behaviour (no deadlock, no event out of order, lost or heard twice at once, nothing kept
/// alive), so a failure is a finding.
@Suite(.timeLimit(.minutes(3))) struct EventDeliveryHostileTests {
  static let dogs = Endpoint<[String]>(path: "dogs")
  static let oneCall = [
    "callStarted", "requestBuilt", "attemptStarted", "responseHead", "callEnded",
  ]

  /// A client over a stub that answers every call, with `listeners`.
  static func client(_ listeners: [any EventListener]) -> APIClient {
    APIClient(
      baseURL: base, transport: StubTransport { _ in .json(["Rex"]) },
      configuration: APIClient.Configuration(eventListeners: listeners))
  }

  /// A listener that, hearing the end of the first call, makes a second call through the same
  /// client and waits for it on its own thread (and reads its dropped count on the way): the
  /// second call does not wait for the listener, so both end, and the listener hears the second
  /// call's events after the first's.
  @Test func aListenerThatCallsItsOwnClientDoesNotDeadlock() async throws {
    let listener = CallingBackListener()
    let client = Self.client([listener])
    listener.client.withLock { $0 = client }
    #expect(try await client.send(Self.dogs) == ["Rex"])
    let heard = await returnsInTime(seconds: 60) {
      let names = await listener.recording.prefix(10).reduce(into: []) { $0.append($1) }
      return names == Self.oneCall + Self.oneCall
    }
    #expect(heard, "the listener did not hear both calls")
    #expect(listener.nestedCall.withLock { $0 } == ["Rex"])
    #expect(listener.droppedSeen.withLock { $0 } == 0)
  }

  /// One listener registered twice on a client, and on 20 clients calling at once: it is never
  /// called from two threads at once, hears each call's events in order (twice over where it is
  /// registered twice), and misses none.
  @Test func aListenerOnManyClientsIsCalledOnceAtATimeAndInOrder() async throws {
    let listener = ConcurrencyProbe()
    let twice = Self.client([listener, listener])
    let clients = (0..<20).map { _ in Self.client([listener]) } + [twice]
    try await withThrowingTaskGroup(of: Void.self) { group in
      for client in clients {
        group.addTask {
          for _ in 0..<5 { _ = try await client.send(Self.dogs) }
        }
      }
      try await group.waitForAll()
    }
    // 20 clients × 5 calls, and the client with it twice: 5 calls heard twice.
    let total = (20 * 5 + 5 * 2) * 5
    let heard = await listener.recording.prefix(total).reduce(into: []) { $0.append($1) }
    #expect(heard.count == total)
    #expect(listener.mostAtOnce.withLock { $0 } == 1)
    for (_, events) in Dictionary(grouping: heard, by: \.callID) {
      let names = events.map(\.kind.name)
      if names.count == 10 {
        // Each event twice in a row: the two registrations post it one after the other.
        #expect(names == Self.oneCall.flatMap { [$0, $0] })
      } else {
        #expect(names == Self.oneCall)
      }
    }
    #expect(clients.map { $0.droppedEventCount(for: listener) }.allSatisfy { $0 == 0 })
  }

  /// A listener that throws on every event goes on hearing every event.
  @Test func aListenerThatAlwaysThrowsKeepsHearing() async throws {
    let listener = ThrowingRecorder()
    let client = Self.client([listener])
    for _ in 0..<3 { _ = try await client.send(Self.dogs) }
    let names = await listener.recording.prefix(15).reduce(into: []) { $0.append($1.kind.name) }
    #expect(names == Self.oneCall + Self.oneCall + Self.oneCall)
    #expect(client.droppedEventCount(for: listener) == 0)
  }

  /// A listener blocked on the same clients as one that keeps up: the one that keeps up hears
  /// every event of 200 calls while the other holds its first, and misses none.
  @Test func aBlockedListenerDoesNotHoldUpAnother() async throws {
    let blocked = GatedListener()
    let keepingUp = RecordingListener()
    let clients = (0..<4).map { _ in Self.client([blocked, keepingUp]) }
    for index in 0..<200 {
      _ = try await clients[index % 4].send(Self.dogs)
    }
    var names: [String] = []
    for _ in 0..<200 {
      names += await keepingUp.eventsOfOneCall().map(\.kind.name)
    }
    #expect(names == Array(repeating: Self.oneCall, count: 200).flatMap { $0 })
    #expect(clients.map { $0.droppedEventCount(for: keepingUp) } == [0, 0, 0, 0])
    blocked.open()
    let released = await blocked.recording.prefix(1000).reduce(0) { count, _ in count + 1 }
    #expect(released == 1000)
  }

  /// A listener whose clients are gone is let go once it has heard their events: nothing
  /// (a queue, a thread, a table of listeners) keeps it alive.
  @Test func aListenerIsLetGoWithItsClients() async throws {
    let (gone, goneContinuation) = AsyncStream.makeStream(of: Void.self)
    var heard: AsyncStream<CallEvent>
    do {
      let listener = DeinitProbe { goneContinuation.yield() }
      heard = listener.recording
      var clients = (0..<3).map { _ in Self.client([listener]) }
      for client in clients { _ = try await client.send(Self.dogs) }
      clients.removeAll()
    }
    let events = await heard.prefix(15).reduce(0) { count, _ in count + 1 }
    #expect(events == 15)
    let released = await returnsInTime(seconds: 60) {
      var iterator = gone.makeAsyncIterator()
      return await iterator.next() != nil
    }
    #expect(released, "the listener was still alive")
  }
}

/// Makes a second call through its client when the first ends, waiting for it on its thread.
private final class CallingBackListener: EventListener {
  let client = Locked<APIClient?>(nil)
  let nestedCall = Locked<[String]?>(nil)
  let droppedSeen = Locked<Int?>(nil)
  let recording: AsyncStream<String>
  private let continuation: AsyncStream<String>.Continuation
  private let calls = Locked(0)

  init() {
    (recording, continuation) = AsyncStream.makeStream(of: String.self)
  }

  func receive(_ event: CallEvent) throws {
    continuation.yield(event.kind.name)
    guard event.kind.name == "callEnded",
      calls.withLock({
        $0 += 1
        return $0
      }) == 1,
      let client = client.withLock({ $0 })
    else { return }
    droppedSeen.withLock { $0 = client.droppedEventCount(for: self) }
    let done = DispatchSemaphore(value: 0)
    let nested = nestedCall
    Task {
      let dogs = try? await client.send(Endpoint<[String]>(path: "dogs"))
      nested.withLock { $0 = dogs }
      done.signal()
    }
    done.wait()
  }
}

/// Records every event and the most calls it was in at once.
private final class ConcurrencyProbe: EventListener {
  let mostAtOnce = Locked(0)
  let recording: AsyncStream<CallEvent>
  private let continuation: AsyncStream<CallEvent>.Continuation
  private let inside = Locked(0)

  init() {
    (recording, continuation) = AsyncStream.makeStream(of: CallEvent.self)
  }

  func receive(_ event: CallEvent) throws {
    let now = inside.withLock {
      $0 += 1
      return $0
    }
    mostAtOnce.withLock { $0 = max($0, now) }
    // Long enough for a second thread, if there were one, to come in.
    for _ in 0..<1000 { _ = inside.withLock { $0 } }
    continuation.yield(event)
    inside.withLock { $0 -= 1 }
  }
}

/// Throws on every event, after recording it.
private final class ThrowingRecorder: EventListener {
  struct Failure: Error {}
  let recording: AsyncStream<CallEvent>
  private let continuation: AsyncStream<CallEvent>.Continuation

  init() {
    (recording, continuation) = AsyncStream.makeStream(of: CallEvent.self)
  }

  func receive(_ event: CallEvent) throws {
    continuation.yield(event)
    throw Failure()
  }
}

/// Records every event, and says when it is deinitialized.
private final class DeinitProbe: EventListener {
  let recording: AsyncStream<CallEvent>
  private let continuation: AsyncStream<CallEvent>.Continuation
  private let onDeinit: @Sendable () -> Void

  init(onDeinit: @escaping @Sendable () -> Void) {
    self.onDeinit = onDeinit
    (recording, continuation) = AsyncStream.makeStream(of: CallEvent.self)
  }

  deinit {
    onDeinit()
  }

  func receive(_ event: CallEvent) throws {
    continuation.yield(event)
  }
}
