import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// How events reach listeners when a listener does not keep up: a blocked listener holds one
/// thread however many clients it is registered on, and at most
/// ``APIClient/maximumPendingEvents`` of its events wait, the newest beyond that dropped and
/// counted.
@Suite(.timeLimit(.minutes(3))) struct ListenerDeliveryTests {
  static let dogs = Endpoint<[String]>(path: "dogs")
  static let oneCall = [
    "callStarted", "requestBuilt", "attemptStarted", "responseHead", "callEnded",
  ]

  /// A client over `stub` whose listeners are `listeners`.
  static func client(_ stub: StubTransport, _ listeners: [any EventListener]) -> APIClient {
    APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(eventListeners: listeners))
  }

  #if os(Linux)
    /// The threads of this process, from `/proc/self/task`; with `named`, only those whose name
    /// (`comm`) is that.
    static func threadCount(named name: String? = nil) throws -> Int {
      let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")
      guard let name else { return tasks.count }
      return tasks.filter { task in
        let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
        return comm?.trimmingCharacters(in: .newlines) == name
      }.count
    }

    /// One listener that blocks, on 300 clients that make one call each: the process gains a
    /// thread for the listener, not one per client, and a call through another client (with a
    /// listener of its own) goes on; once released, the listener hears every event. The same
    /// for a listener that is a value, copied into each client: values of one type share a
    /// thread.
    @Test(arguments: [false, true])
    func aBlockedListenerOnManyClientsHoldsOneThread(asValue: Bool) async throws {
      let threadsBefore = try Self.threadCount()
      let listenerThreadsBefore = try Self.threadCount(named: "errand.events")
      let listener = GatedListener()
      let registered: any EventListener = asValue ? GatedValue(gated: listener) : listener
      let stub = StubTransport { _ in .json(["Rex"]) }
      let clients = (0..<300).map { _ in Self.client(stub, [registered]) }
      for client in clients {
        #expect(try await client.send(Self.dogs) == ["Rex"])
      }
      var entered = listener.entered.makeAsyncIterator()
      _ = await entered.next()  // the listener is blocked in its first event
      let other = RecordingListener()
      let unrelated = Self.client(stub, [other])
      let completed = await returnsInTime(seconds: 90) {
        guard (try? await unrelated.send(Self.dogs)) == ["Rex"] else { return false }
        return await other.eventsOfOneCall().map(\.kind.name) == Self.oneCall
      }
      #expect(completed, "a call through a client without the blocked listener did not complete")
      // Listener threads: this listener's and the unrelated client's, and those of suites with
      // listeners running beside this one; one per client would be 300.
      let listenerThreads = try Self.threadCount(named: "errand.events") - listenerThreadsBefore
      #expect(listenerThreads < 50, "\(listenerThreads) listener threads more")
      // Every thread the test process has: one Dispatch queue per client made 254 more here
      // (the limit of Dispatch's pool). Counted only when the suite runs alone (CI's step with
      // ERRAND_WALL_CLOCK=1): beside the other suites (servers, transports, disk caches) the
      // process gained up to 201 threads on a loaded 2-core machine without any per client.
      if ProcessInfo.processInfo.environment["ERRAND_WALL_CLOCK"] == "1" {
        let threadsBlocked = try Self.threadCount()
        #expect(
          threadsBlocked - threadsBefore < 100,
          "\(threadsBlocked - threadsBefore) threads more with one blocked listener")
      }
      #expect(listener.mostAtOnce == 1)
      listener.open()
      var heard: [CallEvent] = []
      for await event in listener.recording.prefix(300 * 5) { heard.append(event) }
      #expect(heard.count == 300 * 5)
      #expect(listener.mostAtOnce == 1)
      #expect(Set(heard.map(\.callID)).count == 300)
      // Each call's events arrive in order.
      for events in Dictionary(grouping: heard, by: \.callID).values {
        #expect(events.map(\.kind.name) == Self.oneCall)
      }
      #expect(
        clients.map { $0.droppedEventCount(for: registered) } == Array(repeating: 0, count: 300))
    }
  #endif

  /// A blocked listener on one client making 10,000 calls (50,000 events): the one it is
  /// blocked in and the 10,000 after it wait, the 39,999 after them are dropped and counted;
  /// released, the listener hears the kept events in order, then a later call's, all of them.
  @Test func aBlockedListenerKeepsTheCapAndCountsWhatItDrops() async throws {
    let cap = APIClient.maximumPendingEvents
    #expect(cap == 10_000)
    let listener = GatedListener()
    let client = Self.client(StubTransport { _ in .json(["Rex"]) }, [listener])
    for _ in 0..<10_000 {
      _ = try await client.send(Self.dogs)
    }
    #expect(client.pendingEventCount(for: listener) == cap)
    #expect(client.droppedEventCount(for: listener) == 50_000 - cap - 1)
    listener.open()
    // Once the listener has heard every kept event, the next call's events find room.
    var heard: [CallEvent] = []
    for await event in listener.recording.prefix(cap + 1) { heard.append(event) }
    _ = try await client.send(Endpoint<[String]>(path: "later"))
    for await event in listener.recording.prefix(5) { heard.append(event) }
    #expect(heard.suffix(5).allSatisfy { $0.endpoint == "GET later" })
    #expect(heard.count == cap + 1 + 5)
    // The first 2,000 calls whole, the first event of the next one, then the later call.
    let calls = Dictionary(grouping: heard, by: \.callID).values.sorted {
      $0[0].callID < $1[0].callID
    }
    #expect(calls.count == cap / 5 + 2)
    #expect(calls.dropLast(2).allSatisfy { $0.map(\.kind.name) == Self.oneCall })
    #expect(calls.dropLast().last?.map(\.kind.name) == ["callStarted"])
    #expect(calls.last?.map(\.kind.name) == Self.oneCall)
    #expect(heard.map(\.callID) == heard.map(\.callID).sorted())
    #expect(client.droppedEventCount(for: listener) == 50_000 - cap - 1)
  }
}

/// A listener that is a value: every copy of it shares the gate of one ``GatedListener``.
private struct GatedValue: EventListener {
  let gated: GatedListener

  func receive(_ event: CallEvent) throws {
    try gated.receive(event)
  }
}
