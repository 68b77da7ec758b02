import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

/// Hostile review of what the cache conformance work added (the `Age` it sends, the strict date
/// parser, answers to the caller's own conditions and ranges, revalidation in the background,
/// reading a revalidation ahead): each test asserts the safe behaviour, so a failure is a finding.
@Suite(.timeLimit(.minutes(3))) struct CacheConformanceHostileTests {
  static let body = Data("[\"Rex\"]".utf8)
  static let whileRevalidating: HTTPHeaders = [
    "Cache-Control": "max-age=1, stale-while-revalidate=600", "ETag": "\"v1\"",
  ]

  /// Two users' clients on one cache, on one clock and one stub that answers each with its own
  /// token in the body.
  struct TwoUsers {
    let clock = TestClock()
    let stub: StubTransport
    let cache = HTTPCache()
    let alice: APIClient
    let bob: APIClient

    init(headers: HTTPHeaders = whileRevalidating) {
      stub = StubTransport(clock: clock) { request in
        .status(
          200, body: Data((request.headers["Authorization"] ?? "none").utf8), headers: headers)
      }
      alice = Self.client("alice", stub: stub, cache: cache, clock: clock)
      bob = Self.client("bob", stub: stub, cache: cache, clock: clock)
    }

    static func client(_ token: String, stub: StubTransport, cache: HTTPCache, clock: TestClock)
      -> APIClient
    {
      APIClient(
        baseURL: base, transport: stub,
        configuration: APIClient.Configuration(
          headers: ["Authorization": "Bearer \(token)", "X-Tenant": "tenant-\(token)"],
          timeout: nil, acceptableStatusCodes: 0..<1000,
          middleware: [CachingMiddleware(cache: cache)], clock: clock))
    }

    static func call(_ client: APIClient, headers: HTTPHeaders = [:]) async throws -> HTTPResponse {
      try await client.response(
        for: Endpoint<Data>(path: "dogs", headers: headers, decoding: .data)
      )
      .response
    }
  }

  /// A revalidation in the background stores what it gets for the user whose call started it,
  /// sends that user's request as the call sent it (credentials and the client's own headers, no
  /// fingerprint the store keys on), and never answers another user.
  @Test func aBackgroundRevalidationStaysWithItsUser() async throws {
    let users = TwoUsers()
    #expect(try await TwoUsers.call(users.alice).body == Data("Bearer alice".utf8))
    await users.clock.advance(by: .seconds(2))
    #expect(try await TwoUsers.call(users.alice).cacheStatus == .stale)
    try #require(await users.cache.waitForRevalidations())
    let sent = await users.stub.requests
    try #require(sent.count == 2, "the revalidation did not reach the server")
    let background = sent[1]
    #expect(background.headers["If-None-Match"] == "\"v1\"")
    #expect(background.headers["Authorization"] == "Bearer alice")
    #expect(background.headers["X-Tenant"] == "tenant-alice")
    #expect(background.headers.fields.allSatisfy { !$0.name.contains(" ") })
    let bob = try await TwoUsers.call(users.bob)
    #expect(bob.cacheStatus == .miss)
    #expect(bob.body == Data("Bearer bob".utf8))
  }

  /// The caller's own `If-None-Match` with another user's tag, or a range of another user's
  /// body, is never answered from that user's stored response.
  @Test(arguments: [
    ["If-None-Match": "\"v1\""] as HTTPHeaders, ["Range": "bytes=0-3"],
    ["If-Modified-Since": "Fri, 31 Dec 9999 23:59:59 GMT"],
  ])
  func anotherUsersStoredResponseAnswersNoConditionOrRange(_ headers: HTTPHeaders) async throws {
    let users = TwoUsers(headers: [
      "Cache-Control": "max-age=600", "ETag": "\"v1\"",
      "Last-Modified": "Mon, 30 Nov 2026 10:00:00 GMT",
    ])
    _ = try await TwoUsers.call(users.alice)
    let bob = try await TwoUsers.call(users.bob, headers: headers)
    #expect(bob.cacheStatus == .miss)
    #expect(bob.status == 200)
    #expect(bob.body == Data("Bearer bob".utf8))
    #expect(await users.stub.requests.count == 2)
  }

  /// However many stale responses are used at once, at most 16 revalidations run in the
  /// background; the rest are answered stale without one.
  @Test func backgroundRevalidationsAreBounded() async throws {
    let clock = TestClock()
    let gate = Gate()
    let stub = StubTransport(clock: clock) { request in
      guard request.headers["If-None-Match"] != nil else {
        return .status(200, body: Self.body, headers: Self.whileRevalidating)
      }
      await gate.passed()
      return .status(304, headers: ["ETag": "\"v1\""])
    }
    let cache = HTTPCache()
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        timeout: nil, middleware: [CachingMiddleware(cache: cache)], clock: clock))
    let endpoints = (0..<40).map { Endpoint<Data>(path: "dogs/\($0)", decoding: .data) }
    for endpoint in endpoints {
      _ = try await client.response(for: endpoint)
    }
    await clock.advance(by: .seconds(2))
    for endpoint in endpoints {
      #expect(try await client.response(for: endpoint).response.cacheStatus == .stale)
    }
    #expect(cache.revalidationsInFlight == 16)
    for _ in 0..<(40 + 16) {
      _ = try await stub.nextRequest()
    }
    gate.open()
    try #require(await cache.waitForRevalidations())
    #expect(await stub.requests.count == 40 + 16)
  }

  /// Holds whoever passes until it opens; open, it lets everyone through at once.
  final class Gate: Sendable {
    private let state = Locked((open: false, waiting: [CheckedContinuation<Void, Never>]()))

    func passed() async {
      await withCheckedContinuation { continuation in
        let open = state.withLock { state in
          if !state.open { state.waiting.append(continuation) }
          return state.open
        }
        if open { continuation.resume() }
      }
    }

    func open() {
      let waiting = state.withLock { state in
        state.open = true
        defer { state.waiting = [] }
        return state.waiting
      }
      for continuation in waiting { continuation.resume() }
    }
  }

  /// A revalidation in the background whose server never answers ends by its own deadline
  /// (60 s without the call's timeout), leaving the stored response as it was.
  @Test func aBackgroundRevalidationThatNeverEndsEndsByItsDeadline() async throws {
    let scenario = CacheScenario()
    await scenario.stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(200, body: Self.body, headers: Self.whileRevalidating),
        StubResponse.status(304).delayed(by: .seconds(3600 * 24)),
      ]))
    _ = try await scenario.call()
    await scenario.clock.advance(by: .seconds(2))
    #expect(try await scenario.call().cacheStatus == .stale)
    try #require(await scenario.clock.waitForSleeper(dueIn: .seconds(60)))
    #expect(scenario.cache.revalidationsInFlight == 1)
    await scenario.clock.advance(by: .seconds(60))
    try #require(await scenario.cache.waitForRevalidations())
    #expect(scenario.cache.count == 1)
    // Still stale-while-revalidate: answered at once, and a new revalidation starts.
    #expect(try await scenario.call().cacheStatus == .stale)
    #expect(scenario.cache.revalidationsInFlight == 1)
  }

  /// A client that goes away while its revalidation runs cancels it at once: nothing it started
  /// outlives it, and nothing keeps it alive.
  @Test func aClientDroppedMidRevalidationCancelsIt() async throws {
    let clock = TestClock()
    let cache = HTTPCache()
    let cancelled = Locked(false)
    let stub = StubTransport(clock: clock) { request in
      guard request.headers["If-None-Match"] != nil else {
        return .status(200, body: Self.body, headers: Self.whileRevalidating)
      }
      do {
        try await clock.sleep(for: .seconds(3600))
      } catch {
        cancelled.withLock { $0 = true }
        throw error
      }
      return .status(304)
    }
    var client: APIClient? = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        timeout: nil, middleware: [CachingMiddleware(cache: cache)], clock: clock))
    weak var gone: APIClient?
    gone = client
    let endpoint = Endpoint<Data>(path: "dogs", decoding: .data)
    _ = try await client?.response(for: endpoint)
    await clock.advance(by: .seconds(2))
    #expect(try await client?.response(for: endpoint).response.cacheStatus == .stale)
    try #require(await clock.waitForSleeper(dueIn: .seconds(3600)))
    #expect(cache.revalidationsInFlight == 1)
    client = nil
    #expect(gone == nil)
    try #require(await cache.waitForRevalidations())
    #expect(cancelled.withLock { $0 })
    #expect(cache.count == 1)
  }

  /// A streamed revalidation that stalls, read ahead so that `stale-if-error` can stand in for
  /// it, ends by the call's deadline: the stored response answers, the call does not hang.
  @Test func aStalledStreamedRevalidationEndsByTheCallsDeadline() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    let cache = HTTPCache()
    await stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(
          200, body: Self.body,
          headers: ["Cache-Control": "max-age=1, stale-if-error=600", "ETag": "\"v1\""]),
        .chunks([Data("a".utf8), Data("b".utf8)], interval: .seconds(3600 * 24)),
      ]))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        timeout: .seconds(30), middleware: [CachingMiddleware(cache: cache)], clock: clock))
    let endpoint = Endpoint<Data>(path: "dogs", decoding: .data)
    _ = try await client.response(for: endpoint)
    await clock.advance(by: .seconds(2))
    let call = Task { try await client.stream(endpoint) }
    try #require(await clock.waitForSleeper(dueIn: .seconds(3600 * 24)))
    // The call's deadline, 30 s from its start, must be asleep too before the clock passes it:
    // under ThreadSanitizer it registered after the stub's sleeper, the advance missed it, and
    // the call waited for ever.
    try #require(await clock.waitForSleeper(dueIn: .seconds(30)))
    await clock.advance(by: .seconds(30))
    let stream = try await withTaskCancellationHandler {
      try await call.value
    } onCancel: {
      call.cancel()
    }
    #expect(stream.response.cacheStatus == .stale)
  }

  /// A streamed revalidation larger than the memory budget is not held back past it: the
  /// caller gets the stream (read ahead no further than the budget), and its error at the end.
  @Test func aLargeStreamedRevalidationIsNotHeldPastTheBudget() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    let cache = HTTPCache(memoryBudget: 5_000)
    let chunks = (0..<10).map { _ in Data(count: 1_000) }
    await stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(
          200, body: Self.body,
          headers: ["Cache-Control": "max-age=1, stale-if-error=600", "ETag": "\"v1\""]),
        .chunks(chunks, failingWith: URLError(.networkConnectionLost)),
      ]))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        timeout: nil, middleware: [CachingMiddleware(cache: cache)], clock: clock))
    let endpoint = Endpoint<Data>(path: "dogs", decoding: .data)
    _ = try await client.response(for: endpoint)
    await clock.advance(by: .seconds(2))
    let stream = try await client.stream(endpoint)
    #expect(stream.response.cacheStatus == .miss)
    var read = 0
    let error = await #expect(throws: APIError.self) {
      for try await chunk in stream {
        read += chunk.count
      }
    }
    #expect(error?.kind == .transport)
    #expect(read == 10_000)
  }

  /// Odd `Age`, `Date`, `Expires`, `max-age`, `If-Modified-Since` and `Range` values: answered,
  /// never a crash, and an `Age` the cache sends is one integer no larger than 2^31.
  @Test(
    arguments: [
      ["Age": "99999999999999999999999999999999"], ["Age": "-0"], ["Age": "0x10"], ["Age": "٣"],
      ["Age": String(repeating: "0,", count: 10_000)],
      ["Date": "Sat, 01 Jan 0000 00:00:00 GMT"], ["Date": "Fri, 31 Dec 9999 23:59:60 GMT"],
      ["Date": "Sun, 29 Feb 2025 00:00:00 GMT"],
      ["Expires": "Fri, 31 Dec 9999 23:59:59 GMT", "Date": "Sat, 01 Jan 0000 00:00:00 GMT"],
      ["Expires": String(repeating: " ", count: 100_000) + "Fri, 31 Dec 9999 23:59:59 GMT"],
      [
        "Cache-Control": "max-age=99999999999999999999999999, stale-while-revalidate=99999999999999"
      ],
      ["Last-Modified": "Sat, 01 Jan 0000 00:00:00 GMT"],
    ] as [HTTPHeaders])
  func oddValuesAreAnsweredWithoutACrash(_ odd: HTTPHeaders) async throws {
    let scenario = CacheScenario { wallClock in
      HTTPCache(heuristicFreshness: 0.1, now: { wallClock.date })
    }
    var headers: HTTPHeaders = ["Cache-Control": "max-age=60", "ETag": "\"v1\""]
    for field in odd.fields {
      headers[field.name] = field.value
    }
    await scenario.stub.on(.get, "/v1/dogs", .status(200, body: Self.body, headers: headers))
    _ = try await scenario.call()
    await scenario.clock.advance(by: .seconds(3))
    for request in [
      [:], ["Cache-Control": "max-stale"], ["If-Modified-Since": "Fri, 31 Dec 9999 23:59:60 GMT"],
      ["Range": "bytes=-99999999999999999999"], ["Range": "bytes=99999999999999999999-1"],
      ["Range": "bytes=0-99999999999999999999"],
      ["If-None-Match": String(repeating: ",", count: 10_000)],
    ] as [HTTPHeaders] {
      let answer = try await scenario.call(headers: request)
      #expect([200, 206, 304].contains(answer.status))
      if answer.cacheStatus != .miss, let age = answer.headers["Age"] {
        #expect(answer.headers.values(for: "Age").count == 1)
        #expect(Int(age).map { (0...2_147_483_648).contains($0) } == true)
      }
    }
  }
}
