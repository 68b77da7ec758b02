import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// RFC 9111 for a private cache, on a `TestClock`: freshness and age, revalidation, what is never
/// stored, `Vary`, invalidation by unsafe methods, the per-call policies and the byte budget.
@Suite(.timeLimit(.minutes(3))) struct HTTPCacheTests {
  static let endpoint = Endpoint<Data>(path: "dogs", decoding: .data)
  static let body = Data("[\"Rex\"]".utf8)

  struct Setup {
    /// The wall time the clock starts at: 1 December 2026, 10:00:00 GMT, the `Date` the tests'
    /// responses carry.
    static let start = Date(timeIntervalSince1970: 1_796_119_200)
    let clock: TestClock
    let stub: StubTransport
    let cache: HTTPCache
    let client: APIClient

    /// A setup whose cache reads the wall time from the clock, from ``start``.
    /// - Parameters:
    ///   - makeCache: Makes the cache, given that wall clock.
    ///   - policy: The middleware's policy.
    init(
      makeCache: (@escaping @Sendable () -> Date) -> HTTPCache = { HTTPCache(now: $0) },
      policy: CachePolicy = .useProtocolRules
    ) {
      let clock = TestClock()
      self.init(
        cache: makeCache {
          Setup.start.addingTimeInterval(Double(clock.now.offset.components.seconds))
        },
        clock: clock, policy: policy)
    }

    init(cache: HTTPCache, clock: TestClock = TestClock(), policy: CachePolicy = .useProtocolRules)
    {
      self.clock = clock
      stub = StubTransport(clock: clock)
      self.cache = cache
      client = APIClient(
        baseURL: base, transport: stub,
        configuration: APIClient.Configuration(
          middleware: [CachingMiddleware(cache: cache, policy: policy)], clock: clock))
    }

    func call(_ endpoint: Endpoint<Data> = HTTPCacheTests.endpoint) async throws -> HTTPResponse {
      try await client.response(for: endpoint).response
    }

    var sent: Int {
      get async { await stub.requests.count }
    }
  }

  /// Fresh for 60 s, however it says so (`max-age`, `Expires` minus `Date`, less `Age`): a hit
  /// until then without a request, a revalidation after it, without waiting.
  @Test(arguments: [
    ("max-age", ["Cache-Control": "max-age=60", "ETag": "\"v1\""] as HTTPHeaders),
    (
      "Expires minus Date",
      [
        "Date": "Tue, 01 Dec 2026 10:00:00 GMT", "Expires": "Tue, 01 Dec 2026 10:01:00 GMT",
        "ETag": "\"v1\"",
      ] as HTTPHeaders
    ),
    (
      "max-age less Age",
      ["Cache-Control": "max-age=90", "Age": "30", "ETag": "\"v1\""] as HTTPHeaders
    ),
  ])
  func aResponseFreshFor60sIsAHitAt59AndRevalidatedAt61(
    _ how: String, _ headers: HTTPHeaders
  ) async throws {
    let setup = Setup()
    await setup.stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(200, body: Self.body, headers: headers), .status(304, headers: ["ETag": "\"v1\""]),
      ]))
    #expect(try await setup.call().cacheStatus == .miss)
    await setup.clock.advance(by: .seconds(59))
    let hit = try await setup.call()
    #expect(hit.cacheStatus == .hit)
    #expect(hit.body == Self.body)
    #expect(await setup.sent == 1)
    await setup.clock.advance(by: .seconds(2))
    let revalidated = try await setup.call()
    #expect(revalidated.cacheStatus == .revalidated)
    #expect(revalidated.status == 200)
    #expect(revalidated.body == Self.body)
    let requests = await setup.stub.requests
    #expect(requests.count == 2)
    #expect(requests.last?.headers["If-None-Match"] == "\"v1\"")
  }

  /// A `304` refreshes the stored headers and the age: fresh again for its new `max-age`.
  @Test func aNotModifiedAnswerUpdatesTheStoredHeaders() async throws {
    let setup = Setup()
    await setup.stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(
          200, body: Self.body,
          headers: [
            "Cache-Control": "no-cache", "Last-Modified": "Mon, 30 Nov 2026 10:00:00 GMT",
            "X-Version": "1",
          ]),
        .status(304, headers: ["Cache-Control": "max-age=30", "X-Version": "2"]),
      ]))
    _ = try await setup.call()
    let revalidated = try await setup.call()
    #expect(revalidated.cacheStatus == .revalidated)
    #expect(revalidated.headers["X-Version"] == "2")
    #expect(
      await setup.stub.requests.last?.headers["If-Modified-Since"]
        == "Mon, 30 Nov 2026 10:00:00 GMT")
    await setup.clock.advance(by: .seconds(29))
    #expect(try await setup.call().cacheStatus == .hit)
    #expect(await setup.sent == 2)
  }

  /// What RFC 9111 says never to store, or never to serve without asking, goes to the network
  /// every time.
  @Test(arguments: [
    ("no-store", ["Cache-Control": "no-store, max-age=60"] as HTTPHeaders),
    ("Vary: *", ["Cache-Control": "max-age=60", "Vary": "*"] as HTTPHeaders),
    ("no freshness and no validator", [:] as HTTPHeaders),
    ("a 201 without explicit freshness", ["ETag": "\"v1\""] as HTTPHeaders),
  ])
  func whatMustNotBeStoredIsFetchedEveryTime(_ what: String, _ headers: HTTPHeaders) async throws {
    let setup = Setup()
    let status = what == "a 201 without explicit freshness" ? 201 : 200
    await setup.stub.on(.get, "/v1/dogs", .status(status, body: Self.body, headers: headers))
    for _ in 0..<3 {
      #expect(try await setup.call().cacheStatus == .miss)
    }
    #expect(await setup.sent == 3)
    #expect(setup.cache.count == 0)
  }

  /// `Vary: Accept-Language` keeps one entry per language.
  @Test func varyKeepsOneEntryPerValueOfTheNamedHeaders() async throws {
    let setup = Setup()
    await setup.stub.on(
      .get, "/v1/dogs",
      .handler { request, _ in
        .status(
          200, body: Data((request.headers["Accept-Language"] ?? "none").utf8),
          headers: ["Cache-Control": "max-age=60", "Vary": "Accept-Language"])
      })
    func call(_ language: String) async throws -> HTTPResponse {
      var endpoint = Self.endpoint
      endpoint.headers["Accept-Language"] = language
      return try await setup.call(endpoint)
    }
    #expect(try await call("en").body == Data("en".utf8))
    #expect(try await call("fr").body == Data("fr".utf8))
    let english = try await call("en")
    #expect(english.body == Data("en".utf8))
    #expect(english.cacheStatus == .hit)
    #expect(try await call("fr").cacheStatus == .hit)
    #expect(await setup.sent == 2)
    #expect(setup.cache.count == 2)
  }

  /// A successful unsafe request drops what is stored for its URL and the same-origin
  /// `Location` it answers with, not what another origin names.
  @Test func anUnsafeRequestInvalidatesItsTargetAndItsLocation() async throws {
    let setup = Setup()
    await setup.stub.on(
      .get, "/v1/dogs", .status(200, body: Self.body, headers: ["Cache-Control": "max-age=600"]))
    await setup.stub.on(
      .get, "/v1/dogs/1", .status(200, body: Self.body, headers: ["Cache-Control": "max-age=600"]))
    await setup.stub.on(.post, "/v1/dogs", .status(201, headers: ["Location": "/v1/dogs/1"]))
    _ = try await setup.call()
    _ = try await setup.call(Endpoint<Data>(path: "dogs/1", decoding: .data))
    #expect(setup.cache.count == 2)
    _ = try await setup.client.response(
      for: Endpoint<Data>(method: .post, path: "dogs", decoding: .data))
    #expect(setup.cache.count == 0)
    #expect(try await setup.call().cacheStatus == .miss)
  }

  /// Per-call policies: reload goes to the network, return-cache-else-load serves a stale entry,
  /// only-if-cached never sends and answers a miss with `504`.
  @Test func theCallsPolicyDecidesWhetherTheNetworkIsAsked() async throws {
    let setup = Setup()
    await setup.stub.on(
      .get, "/v1/dogs", .status(200, body: Self.body, headers: ["Cache-Control": "max-age=10"]))
    _ = try await setup.call()
    await setup.clock.advance(by: .seconds(20))
    var endpoint = Self.endpoint
    endpoint.cachePolicy = .returnCacheElseLoad
    #expect(try await setup.call(endpoint).cacheStatus == .stale)
    endpoint.cachePolicy = .onlyIfCached
    #expect(try await setup.call(endpoint).cacheStatus == .stale)
    #expect(await setup.sent == 1)
    endpoint.cachePolicy = .reloadIgnoringCache
    #expect(try await setup.call(endpoint).cacheStatus == .miss)
    #expect(await setup.sent == 2)
    var offline = Endpoint<Data>(path: "cats", decoding: .data)
    offline.cachePolicy = .onlyIfCached
    let error = await #expect(throws: APIError.self) { try await setup.call(offline) }
    #expect(error?.kind == .unacceptableStatus)
    #expect(error?.response?.status == 504)
    #expect(await setup.sent == 2)
  }

  /// Past its byte budget the cache drops the least recently used response: two 4 KB answers
  /// fit in 12,000 bytes with what each entry holds beside its body, three do not.
  @Test func theLeastRecentlyUsedResponseLeavesFirst() async throws {
    let big = Data(count: 4_000)
    let setup = Setup(cache: HTTPCache(memoryBudget: 12_000))
    for path in ["a", "b", "c"] {
      await setup.stub.on(
        .get, "/v1/\(path)", .status(200, body: big, headers: ["Cache-Control": "max-age=600"]))
    }
    func call(_ path: String) async throws -> CacheStatus? {
      try await setup.call(Endpoint<Data>(path: path, decoding: .data)).cacheStatus
    }
    _ = try await call("a")
    _ = try await call("b")
    #expect(try await call("a") == .hit)  // b is now the least recently used
    _ = try await call("c")
    #expect(setup.cache.count == 2)
    #expect(setup.cache.storedBytes <= 12_000)
    #expect(try await call("a") == .hit)
    #expect(try await call("b") == .miss)
  }

  /// A logging middleware outside the cache says where each response came from.
  @Test func loggingShowsWhereTheResponseCameFrom() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(
      .get, "/v1/dogs", .status(200, body: Self.body, headers: ["Cache-Control": "max-age=60"]))
    let lines = Locked<[String]>([])
    let logging = LoggingMiddleware { event in
      if event.kind == .responseReceived { lines.withLock { $0.append(event.message) } }
    }
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        middleware: [logging, CachingMiddleware(cache: HTTPCache())], clock: clock))
    _ = try await client.response(for: Self.endpoint)
    _ = try await client.response(for: Self.endpoint)
    #expect(
      lines.withLock { $0 } == [
        "← 200 GET https://api.example.com/v1/dogs (7 bytes, 0 ms, cache miss)",
        "← 200 GET https://api.example.com/v1/dogs (7 bytes, 0 ms, cache hit)",
      ])
  }
}
