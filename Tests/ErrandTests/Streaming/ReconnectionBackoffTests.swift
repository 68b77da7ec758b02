import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// How long a reconnecting event stream waits, whatever the server says: never less than
/// ``ReconnectPolicy/minimumDelay``, never more than the policy's maximum, longer and longer
/// while connections end at once, and the give-up told once.
@Suite(.timeLimit(.minutes(3))) struct ReconnectionBackoffTests {
  static let feed = Endpoint<Data>(path: "feed", decoding: .data)
  static let floor = Duration.milliseconds(500)

  /// A client on `clock` over `stub`, whose timeout (an hour) is no wait a test looks for: a
  /// sleeper due in it is never taken for a reconnection's.
  static func client(_ stub: StubTransport, clock: TestClock) -> APIClient {
    APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(timeout: .seconds(3600), clock: clock))
  }

  /// A stream whose one connection sends `text` and ends.
  static func stream(_ text: String) -> StubResponse {
    .chunks([Data(text.utf8)], headers: ["Content-Type": "text/event-stream"])
  }

  /// `retry: 0` asks for no wait: the stream waits the floor, and does not reconnect before it.
  @Test func aZeroRetryWaitsTheFloor() async throws {
    let clock = TestClock()
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/feed", .sequence([Self.stream("retry: 0\ndata: a\n\n"), .status(204)]))
    let states = Locked<[String]>([])
    let events = Self.client(stub, clock: clock).events(Self.feed, reconnect: .default) {
      state in states.withLock { $0.append("\(state)") }
    }
    let reading = Task { try await events.reduce(into: []) { $0.append($1.data) } }
    try #require(await clock.waitForSleeper(dueIn: Self.floor))
    #expect(await stub.requests(matching: .any).count == 1)
    await clock.advance(by: Self.floor - .milliseconds(1))
    try #require(await clock.waitForSleeper(dueIn: .milliseconds(1)))
    #expect(await stub.requests(matching: .any).count == 1)
    await clock.advance(by: .milliseconds(1))
    #expect(try await reading.cancellableValue == ["a"])
    #expect(await stub.requests(matching: .any).count == 2)
    #expect(
      states.withLock { $0 } == [
        "connected(attempt: 1)", "reconnecting(after: 0.5 seconds, attempt: 2)", "closed",
      ])
  }

  /// A server that answers each connection with one event and closes: each wait doubles, from
  /// the floor up to the policy's maximum, and stays there.
  @Test func connectionsThatEndAtOnceBackOff() async throws {
    let clock = TestClock()
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/feed",
      .handler { _, call in
        call <= 10 ? Self.stream("retry: 0\nid: \(call)\ndata: \(call)\n\n") : .status(204)
      })
    let events = Self.client(stub, clock: clock).events(
      Self.feed, reconnect: ReconnectPolicy(jitter: false))
    let reading = Task { try await events.reduce(into: []) { $0.append($1.data) } }
    let waits: [Duration] = [
      .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16),
      .seconds(32), .seconds(60), .seconds(60), .seconds(60),
    ]
    for (index, wait) in waits.enumerated() {
      try #require(await clock.waitForSleeper(dueIn: wait))
      #expect(await stub.requests(matching: .any).count == index + 1)
      await clock.advance(by: wait)
    }
    #expect(try await reading.cancellableValue == (1...10).map { "\($0)" })
    #expect(await stub.requests(matching: .any).count == 11)
  }

  /// A connection that stays open for the policy's ``ReconnectPolicy/backoffResetTime`` starts
  /// the backoff over: the next wait is the reconnection time again.
  @Test func aConnectionThatLastsStartsTheBackoffOver() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(
      .get, "/v1/feed",
      .sequence([
        .events([ServerSentEvent(data: "a", id: "1")]),
        .events([ServerSentEvent(data: "b", id: "2")]),
        .events(
          [ServerSentEvent(data: "c", id: "3"), ServerSentEvent(data: "d", id: "4")],
          interval: .seconds(60)),
        .status(204),
      ]))
    let events = Self.client(stub, clock: clock).events(
      Self.feed, reconnect: ReconnectPolicy(jitter: false))
    let (heard, hearing) = AsyncStream.makeStream(of: String.self)
    let reading = Task { () async throws -> [String] in
      defer { hearing.finish() }
      var received: [String] = []
      for try await event in events {
        received.append(event.data)
        hearing.yield(event.data)
      }
      return received
    }
    var read = heard.makeAsyncIterator()
    for wait in [Duration.seconds(3), .seconds(6), .seconds(60), .seconds(3)] {
      if wait == .seconds(60) {
        // The third connection lasts from its head: advance only once its first event is read,
        // or a slow machine starts the 60 s before the stream has seen the head.
        while let data = await read.next(), data != "c" {}
      }
      try #require(await clock.waitForSleeper(dueIn: wait))
      await clock.advance(by: wait)
    }
    #expect(try await reading.cancellableValue == ["a", "b", "c", "d"])
  }

  /// What a `retry` field may hold: only ASCII digits set the reconnection time (anything else
  /// is ignored, and the policy's 3 seconds stay); a time under the floor waits the floor; one
  /// over the policy's maximum (a minute) waits the maximum, however many digits it has.
  @Test(arguments: [
    ("retry: -1", Duration.seconds(3)), ("retry: 1e3", .seconds(3)), ("retry: +500", .seconds(3)),
    ("retry: 0x10", .seconds(3)), ("retry: ５００", .seconds(3)), ("retry: 500 ", .seconds(3)),
    ("retry:", .seconds(3)), ("retry: 1.5", .seconds(3)), ("retry: 0", .milliseconds(500)),
    ("retry: 1", .milliseconds(500)), ("retry: 499", .milliseconds(500)),
    ("retry: 1500", .milliseconds(1500)), ("retry: 86400000", .seconds(60)),
    ("retry: 1" + String(repeating: "0", count: 30), .seconds(60)),
    ("retry: " + String(repeating: "9", count: 400), .seconds(60)),
  ])
  func retryValuesAtTheEdges(field: String, wait: Duration) async throws {
    let clock = TestClock()
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/feed", .sequence([Self.stream("\(field)\ndata: a\n\n"), .status(204)]))
    let states = Locked<[String]>([])
    let events = Self.client(stub, clock: clock).events(Self.feed, reconnect: .default) {
      state in states.withLock { $0.append("\(state)") }
    }
    let reading = Task { try await events.reduce(into: []) { $0.append($1.data) } }
    try #require(await clock.waitForSleeper(dueIn: wait))
    await clock.advance(by: wait)
    #expect(try await reading.cancellableValue == ["a"])
    #expect(states.withLock { $0 }[1] == "reconnecting(after: \(wait), attempt: 2)")
  }

  /// Ways a connection fails: refused, answered with a stream that ends at once, or dropped
  /// before its first event.
  static let failures: [(String, StubResponse)] = [
    ("refused", .connectionRefused),
    ("an empty stream", .events([])),
    (
      "dropped before an event",
      .chunks(
        [Data(": hello\n\n".utf8)], headers: ["Content-Type": "text/event-stream"],
        failingWith: URLError(.networkConnectionLost))
    ),
  ]

  /// A server that always fails and a policy of `limit` attempts: the first connection and
  /// `limit` reconnections, then one ``ReconnectionError`` (not one inside another) that says
  /// `limit`, and one `.failed` state.
  @Test(arguments: failures.map(\.0), [1, 3])
  func givingUpIsToldOnce(failure: String, limit: Int) async throws {
    let answer = try #require(Self.failures.first { $0.0 == failure }?.1)
    let clock = TestClock()
    let stub = StubTransport()
    await stub.on(.get, "/v1/feed", answer)
    let states = Locked<[ConnectionState]>([])
    let events = Self.client(stub, clock: clock).events(
      Self.feed, reconnect: ReconnectPolicy(maximumAttempts: limit, jitter: false)
    ) { state in states.withLock { $0.append(state) } }
    let reading = Task { for try await _ in events {} }
    for doublings in 0..<limit {
      let wait = Duration.seconds(3) * (1 << doublings)
      try #require(await clock.waitForSleeper(dueIn: wait))
      await clock.advance(by: wait)
    }
    let error = try await #require(throws: APIError.self) { try await reading.cancellableValue }
    let gaveUp = try #require(error.underlyingError as? ReconnectionError)
    #expect(!(gaveUp.lastError.underlyingError is ReconnectionError))
    #expect(gaveUp.attempts == limit)
    #expect(
      error.localizedDescription.contains(
        "gave up reconnecting the event stream after \(limit) failed attempt"
          + (limit == 1 ? " in a row" : "s in a row")),
      "\(error.localizedDescription)")
    #expect(await stub.requests(matching: .any).count == limit + 1)
    let failed = states.withLock { $0 }.filter {
      if case .failed = $0 { true } else { false }
    }
    #expect(failed.count == 1)
  }
}
