import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// The cache's edges: heuristic freshness when asked for, a stale response standing in for an
/// error when the server allowed it, and servers that send odd or hostile values.
@Suite(.timeLimit(.minutes(3))) struct HTTPCacheEdgeTests {
  typealias Setup = HTTPCacheTests.Setup
  static let body = HTTPCacheTests.body

  /// With `heuristicFreshness: 0.1`, a response modified 10 days before its `Date` is fresh for
  /// a day (the cap); without it, it is revalidated at once.
  @Test(arguments: [nil, 0.1] as [Double?])
  func heuristicFreshnessIsUsedOnlyWhenAsked(fraction: Double?) async throws {
    let setup = Setup { HTTPCache(heuristicFreshness: fraction, now: $0) }
    let headers: HTTPHeaders = [
      "Date": "Tue, 01 Dec 2026 10:00:00 GMT", "Last-Modified": "Sat, 21 Nov 2026 10:00:00 GMT",
    ]
    await setup.stub.on(.get, "/v1/dogs", .status(200, body: Self.body, headers: headers))
    _ = try await setup.call()
    await setup.clock.advance(by: .seconds(86_399))
    let second = try await setup.call()
    #expect(second.cacheStatus == (fraction == nil ? .miss : .hit))
    await setup.clock.advance(by: .seconds(2))
    #expect(try await setup.call().cacheStatus == .miss)
  }

  /// `stale-if-error` lets a stored response answer when revalidation fails (a `5xx` or no
  /// answer), for as long as it says; `must-revalidate` forbids it.
  @Test(arguments: [
    ("a 503", "max-age=10, stale-if-error=60", true),
    ("no answer", "max-age=10, stale-if-error=60", true),
    ("a 503, past the window", "max-age=10, stale-if-error=5", false),
    ("a 503, must-revalidate", "max-age=10, stale-if-error=60, must-revalidate", false),
    ("a cancellation", "max-age=10, stale-if-error=60", false),
  ])
  func aStaleResponseStandsInForAnErrorWhenAllowed(
    _ failure: String, _ control: String, _ standsIn: Bool
  ) async throws {
    let setup = Setup()
    let fails: StubResponse =
      switch failure {
      case "no answer": .error(URLError(.cannotConnectToHost))
      case "a cancellation": .error(CancellationError())
      default: .status(503)
      }
    await setup.stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(200, body: Self.body, headers: ["Cache-Control": control, "ETag": "\"1\""]), fails,
      ]))
    _ = try await setup.call()
    await setup.clock.advance(by: .seconds(20))
    if standsIn {
      let stale = try await setup.call()
      #expect(stale.cacheStatus == .stale)
      #expect(stale.body == Self.body)
    } else if failure == "a cancellation" {
      let error = await #expect(throws: APIError.self) { try await setup.call() }
      #expect(error?.kind == .cancelled)
    } else {
      let error = await #expect(throws: APIError.self) { try await setup.call() }
      #expect(error?.response?.status == 503)
    }
  }

  /// Odd or hostile values never crash the cache and never keep a response longer than 2^31 s
  /// (RFC 9111 §1.2.2), nor one that varies on too many headers.
  @Test(arguments: [
    (
      "max-age beyond 64 bits", ["Cache-Control": "max-age=99999999999999999999"] as HTTPHeaders,
      true
    ),
    ("negative Age", ["Cache-Control": "max-age=60", "Age": "-5"] as HTTPHeaders, true),
    ("max-age that is not a number", ["Cache-Control": "max-age=soon"] as HTTPHeaders, false),
    ("an Expires that is not a date", ["Expires": "0"] as HTTPHeaders, false),
    (
      "10,000 Vary fields",
      HTTPHeaders(
        [HTTPHeaders.Field(name: "Cache-Control", value: "max-age=60")]
          + (0..<10_000).map { HTTPHeaders.Field(name: "Vary", value: "X-Header-\($0)") }),
      false
    ),
  ])
  func hostileValuesAreBounded(_ what: String, _ headers: HTTPHeaders, _ isHit: Bool) async throws {
    let setup = Setup()
    await setup.stub.on(.get, "/v1/dogs", .status(200, body: Self.body, headers: headers))
    _ = try await setup.call()
    #expect(try await setup.call().cacheStatus == (isHit ? .hit : .miss))
    if what == "max-age beyond 64 bits" {
      await setup.clock.advance(by: .seconds(Int(Int32.max) + 2))
      #expect(try await setup.call().cacheStatus == .miss)
    }
  }

  /// A body larger than the whole budget is answered and not stored.
  @Test func aBodyLargerThanTheBudgetIsNotStored() async throws {
    let setup = Setup(cache: HTTPCache(memoryBudget: 1_000))
    await setup.stub.on(
      .get, "/v1/dogs",
      .status(200, body: Data(count: 5_000), headers: ["Cache-Control": "max-age=60"]))
    #expect(try await setup.call().body.count == 5_000)
    #expect(setup.cache.count == 0)
    #expect(try await setup.call().cacheStatus == .miss)
  }
}

/// Streamed calls: a stored answer streams as one chunk; a streamed answer is stored once read to
/// the end, not when it is left early.
@Suite(.timeLimit(.minutes(3))) struct HTTPCacheStreamingTests {
  typealias Setup = HTTPCacheTests.Setup
  static let chunks = ["[\"Rex\",", "\"Fido\"]"].map { Data($0.utf8) }

  /// The second chunk comes a second later on the clock: a reader that leaves before it cancels
  /// the transfer, and nothing is stored.
  @Test(arguments: [true, false])
  func aStreamedAnswerIsStoredOnlyWhenReadToTheEnd(readsToTheEnd: Bool) async throws {
    let setup = Setup()
    await setup.stub.on(
      .get, "/v1/dogs",
      .chunks(Self.chunks, interval: .seconds(1), headers: ["Cache-Control": "max-age=60"]))
    let stream = try await setup.client.stream(HTTPCacheTests.endpoint)
    #expect(stream.response.cacheStatus == .miss)
    var iterator = stream.makeAsyncIterator()
    #expect(try await iterator.next() == Self.chunks[0])
    if readsToTheEnd {
      // Once the stub waits for its second chunk: advancing before would miss its sleep.
      try #require(await setup.clock.waitForSleeper(dueIn: .seconds(1)))
      await setup.clock.advance(by: .seconds(1))
      #expect(try await iterator.next() == Self.chunks[1])
      #expect(try await iterator.next() == nil)
      let again = try await setup.call()
      #expect(again.cacheStatus == .hit)
      #expect(again.body == Self.chunks[0] + Self.chunks[1])
      #expect(await setup.sent == 1)
    } else {
      stream.cancel()
      await setup.clock.advance(by: .seconds(1))  // the second chunk finds the transfer stopped
      #expect(setup.cache.count == 0)
    }
  }

  @Test func aStoredAnswerStreams() async throws {
    let setup = Setup()
    await setup.stub.on(
      .get, "/v1/dogs",
      .status(200, body: HTTPCacheTests.body, headers: ["Cache-Control": "max-age=60"]))
    _ = try await setup.call()
    let stream = try await setup.client.stream(HTTPCacheTests.endpoint)
    #expect(stream.response.cacheStatus == .hit)
    #expect(try await stream.collect() == HTTPCacheTests.body)
    #expect(await setup.sent == 1)
  }

  /// A streamed call's revalidation: the `304` head (with its empty body stream) refreshes the
  /// entry, and the stored body streams.
  @Test func aStreamedCallIsRevalidatedByA304() async throws {
    let setup = Setup()
    await setup.stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(
          200, body: HTTPCacheTests.body, headers: ["Cache-Control": "no-cache", "ETag": "\"1\""]),
        .status(304, headers: ["ETag": "\"1\""]),
      ]))
    _ = try await setup.call()
    let stream = try await setup.client.stream(HTTPCacheTests.endpoint)
    #expect(stream.response.cacheStatus == .revalidated)
    #expect(stream.response.status == 200)
    #expect(try await stream.collect() == HTTPCacheTests.body)
  }
}
