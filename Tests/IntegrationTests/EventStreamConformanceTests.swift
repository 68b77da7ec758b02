import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

@testable import Errand

/// The reconnection rules of the WHATWG HTML standard, §9.2 (Server-sent events), each run
/// through a stub and over a socket through every transport:
/// - §9.2.3 "Processing model": a status other than 200, or a type other than
///   `text/event-stream`, fails the connection (no reconnection); requests send
///   `Accept: text/event-stream` and are not answered from a cache; a redirect is followed by
///   fetch, and one that cannot be followed is the answer, which then fails the connection.
/// - §9.2.4 "The `Last-Event-ID` header": sent with the last event ID buffer whenever it is not
///   empty.
/// - §9.2.6 "Interpreting an event stream": the last event ID buffer is the stream's, kept
///   across connections; an `id` field with no value clears it.
/// Event size, a request made anew for each connection, and a restart on demand are Errand's.
@Suite(.timeLimit(.minutes(3))) struct EventStreamConformanceTests {
  static let endpoint = Endpoint<Data>(path: "feed", decoding: .data)

  /// Read a reconnecting stream to its end: its events, or the error it ended with.
  static func read(_ events: ReconnectingServerSentEvents) async
    -> (events: [ServerSentEvent], error: APIError?)
  {
    var received: [ServerSentEvent] = []
    do {
      for try await event in events { received.append(event) }
      return (received, nil)
    } catch {
      return (received, error as? APIError)
    }
  }

  // MARK: Status and type (§9.2.3)

  /// Any status but 200 (204 ends the stream) fails the connection, at once and for good, on a
  /// 2xx too: a 205, 210 or 299 were read as streams and reconnected for ever.
  @Test(arguments: [201, 202, 205, 206, 210, 226, 299], EventStreamPath.allCases)
  func aStatusOtherThan200FailsWithoutReconnecting(status: Int, path: EventStreamPath)
    async throws
  {
    let driver = ReconnectDriver()
    let feed = try await path.feed(configuration: driver.configuration) { _, _ in
      var answer = FeedAnswer.events(status == 205 ? "" : "retry: 0\ndata: dispatched?\n\n")
      answer.status = status
      return answer
    }
    defer { feed.stop() }
    let outcome = await Self.read(
      feed.client.events(Self.endpoint, reconnect: .default, onState: driver.onState))
    #expect(outcome.events.isEmpty)
    let error = try #require(outcome.error)
    guard case .unacceptableStatus(let response) = error else {
      Issue.record("expected an unacceptable status, got \(error)")
      return
    }
    #expect(response.status == status)
    #expect(feed.requests.count == 1)
    #expect(driver.states == ["failed"])
  }

  /// Any type but `text/event-stream` (parameters and case aside) fails the connection for good.
  @Test(
    arguments: [
      nil, "text/plain", "text/event-streams", "application/json", "text/event-stream-x",
    ],
    EventStreamPath.allCases)
  func aTypeOtherThanAnEventStreamFailsWithoutReconnecting(
    type: String?, path: EventStreamPath
  ) async throws {
    let driver = ReconnectDriver()
    let feed = try await path.feed(configuration: driver.configuration) { _, _ in
      FeedAnswer(headers: type.map { [("Content-Type", $0)] } ?? [], body: Data("data: x\n\n".utf8))
    }
    defer { feed.stop() }
    let outcome = await Self.read(
      feed.client.events(Self.endpoint, reconnect: .default, onState: driver.onState))
    #expect(outcome.events.isEmpty)
    let error = try #require(outcome.error)
    let notAStream = try #require(error.underlyingError as? NotAnEventStream)
    // The stub path gives no type at all when none is set; a socket's transport may add none.
    #expect(notAStream.contentType == type)
    #expect(feed.requests.count == 1)
    #expect(driver.states == ["failed"])
  }

  /// The type's parameters and case do not matter.
  @Test(
    arguments: ["text/event-stream; charset=utf-8", "TEXT/Event-Stream", "text/event-stream ;x=1"],
    EventStreamPath.allCases)
  func anEventStreamTypeWithParametersIsRead(type: String, path: EventStreamPath) async throws {
    let driver = ReconnectDriver()
    let feed = try await path.feed(configuration: driver.configuration) { _, index in
      index == 0
        ? FeedAnswer(headers: [("Content-Type", type)], body: Data("data: x\n\n".utf8))
        : .noContent
    }
    defer { feed.stop() }
    let outcome = await Self.read(
      feed.client.events(Self.endpoint, reconnect: .default, onState: driver.onState))
    #expect(outcome.error == nil)
    #expect(outcome.events.map(\.data) == ["x"])
  }

  /// A reconnection's answer is processed as the first one was (§9.2.3, "reestablish the
  /// connection", step 5): a status other than 200, or another type, fails the stream for good.
  @Test(arguments: [500, 201, 200], EventStreamPath.allCases)
  func aReconnectionThatGetsNoStreamFailsWithoutReconnecting(status: Int, path: EventStreamPath)
    async throws
  {
    let driver = ReconnectDriver()
    let feed = try await path.feed(configuration: driver.configuration) { _, index in
      guard index > 0 else { return .events("data: a\n\n") }
      let type = status == 200 ? "application/json" : "text/event-stream"
      return FeedAnswer(status: status, headers: [("Content-Type", type)], body: Data("{}".utf8))
    }
    defer { feed.stop() }
    let outcome = await Self.read(
      feed.client.events(Self.endpoint, reconnect: .default, onState: driver.onState))
    #expect(outcome.events.map(\.data) == ["a"])
    let error = try #require(outcome.error)
    #expect(error.kind == (status == 200 ? .decoding : .unacceptableStatus))
    #expect(feed.requests.count == 2)
    #expect(driver.states == ["connected", "reconnecting", "failed"])
  }

  // MARK: Request headers (§9.2.3)

  /// Every request asks for an event stream and for no cached answer, unless the endpoint says
  /// otherwise.
  @Test(arguments: [false, true], EventStreamPath.allCases)
  func everyRequestAsksForAnUncachedEventStream(endpointSets: Bool, path: EventStreamPath)
    async throws
  {
    let driver = ReconnectDriver()
    let feed = try await path.feed(configuration: driver.configuration) { _, index in
      index < 2 ? .events("data: \(index)\n\n") : .noContent
    }
    defer { feed.stop() }
    var endpoint = Self.endpoint
    if endpointSets {
      endpoint.headers["Accept"] = "text/event-stream, application/json"
      endpoint.headers["Cache-Control"] = "max-age=0"
    }
    let outcome = await Self.read(
      feed.client.events(endpoint, reconnect: .default, onState: driver.onState))
    #expect(outcome.error == nil)
    #expect(feed.requests.count == 3)
    for request in feed.requests {
      #expect(
        request.headers["Accept"]
          == (endpointSets ? "text/event-stream, application/json" : "text/event-stream"))
      #expect(request.headers["Cache-Control"] == (endpointSets ? "max-age=0" : "no-cache"))
    }
  }

  // MARK: Last-Event-ID (§9.2.4, §9.2.6)

  /// The endpoint's own `Last-Event-ID` is the stream's starting ID: sent on the first request
  /// and on each reconnection until the server sends an `id`; the events before then carry it.
  @Test(arguments: EventStreamPath.allCases)
  func anEndpointsLastEventIDIsSentUntilTheServerSendsAnother(path: EventStreamPath)
    async throws
  {
    let driver = ReconnectDriver()
    let feed = try await path.feed(configuration: driver.configuration) { _, index in
      switch index {
      case 0: .events("data: a\n\n")
      case 1: .events("data: b\n\nid: 8\ndata: c\n\n")
      case 2: .events("data: d\n\n")
      default: .noContent
      }
    }
    defer { feed.stop() }
    var endpoint = Self.endpoint
    endpoint.headers["Last-Event-ID"] = "start-7"
    let outcome = await Self.read(
      feed.client.events(endpoint, reconnect: .default, onState: driver.onState))
    #expect(outcome.error == nil)
    #expect(feed.requests.map { $0.headers["Last-Event-ID"] } == ["start-7", "start-7", "8", "8"])
    #expect(outcome.events.map(\.data) == ["a", "b", "c", "d"])
    #expect(outcome.events.map(\.id) == ["start-7", "start-7", "8", "8"])
  }

  /// The last event ID outlives a connection that sends no `id`, and an empty `id` clears it:
  /// then no `Last-Event-ID` is sent.
  @Test(arguments: EventStreamPath.allCases)
  func theLastEventIDIsTheStreamsAcrossConnections(path: EventStreamPath) async throws {
    let driver = ReconnectDriver()
    let feed = try await path.feed(configuration: driver.configuration) { _, index in
      switch index {
      case 0: .events("id: 1\ndata: a\n\n")
      case 1: .events("data: b\n\n")
      case 2: .events("data: c\n\nid\ndata: d\n\n")
      case 3: .events("data: e\n\n")
      default: .noContent
      }
    }
    defer { feed.stop() }
    let outcome = await Self.read(
      feed.client.events(Self.endpoint, reconnect: .default, onState: driver.onState))
    #expect(outcome.error == nil)
    #expect(feed.requests.map { $0.headers["Last-Event-ID"] } == [nil, "1", "1", nil, nil])
    #expect(outcome.events.map(\.id) == ["1", "1", "1", nil, nil])
  }

  // MARK: Redirects (§9.2.3, through fetch)

  /// A redirect without a `Location` to follow is the answer, and its status fails the
  /// connection, with no reconnection, on every path.
  @Test(arguments: [301, 302, 303, 307, 308], EventStreamPath.allCases)
  func aRedirectWithAnEmptyLocationFailsTheConnection(status: Int, path: EventStreamPath)
    async throws
  {
    let driver = ReconnectDriver()
    let feed = try await path.feed(configuration: driver.configuration) { _, _ in
      FeedAnswer(status: status, headers: [("Location", "")])
    }
    defer { feed.stop() }
    let outcome = await Self.read(
      feed.client.events(Self.endpoint, reconnect: .default, onState: driver.onState))
    let error = try #require(outcome.error)
    guard case .unacceptableStatus(let response) = error else {
      Issue.record("expected the redirect's own status, got \(error)")
      return
    }
    #expect(response.status == status)
    #expect(feed.requests.count == 1)
    #expect(driver.states == ["failed"])
    #expect(driver.announcedWaits.isEmpty)
  }

  /// A followed redirect's stream is read; each reconnection starts again from the endpoint's
  /// URL, with the last event ID.
  @Test(arguments: EventStreamPath.allCases)
  func aFollowedRedirectIsReadAndReconnectionStartsOver(path: EventStreamPath) async throws {
    let driver = ReconnectDriver()
    let feed = try await path.feed(configuration: driver.configuration) { request, index in
      switch (request.path, index) {
      case ("/feed", 0): FeedAnswer(status: 307, headers: [("Location", "/moved")])
      case ("/moved", _): .events("id: 1\ndata: a\n\n")
      default: .noContent
      }
    }
    defer { feed.stop() }
    let outcome = await Self.read(
      feed.client.events(Self.endpoint, reconnect: .default, onState: driver.onState))
    #expect(outcome.error == nil)
    #expect(outcome.events.map(\.data) == ["a"])
    #expect(feed.requests.map(\.path) == ["/feed", "/moved", "/feed"])
    #expect(feed.requests.map { $0.headers["Last-Event-ID"] } == [nil, nil, "1"])
  }

  // MARK: retry (§9.2.6)

  /// The server's `retry` is the wait before the next connection, on every path.
  @Test(arguments: EventStreamPath.allCases)
  func theServersRetryIsTheWait(path: EventStreamPath) async throws {
    let driver = ReconnectDriver()
    let feed = try await path.feed(configuration: driver.configuration) { _, index in
      index == 0 ? .events("retry: 4500\ndata: a\n\n") : .noContent
    }
    defer { feed.stop() }
    let outcome = await Self.read(
      feed.client.events(Self.endpoint, reconnect: .default, onState: driver.onState))
    #expect(outcome.error == nil)
    #expect(driver.announcedWaits == [.milliseconds(4500)])
    #expect(driver.states == ["connected", "reconnecting", "closed"])
  }

  // MARK: Event size

  /// A 10 MiB event (a feature-flag service's whole flag set) is read under the defaults.
  @Test(arguments: EventStreamPath.allCases)
  func aTenMebibyteEventIsReadUnderTheDefaults(path: EventStreamPath) async throws {
    let data = String(repeating: "f", count: 10 * 1024 * 1024)
    let driver = ReconnectDriver()
    let feed = try await path.feed(configuration: driver.configuration) { _, index in
      index == 0 ? .events("event: put\ndata: \(data)\n\n") : .noContent
    }
    defer { feed.stop() }
    let outcome = await Self.read(
      feed.client.events(Self.endpoint, reconnect: .default, onState: driver.onState))
    #expect(outcome.error == nil)
    #expect(outcome.events.count == 1)
    #expect(outcome.events.first?.event == "put")
    #expect(outcome.events.first?.data == data)
  }

  /// An event past ``APIClient/Configuration/maximumEventSize`` ends the stream with
  /// `LineTooLongError`, which names the setting, and no reconnection.
  @Test(arguments: EventStreamPath.allCases)
  func anEventPastTheLimitEndsTheStream(path: EventStreamPath) async throws {
    let driver = ReconnectDriver()
    var configuration = driver.configuration
    configuration.maximumEventSize = 4096
    let feed = try await path.feed(configuration: configuration) { _, _ in
      .events("data: " + String(repeating: "x", count: 5000) + "\n\n")
    }
    defer { feed.stop() }
    let outcome = await Self.read(
      feed.client.events(Self.endpoint, reconnect: .default, onState: driver.onState))
    let error = try #require(outcome.error)
    #expect(
      error.underlyingError as? LineTooLongError == LineTooLongError(unit: .event, limit: 4096))
    #expect(error.localizedDescription.contains("APIClient.Configuration.maximumEventSize"))
    #expect(feed.requests.count == 1)
  }

  // MARK: The request made anew, and a restart on demand

  /// With a request made for each connection, a service's cursor can go in the query; the
  /// closure sees each connection's number and the stream's last event ID.
  @Test(arguments: EventStreamPath.allCases)
  func eachConnectionCanMakeItsOwnRequest(path: EventStreamPath) async throws {
    let driver = ReconnectDriver()
    let feed = try await path.feed(configuration: driver.configuration) { request, _ in
      let since = Int(request.query?.split(separator: "=").last ?? "") ?? 0
      return since < 3 ? .events("id: \(since + 1)\ndata: \(since + 1)\n\n") : .noContent
    }
    defer { feed.stop() }
    let attempts = Locked<[ReconnectAttempt]>([])
    let events = feed.client.events(reconnect: .default, onState: driver.onState) { attempt in
      attempts.withLock { $0.append(attempt) }
      return Endpoint<Data>(
        path: "feed", query: [URLQueryItem(name: "since", value: attempt.lastEventID ?? "0")],
        decoding: .data)
    }
    let outcome = await Self.read(events)
    #expect(outcome.error == nil)
    #expect(outcome.events.map(\.data) == ["1", "2", "3"])
    #expect(feed.requests.map(\.query) == ["since=0", "since=1", "since=2", "since=3"])
    #expect(
      attempts.withLock { $0 }
        == [
          ReconnectAttempt(connection: 1, lastEventID: nil),
          ReconnectAttempt(connection: 2, lastEventID: "1"),
          ReconnectAttempt(connection: 3, lastEventID: "2"),
          ReconnectAttempt(connection: 4, lastEventID: "3"),
        ])
  }

  /// What the endpoint closure throws ends the stream with it, without reconnecting.
  @Test func whatTheEndpointClosureThrowsEndsTheStream() async throws {
    struct NoToken: Error {}
    let driver = ReconnectDriver()
    let feed = try await EventStreamPath.stub.feed(configuration: driver.configuration) { _, _ in
      .events("data: a\n\n")
    }
    let events = feed.client.events(reconnect: .default, onState: driver.onState) { attempt in
      guard attempt.connection == 1 else { throw NoToken() }
      return Self.endpoint
    }
    let outcome = await Self.read(events)
    #expect(outcome.events.map(\.data) == ["a"])
    #expect(outcome.error?.underlyingError is NoToken)
    #expect(feed.requests.count == 1)
    #expect(driver.states == ["connected", "reconnecting", "failed"])
  }

  /// `restart()` ends a connection that is still open and opens the next at once, with a
  /// request made anew and the last event ID, without a wait and without counting a failure.
  @Test(arguments: EventStreamPath.allCases)
  func restartReconnectsAtOnce(path: EventStreamPath) async throws {
    let driver = ReconnectDriver()
    let feed = try await path.feed(configuration: driver.configuration) { _, index in
      index == 0 ? .events("id: 1\ndata: first\n\n", stalls: true) : .noContent
    }
    defer { feed.stop() }
    let cursor = Locked("old")
    let events = feed.client.events(reconnect: .default, onState: driver.onState) { _ in
      Endpoint<Data>(
        path: "feed", query: [URLQueryItem(name: "cursor", value: cursor.withLock { $0 })],
        decoding: .data)
    }
    var iterator = events.makeAsyncIterator()
    let first = try await iterator.next()
    #expect(first?.data == "first")
    cursor.withLock { $0 = "new" }
    events.restart()
    let next = try await iterator.next()
    #expect(next == nil)
    #expect(feed.requests.map(\.query) == ["cursor=old", "cursor=new"])
    #expect(feed.requests.map { $0.headers["Last-Event-ID"] } == [nil, "1"])
    #expect(driver.announcedWaits.isEmpty)
    #expect(driver.states == ["connected", "closed"])
  }

  /// `restart()` during a wait to reconnect ends the wait.
  @Test func restartEndsAWaitToReconnect() async throws {
    let clock = TestClock()
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/feed",
      .sequence([.events([ServerSentEvent(data: "a")]), .status(204)]))
    let client = APIClient(
      baseURL: URL(string: "https://api.example.com/v1")!, transport: stub,
      configuration: APIClient.Configuration(timeout: nil, clock: clock))
    let (waits, announce) = AsyncStream.makeStream(of: Duration.self)
    let events = client.events(Self.endpoint, reconnect: .default) { state in
      if case .reconnecting(let wait, _) = state { announce.yield(wait) }
    }
    let reading = Task { try await events.reduce(into: [String]()) { $0.append($1.data) } }
    var announced = waits.makeAsyncIterator()
    let wait = try #require(await announced.next())
    #expect(await clock.waitForSleeper(dueIn: wait))
    events.restart()
    #expect(try await reading.value == ["a"])
    #expect(await stub.requests.count == 2)
  }

  /// The limit on one event is the collected-body limit unless set.
  @Test func theEventLimitFollowsTheResponseLimit() {
    var configuration = APIClient.Configuration()
    #expect(configuration.eventSizeLimit == 100_000_000)
    configuration.maximumResponseSize = 20_000_000
    #expect(configuration.eventSizeLimit == 20_000_000)
    configuration.maximumEventSize = 1000
    #expect(configuration.eventSizeLimit == 1000)
  }
}
