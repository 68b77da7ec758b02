import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// `events(_:reconnect:)`: the EventSource half of Server-Sent Events, on a `TestClock`, so a
/// 3-second reconnection wait takes no wall time.
@Suite(.timeLimit(.minutes(3))) struct ReconnectionTests {
  static let feed = Endpoint<Data>(path: "feed", decoding: .data)
  static let dropped = URLError(.networkConnectionLost)

  /// A client on `clock` over `stub`, and a log of the states it reports.
  static func client(_ stub: any Transport, clock: TestClock) -> APIClient {
    APIClient(
      baseURL: base, transport: stub, configuration: APIClient.Configuration(clock: clock))
  }

  /// Read every event of `events` in a task, advancing `clock` past each reconnection wait the
  /// states announce, and return the events.
  static func read(
    _ events: ReconnectingServerSentEvents, clock: TestClock, waits: [Duration]
  ) async throws -> [ServerSentEvent] {
    let reading = Task {
      var received: [ServerSentEvent] = []
      for try await event in events { received.append(event) }
      return received
    }
    for wait in waits {
      try #require(await clock.waitForSleeper(dueIn: wait))
      await clock.advance(by: wait)
    }
    return try await reading.cancellableValue
  }

  @Test func aDroppedStreamReconnectsWithTheLastEventIDAndGoesOn() async throws {
    let clock = TestClock()
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/feed",
      .sequence([
        .events(
          [ServerSentEvent(data: "a", id: "1"), ServerSentEvent(data: "b", id: "2")],
          failingWith: Self.dropped),
        .events([ServerSentEvent(data: "c", id: "3", retry: .milliseconds(500))]),
        .status(204),
      ]))
    let states = Locked<[String]>([])
    let events = Self.client(stub, clock: clock).events(
      Self.feed, reconnect: ReconnectPolicy(jitter: false)
    ) { state in states.withLock { $0.append("\(state)") } }
    // The second connection ended at once too: its wait is the new reconnection time, doubled.
    let received = try await Self.read(events, clock: clock, waits: [.seconds(3), .seconds(1)])
    #expect(received.map(\.data) == ["a", "b", "c"])
    let sent = await stub.requests(matching: .any)
    #expect(sent.map { $0.headers["Last-Event-ID"] } == [nil, "2", "3"])
    #expect(sent.allSatisfy { $0.headers["Accept"] == "text/event-stream" })
    #expect(
      states.withLock { $0 } == [
        "connected(attempt: 1)", "reconnecting(after: 3.0 seconds, attempt: 2)",
        "connected(attempt: 2)", "reconnecting(after: 1.0 seconds, attempt: 3)", "closed",
      ])
  }

  @Test(arguments: [
    (StubResponse.status(503, body: Data("busy".utf8)), APIError.Kind.unacceptableStatus),
    (
      .status(200, body: Data("data: x\n\n".utf8), headers: ["Content-Type": "text/plain"]),
      .decoding
    ),
  ])
  func aStatusOrATypeThatIsNotAStreamFailsWithoutReconnecting(
    answer: StubResponse, kind: APIError.Kind
  ) async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/feed", answer)
    let events = Self.client(stub, clock: TestClock()).events(Self.feed, reconnect: .default)
    let error = await #expect(throws: APIError.self) { for try await _ in events {} }
    #expect(error?.kind == kind)
    if kind == .decoding {
      #expect(error?.underlyingError is NotAnEventStream)
    }
    #expect(await stub.requests(matching: .any).count == 1)
  }

  @Test(arguments: [false, true])
  func aBodyIsSentAgainOnlyWhenAllowed(resendsBody: Bool) async throws {
    let clock = TestClock()
    let stub = StubTransport()
    await stub.on(
      .post, "/v1/chat",
      .sequence([
        .events([ServerSentEvent(data: "Hel", id: "1")], failingWith: Self.dropped),
        .events([ServerSentEvent(data: "lo", id: "2")]), .status(204),
      ]))
    let prompt = Endpoint<Data>(
      method: .post, path: "chat", body: .data(Data(#"{"q":"hi"}"#.utf8)), decoding: .data)
    let events = Self.client(stub, clock: clock).events(
      prompt, reconnect: ReconnectPolicy(resendsBody: resendsBody, jitter: false))
    if resendsBody {
      // A wait after the drop, and one (doubled: it too ended at once) after the second
      // connection ends before the 204.
      let received = try await Self.read(events, clock: clock, waits: [.seconds(3), .seconds(6)])
      #expect(received.map(\.data) == ["Hel", "lo"])
      let sent = await stub.requests(matching: .any)
      #expect(sent.count == 3)
      #expect(sent.allSatisfy { $0.body == Data(#"{"q":"hi"}"#.utf8) })
    } else {
      var received: [String] = []
      let error = await #expect(throws: APIError.self) {
        for try await event in events { received.append(event.data) }
      }
      #expect(received == ["Hel"])
      #expect(error?.urlError?.code == .networkConnectionLost)
      #expect(await stub.requests(matching: .any).count == 1)
    }
  }

  @Test func itGivesUpAfterTheBudgetBackingOffOnTheWay() async throws {
    let clock = TestClock()
    let stub = StubTransport()
    await stub.on(.get, "/v1/feed", .error(URLError(.cannotConnectToHost)))
    let events = Self.client(stub, clock: clock).events(
      Self.feed, reconnect: ReconnectPolicy(maximumAttempts: 2, jitter: false))
    let reading = Task { for try await _ in events {} }
    for wait in [Duration.seconds(3), .seconds(6)] {
      try #require(await clock.waitForSleeper(dueIn: wait))
      await clock.advance(by: wait)
    }
    let error = await #expect(throws: APIError.self) { try await reading.cancellableValue }
    let gaveUp = try #require(error?.underlyingError as? ReconnectionError)
    // The first connection and two reconnections: two reconnections failed.
    #expect(gaveUp.attempts == 2)
    #expect(gaveUp.lastError.urlError?.code == .cannotConnectToHost)
    #expect(
      error?.localizedDescription.contains("gave up reconnecting the event stream after 2") == true)
    #expect(await stub.requests(matching: .any).count == 3)
  }

  @Test func cancellingEndsItAtOnceWhileItWaits() async throws {
    let clock = TestClock()
    let stub = StubTransport()
    await stub.on(.get, "/v1/feed", .events([ServerSentEvent(data: "a")]))
    let events = Self.client(stub, clock: clock).events(Self.feed, reconnect: .default)
    let reading = Task { for try await _ in events {} }
    try #require(await clock.waitForSleeper(dueIn: .seconds(3)))
    reading.cancel()
    let error = await #expect(throws: APIError.self) { try await reading.value }
    #expect(error?.kind == .cancelled)
    #expect(await stub.requests(matching: .any).count == 1)
  }

  /// Each reconnection goes through the middleware: a token that expired while the stream was
  /// down is refreshed, and the stream goes on.
  @Test func aReconnectionRefreshesAnExpiredToken() async throws {
    let clock = TestClock()
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/feed",
      .handler { request, call in
        switch (call, request.headers["Authorization"]) {
        case (1, _):
          return .events([ServerSentEvent(data: "a", id: "1")], failingWith: Self.dropped)
        case (_, "Bearer new"):
          return call == 3 ? .events([ServerSentEvent(data: "b", id: "2")]) : .status(204)
        default:
          return .status(401)
        }
      })
    let tokens = Tokens(current: "old")
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        middleware: [BearerAuthenticationMiddleware(provider: tokens)], clock: clock))
    let feed = Endpoint<Data>(path: "feed", requiresAuthentication: true, decoding: .data)
    let events = client.events(feed, reconnect: ReconnectPolicy(jitter: false))
    // The second connection ends at once too, so the wait before the third doubles.
    let received = try await Self.read(events, clock: clock, waits: [.seconds(3), .seconds(6)])
    #expect(received.map(\.data) == ["a", "b"])
    #expect(await tokens.refreshes == 1)
    let sent = await stub.requests(matching: .any)
    #expect(
      sent.map { $0.headers["Authorization"] } == [
        "Bearer old", "Bearer old", "Bearer new", "Bearer new",
      ])
    #expect(sent.map { $0.headers["Last-Event-ID"] } == [nil, "1", "1", "2"])
  }

  /// A cassette records each connection as an exchange, the one that dropped with how it
  /// dropped, and replays them in order: the replay drops and reconnects as the recording did.
  @Test func aCassetteRecordsAndReplaysEveryConnection() async throws {
    let folder = try TemporaryFolder()
    let file = folder.appending("reconnecting.json")
    let upstream = StubTransport()
    await upstream.on(
      .get, "/v1/feed",
      .sequence([
        .events([ServerSentEvent(data: "a", id: "1", retry: .zero)], failingWith: Self.dropped),
        .events([ServerSentEvent(data: "b", id: "2")]), .status(204),
      ]))
    var runs: [[String]] = []
    for transport in [
      CassetteTransport(url: file, mode: .once, upstream: upstream),
      CassetteTransport(url: file, mode: .none),
    ] {
      let clock = TestClock()
      let states = Locked<[String]>([])
      let events = Self.client(transport, clock: clock).events(
        Self.feed, reconnect: ReconnectPolicy(initialDelay: .zero, jitter: false),
        onState: { state in states.withLock { $0.append("\(state)") } })
      // `retry: 0` and a zero delay wait the floor, then twice it: both connections ended at once.
      let received = try await Self.read(
        events, clock: clock, waits: [.milliseconds(500), .seconds(1)])
      runs.append(received.map(\.data) + states.withLock { $0 })
    }
    let expected = [
      "a", "b", "connected(attempt: 1)", "reconnecting(after: 0.5 seconds, attempt: 2)",
      "connected(attempt: 2)", "reconnecting(after: 1.0 seconds, attempt: 3)", "closed",
    ]
    #expect(runs == [expected, expected])
    let text = try String(contentsOf: file, encoding: .utf8)
    #expect(text.contains("\"droppedWithURLError\": -1005"), "\(text)")
  }
}
