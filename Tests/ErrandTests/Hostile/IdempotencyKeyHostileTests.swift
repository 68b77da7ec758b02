import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Probes of idempotency keys, as an attacker (or an unlucky app) would try them: make two
/// calls share a key, make a retry send a fresh one, make a key reach a cache or a page it does
/// not belong to.
@Suite(.timeLimit(.minutes(3))) struct IdempotencyKeyHostileTests {
  static func client(
    _ stub: StubTransport, clock: any Clock<Duration> = ImmediateClock(),
    middleware: [any Middleware] = []
  ) -> APIClient {
    APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        timeout: nil,
        middleware: [
          RetryMiddleware(policy: RetryPolicy(maxAttempts: 3, jitter: .none), clock: clock)
        ] + middleware, clock: clock))
  }

  /// Concurrent calls of one endpoint value: the server fails the first attempt of every key it
  /// has not seen, so each call is retried once. Fifty calls make a hundred requests, in pairs
  /// that share a key, and no key is sent by two calls.
  @Test func concurrentCallsOfOneEndpointNeverShareAKey() async throws {
    let seen = Locked<[String: Int]>([:])
    let stub = StubTransport { request in
      let key = request.headers["Idempotency-Key"] ?? "none"
      let count = seen.withLock { seen in
        seen[key, default: 0] += 1
        return seen[key, default: 0]
      }
      return count == 1 ? .status(503) : .status(201)
    }
    let client = Self.client(stub)
    let endpoint = Endpoint<Void>(method: .post, path: "orders").withIdempotencyKey()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<50 {
        group.addTask { try await client.send(endpoint) }
      }
      try await group.waitForAll()
    }
    #expect(await stub.requests.count == 100)
    let counts = seen.withLock { $0 }
    #expect(counts.count == 50)
    #expect(counts.values.allSatisfy { $0 == 2 })
    #expect(counts["none"] == nil)
  }

  /// A page that `pages` follows is another request: it never sends the key of the page before,
  /// whether the key was generated, fixed or written into the endpoint's headers.
  @Test(
    arguments: [
      ("generated", IdempotencyKey.generated, HTTPHeaders()),
      ("fixed", .fixed("search-1"), [:]),
      ("in the endpoint's headers", .generated, ["Idempotency-Key": "search-1"]),
    ] as [(String, IdempotencyKey, HTTPHeaders)])
  func aFollowedPageSendsAKeyOfItsOwn(
    label: String, key: IdempotencyKey, headers: HTTPHeaders
  ) async throws {
    let stub = StubTransport()
    await stub.on(
      .post, "/v1/search",
      .status(
        200, body: Data("[]".utf8),
        headers: ["Link": "<https://api.example.com/v1/search?page=2>; rel=next"]))
    await stub.on(.any, .status(200, body: Data("[]".utf8)))
    let first = Endpoint<[Dog]>(method: .post, path: "search", headers: headers)
      .withIdempotencyKey(key)
    var pages = 0
    for try await _ in Self.client(stub).pages(first) { pages += 1 }
    #expect(pages == 2, "\(label)")
    let keys = await stub.requests.map { $0.headers.values(for: "Idempotency-Key") }
    try #require(keys.count == 2, "\(label)")
    #expect(keys[0].count == 1 && keys[1].count == 1, "\(label)")
    #expect(keys[0] != keys[1], "\(label)")
    #expect(IdempotencyKeyTests.uuid(in: keys[1].first) != nil, "\(label)")
  }

  /// A redirect the transport follows is the same call: the key goes with it, to another origin
  /// too (it is not a credential).
  @Test(arguments: [
    "https://api.example.com/v1/orders/new", "https://pay.example.net/orders",
  ])
  func aFollowedRedirectKeepsTheCallsKey(location: String) async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(.post, "/v1/orders", .status(307, headers: ["Location": location]))
    await stub.on(.any, .status(201))
    try await Self.client(stub).send(
      Endpoint<Void>(method: .post, path: "orders").withIdempotencyKey())
    let sent = await stub.requests
    try #require(sent.count == 2)
    #expect(sent[1].url.absoluteString == location)
    #expect(sent[0].headers["Idempotency-Key"] != nil)
    #expect(sent[1].headers["Idempotency-Key"] == sent[0].headers["Idempotency-Key"])
  }

  /// A cache in the chain never answers a keyed call in the server's place (every call reaches
  /// it, with its own key, however long the answer says it stays fresh), and a read cannot carry
  /// a key into what the cache keeps: it is refused before the cache sees it.
  @Test func aCacheNeitherAnswersNorKeysAKeyedCall() async throws {
    let stub = StubTransport()
    let fresh: HTTPHeaders = ["Cache-Control": "max-age=600"]
    await stub.on(.post, "/v1/orders", .status(201, body: Data("{}".utf8), headers: fresh))
    await stub.on(.get, "/v1/dogs", .status(200, body: Data("[]".utf8), headers: fresh))
    let client = Self.client(stub, middleware: [CachingMiddleware(cache: HTTPCache())])
    let order = Endpoint<Data>(method: .post, path: "orders", decoding: .data).withIdempotencyKey()
    let dogs = Endpoint<Data>(path: "dogs", decoding: .data)
    _ = try await client.send(dogs)
    _ = try await client.send(order)
    _ = try await client.send(order)
    let refused = await #expect(throws: APIError.self) {
      try await client.send(dogs.withIdempotencyKey())
    }
    #expect(refused?.kind == .invalidRequest)
    let second = try await client.response(for: dogs).response
    #expect(second.cacheStatus == .hit)
    let sent = await stub.requests
    #expect(sent.map(\.method) == [.get, .post, .post])
    #expect(sent[0].headers["Idempotency-Key"] == nil)
    #expect(sent[1].headers["Idempotency-Key"] != nil)
    #expect(sent[1].headers["Idempotency-Key"] != sent[2].headers["Idempotency-Key"])
  }

  /// A middleware of the endpoint's own, run inside the client's retries, sees the call's key on
  /// every attempt: nothing between the retry and the transport makes a new one.
  @Test func everyMiddlewareSeesTheSameKeyOnEveryAttempt() async throws {
    let seen = Locked<[String?]>([])
    let stub = StubTransport()
    await stub.on(.any, .sequence([.status(503), .connectionLost, .status(201)]))
    let endpoint = Endpoint<Void>(method: .post, path: "orders")
      .withIdempotencyKey()
      .adding(SeesHeader(name: "Idempotency-Key", into: seen))
    try await Self.client(stub).send(endpoint)
    let wire = await stub.requests.map { $0.headers["Idempotency-Key"] }
    #expect(seen.withLock { $0 } == wire)
    #expect(wire.count == 3 && Set(wire).count == 1)
  }

  /// Each connection of a reconnecting event stream is a call of its own: a generated key is
  /// new on each, a fixed key is the same on all.
  @Test(arguments: [
    (IdempotencyKey.generated, 3), (.fixed("chat-7"), 1),
  ])
  func eachConnectionOfAStreamIsACall(key: IdempotencyKey, distinct: Int) async throws {
    let clock = TestClock()
    let stub = StubTransport()
    await stub.on(
      .post, "/v1/chat",
      .sequence([
        .events(
          [ServerSentEvent(data: "Hel", id: "1")], failingWith: URLError(.networkConnectionLost)),
        .events([ServerSentEvent(data: "lo", id: "2")]), .status(204),
      ]))
    let prompt = Endpoint<Data>(
      method: .post, path: "chat", body: .data(Data(#"{"q":"hi"}"#.utf8)), decoding: .data
    ).withIdempotencyKey(key)
    let client = APIClient(
      baseURL: base, transport: stub, configuration: APIClient.Configuration(clock: clock))
    let events = client.events(prompt, reconnect: ReconnectPolicy(resendsBody: true, jitter: false))
    let received = try await ReconnectionTests.read(
      events, clock: clock, waits: [.seconds(3), .seconds(6)])
    #expect(received.map(\.data) == ["Hel", "lo"])
    let keys = await stub.requests.map { $0.headers["Idempotency-Key"] }
    #expect(keys.count == 3)
    #expect(keys.allSatisfy { $0 != nil })
    #expect(Set(keys).count == distinct)
  }
}

/// Records the value of one header on every request that passes.
private struct SeesHeader: Middleware {
  let name: String
  let into: Locked<[String?]>

  func intercept(
    _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    into.withLock { $0.append(request.headers[name]) }
    return try await next(request)
  }
}
