import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

/// `restart()` against whatever a reconnecting stream is doing at that moment (connecting,
/// reading, waiting, ending, being cancelled, read by two loops, restarted by many tasks at once),
/// and what the endpoint closure can do to it. After each, nothing stays registered for restarts.
@Suite(.timeLimit(.minutes(3))) struct ReconnectRestartTests {
  static let feed = Endpoint<Data>(path: "feed", decoding: .data)

  /// A client with no timeout on `clock`, over a stub that answers the `n`th request (from 0)
  /// with `answer(request, n)`.
  static func client(
    clock: TestClock = TestClock(),
    answer: @escaping @Sendable (HTTPRequest, Int) async throws -> StubResponse
  ) async -> (APIClient, StubTransport) {
    let stub = StubTransport()
    await stub.on(.any, .handler { request, call in try await answer(request, call - 1) })
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(timeout: nil, clock: clock))
    return (client, stub)
  }

  /// An event stream that sends `wire`, then neither ends nor sends more.
  static func stalled(_ wire: String) -> StubResponse {
    .stalledAfterHeaders(body: Data(wire.utf8), headers: ["Content-Type": "text/event-stream"])
  }

  /// An event stream that sends `wire` and ends.
  static func ended(_ wire: String) -> StubResponse {
    .chunks([Data(wire.utf8)], headers: ["Content-Type": "text/event-stream"])
  }

  /// The states a stream tells, by case name.
  final class States: Sendable {
    private let told = Locked<[String]>([])

    var record: @Sendable (ConnectionState) -> Void {
      { [told] state in
        told.withLock { $0.append("\(state)".prefix { $0 != "(" }.description) }
      }
    }

    var names: [String] { told.withLock { $0 } }
  }

  @Test func aRestartBeforeTheLoopStartsChangesNothing() async throws {
    let (client, stub) = await Self.client { _, _ in Self.stalled("data: a\n\n") }
    let events = client.events(Self.feed, reconnect: .default)
    events.restart()
    var iterator = events.makeAsyncIterator()
    events.restart()
    #expect(try await iterator.next()?.data == "a")
    #expect(await stub.requests.count == 1)
  }

  @Test func aRestartAfterTheEndChangesNothing() async throws {
    let (client, stub) = await Self.client { _, _ in .status(204) }
    let events = client.events(Self.feed, reconnect: .default)
    var iterator = events.makeAsyncIterator()
    #expect(try await iterator.next() == nil)
    events.restart()
    #expect(try await iterator.next() == nil)
    #expect(await stub.requests.count == 1)
    #expect(events.restarts.registered == (connections: 0, waits: 0))
  }

  /// A loop left early (`break`) is let go: its connection stayed registered for ever, one more
  /// for each loop, until the next restart.
  @Test func loopsLeftEarlyAreLetGo() async throws {
    let (client, stub) = await Self.client { _, call in Self.stalled("data: \(call)\n\n") }
    let events = client.events(Self.feed, reconnect: .default)
    for _ in 0..<5 {
      for try await _ in events { break }
    }
    #expect(await stub.requests.count == 5)
    #expect(events.restarts.registered == (connections: 0, waits: 0))
  }

  /// A restart while the endpoint closure makes a connection's request: that request is stale
  /// (made before the restart), so it is not sent; the next one is. It was sent, then cancelled.
  @Test func aRestartWhileTheEndpointIsMadeSendsNoStaleRequest() async throws {
    let (client, stub) = await Self.client { _, _ in Self.stalled("data: a\n\n") }
    let cursor = Locked("old")
    let restarting = Locked<ReconnectingServerSentEvents?>(nil)
    let events = client.events(reconnect: .default) { attempt in
      let value = cursor.withLock { $0 }
      if attempt.connection == 1 {
        // The app moves its cursor and restarts while this request is being made.
        cursor.withLock { $0 = "new" }
        restarting.withLock { $0 }?.restart()
      }
      return Endpoint<Data>(
        path: "feed", query: [URLQueryItem(name: "cursor", value: value)], decoding: .data)
    }
    restarting.withLock { $0 = events }
    var iterator = events.makeAsyncIterator()
    #expect(try await iterator.next()?.data == "a")
    #expect(await stub.requests.map(\.url.query) == ["cursor=new"])
  }

  /// Restarts from one task in a row, between two reads: one reconnection, not one per restart.
  @Test func restartsInARowReconnectOnce() async throws {
    let (client, stub) = await Self.client { _, call in Self.stalled("data: \(call)\n\n") }
    let events = client.events(Self.feed, reconnect: .default)
    var iterator = events.makeAsyncIterator()
    #expect(try await iterator.next()?.data == "0")
    for _ in 0..<1000 { events.restart() }
    #expect(try await iterator.next()?.data == "1")
    #expect(await stub.requests.count == 2)
    #expect(events.restarts.registered == (connections: 1, waits: 0))
  }

  /// Fifty tasks restart at once while the loop reads, connects and reconnects: the loop goes
  /// on, without waiting, with at most one connection per restart, and lets everything go.
  @Test func manyRestartsAtOnceNeitherHangNorGrow() async throws {
    let storming = Locked(true)
    let (client, stub) = await Self.client { _, call in
      Self.stalled(storming.withLock { $0 } ? "data: \(call)\n\n" : "data: final\n\n")
    }
    let states = States()
    let events = client.events(Self.feed, reconnect: .default, onState: states.record)
    let (read, announce) = AsyncStream.makeStream(of: Void.self)
    let reading = Task {
      var count = 0
      for try await event in events {
        count += 1
        announce.yield()
        if event.data == "final" { break }
      }
      return count
    }
    var reads = read.makeAsyncIterator()
    _ = await reads.next()
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<50 { group.addTask { events.restart() } }
    }
    storming.withLock { $0 = false }
    events.restart()
    let count = try await reading.cancellableValue
    #expect(count <= 52)
    #expect(await stub.requests.count <= 52)
    #expect(!states.names.contains("reconnecting"))
    #expect(events.restarts.registered == (connections: 0, waits: 0))
  }

  /// A restart and a cancellation at once, in either order: the stream ends cancelled, told once.
  @Test(arguments: [false, true])
  func aRestartAndACancellationAtOnceEndTheStreamOnce(restartFirst: Bool) async throws {
    let (client, _) = await Self.client { _, call in Self.stalled("data: \(call)\n\n") }
    let states = States()
    let events = client.events(Self.feed, reconnect: .default, onState: states.record)
    let (read, announce) = AsyncStream.makeStream(of: Void.self)
    let reading = Task { for try await _ in events { announce.yield() } }
    var reads = read.makeAsyncIterator()
    _ = await reads.next()
    if restartFirst {
      events.restart()
      reading.cancel()
    } else {
      reading.cancel()
      events.restart()
    }
    let error = await #expect(throws: APIError.self) { try await reading.value }
    #expect(error?.kind == .cancelled)
    #expect(states.names.filter { $0 == "failed" }.count == 1)
    #expect(events.restarts.registered == (connections: 0, waits: 0))
  }

  /// A restart after the connection ended, before the loop saw the end: the loop reconnects at
  /// once, without a wait.
  @Test func aRestartAfterTheConnectionEndedReconnectsAtOnce() async throws {
    let (client, stub) = await Self.client { _, call in
      call == 0 ? Self.ended("data: a\n\n") : .status(204)
    }
    let states = States()
    let events = client.events(Self.feed, reconnect: .default, onState: states.record)
    var iterator = events.makeAsyncIterator()
    #expect(try await iterator.next()?.data == "a")
    events.restart()
    #expect(try await iterator.next() == nil)
    #expect(states.names == ["connected", "closed"])
    #expect(await stub.requests.count == 2)
    #expect(events.restarts.registered == (connections: 0, waits: 0))
  }

  /// Two loops reading one sequence each have their own connection and last event ID: a
  /// restart reconnects both, each with its own ID.
  @Test func twoLoopsOnOneSequenceKeepTheirOwnIDs() async throws {
    let (client, stub) = await Self.client { request, call in
      if let last = request.headers["Last-Event-ID"] {
        return Self.stalled("data: after \(last)\n\n")
      }
      return Self.stalled("id: \(call)\ndata: first\n\n")
    }
    let events = client.events(Self.feed, reconnect: .default)
    let (firsts, announce) = AsyncStream.makeStream(of: Void.self)
    let loops = (0..<2).map { _ in
      Task {
        var iterator = events.makeAsyncIterator()
        let first = try await iterator.next()
        announce.yield()
        let second = try await iterator.next()
        return (first?.id, second?.data)
      }
    }
    var read = firsts.makeAsyncIterator()
    _ = await read.next()
    _ = await read.next()
    events.restart()
    for loop in loops {
      let (id, data) = try await loop.cancellableValue
      #expect(data == "after \(try #require(id))")
    }
    let sent = await stub.requests.compactMap { $0.headers["Last-Event-ID"] }
    #expect(sent.sorted() == ["0", "1"])
    #expect(events.restarts.registered == (connections: 0, waits: 0))
  }

  /// How a wait to reconnect can end.
  enum WaitEnd: String, CaseIterable, Sendable {
    case time, restart, cancellation
  }

  /// However a wait ends, nothing of it stays registered.
  @Test(arguments: WaitEnd.allCases) func aWaitIsLetGoHoweverItEnds(_ end: WaitEnd) async throws {
    let clock = TestClock()
    let (client, _) = await Self.client(clock: clock) { _, call in
      call == 0 ? Self.ended("data: a\n\n") : .status(204)
    }
    let events = client.events(Self.feed, reconnect: ReconnectPolicy(jitter: false))
    let reading = Task { try await events.reduce(0) { count, _ in count + 1 } }
    #expect(await clock.waitForSleeper(dueIn: .seconds(3)))
    switch end {
    case .time: await clock.advance(by: .seconds(3))
    case .restart: events.restart()
    case .cancellation: reading.cancel()
    }
    let result = await reading.result
    if end == .cancellation {
      let error = #expect(throws: APIError.self) { try result.get() }
      #expect(error?.kind == .cancelled)
    } else {
      #expect(try result.get() == 1)
    }
    #expect(events.restarts.registered == (connections: 0, waits: 0))
  }

  /// An endpoint closure that waits (for a token, say) is cancelled with the loop: the stream
  /// ends at once, cancelled, without a request.
  @Test func cancellingWhileTheEndpointClosureWaitsEndsTheStream() async throws {
    let clock = TestClock()
    let (client, stub) = await Self.client(clock: clock) { _, _ in .status(204) }
    let states = States()
    let events = client.events(reconnect: .default, onState: states.record) { _ in
      try await clock.sleep(for: .seconds(3600))
      return Self.feed
    }
    let reading = Task { try await events.reduce(0) { count, _ in count + 1 } }
    #expect(await clock.waitForSleeper(dueIn: .seconds(3600)))
    reading.cancel()
    let error = await #expect(throws: APIError.self) { try await reading.value }
    #expect(error?.kind == .cancelled)
    #expect(states.names == ["failed"])
    #expect(await stub.requests.isEmpty)
  }

  /// A `CancellationError` the closure throws of its own (its task was not cancelled) ends the
  /// stream, told once, with no request and no reconnection.
  @Test func aCancellationErrorFromTheEndpointClosureEndsTheStream() async throws {
    let (client, stub) = await Self.client { _, _ in .status(204) }
    let states = States()
    let events = client.events(reconnect: .default, onState: states.record) {
      _ -> Endpoint<Data> in throw CancellationError()
    }
    let error = await #expect(throws: APIError.self) {
      for try await _ in events {}
    }
    #expect(error?.kind == .cancelled)
    #expect(states.names == ["failed"])
    #expect(await stub.requests.isEmpty)
  }

  /// A lost connection the closure throws (it called the network itself, for a token) is a
  /// failed connection: the stream waits, at least the floor, and tries again.
  @Test func aLostConnectionFromTheEndpointClosureIsRetriedAfterAWait() async throws {
    let clock = TestClock()
    let (client, stub) = await Self.client(clock: clock) { _, _ in .status(204) }
    let states = States()
    let events = client.events(
      reconnect: ReconnectPolicy(initialDelay: .zero, jitter: false), onState: states.record
    ) { attempt in
      guard attempt.connection > 1 else {
        throw APIError.transport(URLError(.notConnectedToInternet))
      }
      return Self.feed
    }
    let reading = Task { try await events.reduce(0) { count, _ in count + 1 } }
    #expect(await clock.waitForSleeper(dueIn: ReconnectPolicy.minimumDelay))
    #expect(await stub.requests.isEmpty)
    await clock.advance(by: ReconnectPolicy.minimumDelay)
    #expect(try await reading.cancellableValue == 0)
    #expect(states.names == ["reconnecting", "closed"])
    #expect(await stub.requests.count == 1)
  }
}
