import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct LoggingTests {
  static let secrets = [
    "s3cret-token", "s3cret-cookie", "s3cret-key", "s3cret-query", "s3cret-password",
    "s3cret-proxy",
  ]

  /// A request that carries every secret in every place.
  static let leaky = Endpoint<Void>(
    method: .post, path: "login",
    query: [
      URLQueryItem(name: "api_key", value: "s3cret-query"), URLQueryItem(name: "page", value: "2"),
    ],
    headers: [
      "Authorization": "Bearer s3cret-token", "Cookie": "session=s3cret-cookie",
      "X-Api-Key": "s3cret-key",
      "Proxy-Authorization": "Basic s3cret-proxy",
    ],
    body: .json(["user": "ann", "password": "s3cret-password"]))

  @Test func eventsCarryNoSecrets() async throws {
    let events = Locked<[LogEvent]>([])
    let stub = StubTransport { _ in .status(200, headers: ["Set-Cookie": "id=s3cret-cookie"]) }
    let client = APIClient(
      baseURL: url("https://api.example.com"), transport: stub,
      configuration: APIClient.Configuration(middleware: [
        LoggingMiddleware { event in events.withLock { $0.append(event) } }
      ]))
    try await client.send(Self.leaky)
    let logged = events.withLock { $0 }
    #expect(logged.map(\.kind) == [.requestSent, .responseReceived])
    let text = logged.map { "\($0.message) \($0.url) \($0.headers.description) \($0.error ?? "")" }
      .joined(separator: "\n")
    for secret in Self.secrets {
      #expect(!text.contains(secret), "\(secret) leaked into: \(text)")
    }
    #expect(
      logged.first?.message
        == "→ POST https://api.example.com/login?api_key=<redacted>&page=2 (43 bytes)")
    #expect(logged.last?.status == 200)
    #expect(logged.last?.headers["Set-Cookie"] == "<redacted>")
    #expect(
      logged.last?.message.hasPrefix(
        "← 200 POST https://api.example.com/login?api_key=<redacted>&page=2 (0 bytes, ") == true)
  }

  @Test func failuresAreLoggedWithoutSecrets() async throws {
    let events = Locked<[LogEvent]>([])
    let client = APIClient(
      baseURL: url("https://api.example.com"), transport: StubTransport { _ in .connectionLost },
      configuration: APIClient.Configuration(middleware: [
        LoggingMiddleware { event in events.withLock { $0.append(event) } }
      ]))
    await #expect(throws: APIError.self) { try await client.send(Self.leaky) }
    let failure = try #require(events.withLock { $0 }.last)
    #expect(failure.kind == .failed)
    let error = try #require(failure.error)
    #expect(error.contains("the connection was lost before the response was complete"))
    for secret in Self.secrets {
      #expect(!failure.message.contains(secret))
    }
  }

  @Test func failuresHideCustomQuerySecrets() async throws {
    var redaction = Redaction.default
    redaction.queryParameters.insert("pin")
    let events = Locked<[LogEvent]>([])
    let client = APIClient(
      baseURL: url("https://api.example.com"), transport: StubTransport { _ in .connectionLost },
      configuration: APIClient.Configuration(middleware: [
        LoggingMiddleware(redaction: redaction) { event in events.withLock { $0.append(event) } }
      ]))
    await #expect(throws: APIError.self) {
      try await client.send(
        Endpoint<Void>(
          path: "unlock",
          query: [
            URLQueryItem(name: "token", value: "abc"), URLQueryItem(name: "pin", value: "4321"),
          ]))
    }
    let failure = try #require(events.withLock { $0 }.last)
    #expect(failure.url == "https://api.example.com/unlock?token=<redacted>&pin=<redacted>")
    #expect(
      failure.error?.contains("GET https://api.example.com/unlock?token=<redacted>&pin=<redacted>")
        == true,
      "\(failure.error ?? "")")
    #expect(failure.error?.contains("4321") == false)
  }

  @Test func cURLCarriesNoSecrets() throws {
    let request = try makeClient().makeRequest(for: Self.leaky)
    let curl = request.cURLDescription
    for secret in Self.secrets {
      #expect(!curl.contains(secret), "\(secret) leaked into: \(curl)")
    }
    #expect(curl.contains(#"--data-binary '{"password":"<redacted>","user":"ann"}'"#))
    #expect(curl.contains("-H 'Authorization: <redacted>'"))
  }

  @Test func cURLIsACommandToPaste() throws {
    let request = HTTPRequest(
      method: .put, url: url("https://api.example.com/v1/dogs/1"),
      headers: ["Content-Type": "application/json", "X-Note": "it's"],
      body: Data(#"{"name":"Rex"}"#.utf8),
      timeout: .seconds(30))
    #expect(
      request.cURLDescription == """
        curl -X PUT 'https://api.example.com/v1/dogs/1' \\
          -H 'Content-Type: application/json' \\
          -H 'X-Note: it'\\''s' \\
          --data-binary '{"name":"Rex"}' \\
          --max-time 30
        """)
  }

  /// The same digits in every locale: no grouping, always a `.`, never a zero for a short wait.
  @Test(arguments: [
    (Duration.seconds(30), "30"), (.milliseconds(2_500), "2.5"), (.seconds(1_500), "1500"),
    (.milliseconds(1), "0.001"), (.nanoseconds(1), "0.000001"),
    (.microseconds(1_999_999), "1.999999"),
    (.nanoseconds(999_999_999), "1"), (.seconds(Int64.max), "9223372036854775807"), (.zero, "0"),
    (.seconds(-5), "0"),
  ])
  func cURLMaxTimeIsAPlainDecimal(timeout: Duration, expected: String) {
    let request = HTTPRequest(method: .get, url: url("https://api.example.com"), timeout: timeout)
    #expect(request.cURLDescription.hasSuffix("--max-time \(expected)"))
  }

  /// Durations come from the injected clock; one too long for `Int` must print, not trap.
  @Test(arguments: [
    (Duration.milliseconds(31), "31 ms"), (.seconds(Int64.max / 2), "\(Int.max) ms"),
  ])
  func durationsPrintInWholeMilliseconds(elapsed: Duration, expected: String) async throws {
    let clock = TestClock()
    let events = Locked<[LogEvent]>([])
    let logging = LoggingMiddleware(clock: clock) { event in events.withLock { $0.append(event) } }
    let request = HTTPRequest(method: .get, url: url("https://api.example.com"))
    _ = try await logging.intercept(request) { _ in
      await clock.advance(by: elapsed)
      return HTTPResponse(status: 200)
    }
    let received = try #require(events.withLock { $0 }.last)
    #expect(received.message.hasSuffix("(0 bytes, \(expected))"))
  }

  @Test func aStreamedResponseIsLoggedAtItsHead() async throws {
    let events = Locked<[LogEvent]>([])
    let stub = StubTransport()
    await stub.on(.get, "/v1/feed", .chunks([Data("a".utf8), Data("b".utf8)]))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(middleware: [
        LoggingMiddleware { event in events.withLock { $0.append(event) } }
      ]))
    let stream = try await client.stream(Endpoint<Data>(path: "feed", decoding: .data))
    let received = try #require(events.withLock { $0 }.last)
    #expect(received.kind == .responseReceived)
    #expect(received.bytes == nil)
    #expect(
      received.message.hasPrefix("← 200 GET https://api.example.com/v1/feed (body streaming, "))
    #expect(try await stream.collect() == Data("ab".utf8))
  }
}
