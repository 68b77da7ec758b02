import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// StubTransport's metrics: measured on its clock (a delay is the server's time), sizes as sent,
/// and whatever a route sets; LoggingMiddleware's metrics line at debug level.
@Suite(.timeLimit(.minutes(3))) struct StubMetricsTests {
  static let base = url("https://api.example.com/v1/")

  @Test func aDelayShowsUpAsTheTimeToTheFirstByte() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.post, "/v1/dogs", StubResponse.json(["id": 7]).delayed(by: .seconds(3)))
    let client = APIClient(
      baseURL: Self.base, transport: stub, configuration: APIClient.Configuration(clock: clock))
    let call = Task {
      try await client.response(
        for: Endpoint<Data>(method: .post, path: "dogs", body: .json(["name": "Rex"]))
      )
      .response
    }
    try #require(await clock.waitForSleepers(1))
    await clock.advance(by: .seconds(3))
    let metrics = try #require(try await call.cancellableValue.metrics)
    #expect(metrics.requestStart == .zero)
    #expect(metrics.responseStart == .seconds(3))
    #expect(metrics.responseEnd == .seconds(3))
    #expect(metrics.requestBodyBytes == Data(#"{"name":"Rex"}"#.utf8).count)
    #expect(metrics.responseBodyBytes == Data(#"{"id":7}"#.utf8).count)
    // A stub knows nothing of connections, and invents nothing.
    #expect(metrics.domainLookupEnd == nil && metrics.connectEnd == nil)
    #expect(metrics.reusedConnection == nil && metrics.protocolName == nil)
    #expect(metrics.summary == "ttfb 3000 ms · body 0 ms · 8 B")
  }

  /// A streamed answer's head has no end yet; read to its end, the stream has the whole answer's
  /// metrics, the end on the stub's clock (after its delay and the chunks' intervals).
  @Test func aStreamedAnswerHasItsEndOnTheStubsClock() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    let chunks = [Data("one".utf8), Data("two".utf8), Data("three".utf8)]
    await stub.on(.get, "/v1/feed", StubResponse.chunks(chunks, interval: .seconds(1)))
    let client = APIClient(
      baseURL: Self.base, transport: stub, configuration: APIClient.Configuration(clock: clock))
    let stream = try await client.stream(Endpoint<Data>(path: "feed", decoding: .data))
    #expect(stream.response.metrics?.responseStart == .zero)
    #expect(stream.response.metrics?.responseEnd == nil)
    let reading = Task { try await stream.collect() }
    for _ in 1..<chunks.count {
      try #require(await clock.waitForSleeper(dueIn: .seconds(1)))
      await clock.advance(by: .seconds(1))
    }
    #expect(try await reading.cancellableValue == Data("onetwothree".utf8))
    let whole = try #require(stream.metrics)
    #expect(whole.responseStart == .zero)
    #expect(whole.responseEnd == .seconds(2))
    #expect(whole.responseBodyBytes == 11)
  }

  /// What a route sets replaces what the stub measured, on every answer of a sequence.
  @Test func aRouteSetsTheMetricsATestNeeds() async throws {
    var slowLookup = TransferMetrics()
    slowLookup.domainLookupStart = .zero
    slowLookup.domainLookupEnd = .seconds(2)
    slowLookup.protocolName = "h2"
    slowLookup.reusedConnection = false
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/dogs",
      StubResponse.sequence([.status(503), .json(["Rex"])]).withMetrics(slowLookup))
    let client = APIClient(baseURL: Self.base, transport: stub)
    for status in [503, 200] {
      let response = try await client.response(
        for: Endpoint<Data>(path: "dogs").accepting(200..<600)
      ).response
      #expect(response.status == status)
      let metrics = try #require(response.metrics)
      #expect(metrics.domainLookupEnd == .seconds(2))
      #expect(metrics.summary.hasPrefix("dns 2000 ms · "))
      #expect(metrics.summary.hasSuffix(" · h2 · new connection"))
    }
  }

  @Test(arguments: [LogEvent.Level.info, .debug])
  func loggingAddsTheMetricsLineAtDebugLevel(_ level: LogEvent.Level) async throws {
    var given = TransferMetrics.tlsConnection(reused: true)
    given.responseStart = .milliseconds(52)
    given.responseEnd = .milliseconds(55)
    given.responseBodyBytes = 12_400
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs", StubResponse.json(["Rex"]).withMetrics(given))
    let events = Locked<[LogEvent]>([])
    let client = APIClient(
      baseURL: Self.base, transport: stub,
      configuration: APIClient.Configuration(middleware: [
        LoggingMiddleware(level: level) { event in events.withLock { $0.append(event) } }
      ]))
    _ = try await client.send(
      Endpoint<Data>(path: "dogs", query: [URLQueryItem(name: "api_key", value: "s3cret")]))
    let logged = events.withLock { $0 }
    switch level {
    case .debug:
      #expect(logged.map(\.kind) == [.requestSent, .responseReceived, .metrics])
      #expect(logged.last?.level == .debug)
      #expect(
        logged.last?.message
          == "⏱ GET https://api.example.com/v1/dogs?api_key=<redacted>: dns 1 ms · connect 2 ms"
          + " · tls 9 ms · ttfb 40 ms · body 3 ms · 12.4 KB · h2 · reused")
    default:
      #expect(logged.map(\.kind) == [.requestSent, .responseReceived])
    }
  }

  /// An unacceptable answer's error carries its response, metrics included.
  @Test func anUnacceptableAnswerKeepsItsMetrics() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.get, "/v1/dogs", StubResponse.status(503).delayed(by: .seconds(5)))
    let client = APIClient(
      baseURL: Self.base, transport: stub, configuration: APIClient.Configuration(clock: clock))
    let call = Task { try await client.send(Endpoint<Data>(path: "dogs")) }
    try #require(await clock.waitForSleepers(2))
    await clock.advance(by: .seconds(5))
    let error = await #expect(throws: APIError.self) { try await call.value }
    #expect(error?.kind == .unacceptableStatus)
    #expect(error?.response?.metrics?.responseStart == .seconds(5))
  }

  /// A stub created with `followsRedirects` answers the `Location` as Errand's transports do:
  /// the credentials stay behind at another origin, and the hop is in the metrics.
  @Test func aStubThatFollowsRedirectsDoesSoByErrandsRules() async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      .get, "/v1/dogs",
      .status(302, headers: ["Location": "https://cdn.example.net/dogs.json"]))
    await stub.on(.get, "/dogs.json", .json(["Rex"]))
    let client = APIClient(baseURL: Self.base, transport: stub)
    let endpoint = Endpoint<[String]>(
      path: "dogs", headers: ["Authorization": "Bearer s3cret"])
    let response = try await client.response(for: endpoint)
    #expect(response.value == ["Rex"])
    let sent = await stub.requests
    #expect(
      sent.map(\.url.absoluteString) == [
        "https://api.example.com/v1/dogs", "https://cdn.example.net/dogs.json",
      ])
    #expect(sent.map { $0.headers["Authorization"] } == ["Bearer s3cret", nil])
    #expect(response.response.metrics?.redirectCount == 1)
  }

  /// The summary leaves out what is unknown and names redirects.
  @Test func theSummaryLeavesOutWhatIsUnknown() {
    var metrics = TransferMetrics()
    #expect(metrics.summary == "no metrics")
    metrics.responseStart = .milliseconds(250)
    metrics.responseBodyBytes = 2_500_000
    metrics.redirects = [TransferMetrics(), TransferMetrics()]
    #expect(metrics.summary == "ttfb 250 ms · 2.5 MB · 2 redirects")
  }
}
