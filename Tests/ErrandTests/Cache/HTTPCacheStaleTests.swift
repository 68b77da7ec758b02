import Errand
import ErrandTesting
import Foundation
import Testing

/// RFC 5861 for a private cache: `stale-if-error` stands in for a revalidation that fails,
/// however it fails, and `stale-while-revalidate` answers at once while the cache revalidates in
/// the background.
@Suite(.timeLimit(.minutes(3))) struct HTTPCacheStaleTests {
  static let body = Data("[\"Rex\"]".utf8)
  static let stored: HTTPHeaders = [
    "Cache-Control": "max-age=1, stale-if-error=60", "ETag": "\"v1\"",
  ]

  /// How a revalidation can fail: no answer (the connection lost before the head, or cut in the
  /// middle of the body), or an error status.
  enum Failure: String, CaseIterable, Sendable {
    case lostBeforeTheHead, cutMidBody, cutMidBodyWhileStreaming, badGateway, gatewayTimeout

    var answer: StubResponse {
      switch self {
      case .lostBeforeTheHead: .error(URLError(.networkConnectionLost))
      case .cutMidBody, .cutMidBodyWhileStreaming:
        .chunks(
          [Data("[\"Re".utf8)], status: 200, headers: ["Cache-Control": "max-age=60"],
          failingWith: URLError(.networkConnectionLost))
      case .badGateway: .status(502)
      case .gatewayTimeout: .status(504)
      }
    }
  }

  /// Within `stale-if-error` a revalidation that fails, however it fails, is answered with the
  /// stored response, marked stale; the entry stays.
  @Test(arguments: Failure.allCases)
  func aFailedRevalidationIsAnsweredFromTheCacheWithinStaleIfError(_ failure: Failure)
    async throws
  {
    let scenario = CacheScenario()
    await scenario.stub.on(
      .get, "/v1/dogs",
      .sequence([.status(200, body: Self.body, headers: Self.stored), failure.answer]))
    _ = try await scenario.call()
    await scenario.clock.advance(by: .seconds(2))
    let endpoint = Endpoint<Data>(path: "dogs", decoding: .data)
    let answer: HTTPResponse
    let body: Data
    if failure == .cutMidBodyWhileStreaming {
      let stream = try await scenario.client.stream(endpoint)
      answer = stream.response
      var collected = Data()
      for try await chunk in stream {
        collected.append(chunk)
      }
      body = collected
    } else {
      answer = try await scenario.client.response(for: endpoint).response
      body = answer.body
    }
    #expect(answer.cacheStatus == .stale)
    #expect(answer.status == 200)
    #expect(body == Self.body)
    #expect(await scenario.sent == 2)
    #expect(scenario.cache.count == 1)
  }

  static let whileRevalidating: HTTPHeaders = [
    "Cache-Control": "max-age=1, stale-while-revalidate=60", "ETag": "\"v1\"",
  ]

  /// Within `stale-while-revalidate` a stale response answers at once, and the cache revalidates
  /// it in the background, through the rest of the chain, with its validators: the `304` makes it
  /// fresh again for the next call.
  @Test func staleWhileRevalidateAnswersAtOnceAndRevalidatesInTheBackground() async throws {
    let scenario = CacheScenario()
    await scenario.stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(200, body: Self.body, headers: Self.whileRevalidating),
        .status(304, headers: ["Cache-Control": "max-age=60", "ETag": "\"v1\""]),
      ]))
    _ = try await scenario.call()
    await scenario.clock.advance(by: .seconds(2))
    let stale = try await scenario.call()
    #expect(stale.cacheStatus == .stale)
    #expect(stale.body == Self.body)
    #expect(stale.headers["Age"] == "2")
    try #require(await scenario.cache.waitForRevalidations())
    let sent = await scenario.stub.requests
    #expect(sent.count == 2)
    #expect(sent.last?.headers["If-None-Match"] == "\"v1\"")
    let fresh = try await scenario.call()
    #expect(fresh.cacheStatus == .hit)
    #expect(fresh.headers["Cache-Control"] == "max-age=60")
    #expect(await scenario.sent == 2)
  }

  /// What the background revalidation gets decides what is stored: a new `200` replaces the
  /// response, a `no-store` answer removes it, a `5xx` or no answer leaves it.
  @Test(
    arguments: [
      (
        "a new 200",
        StubResponse.status(200, body: Data("new".utf8), headers: ["Cache-Control": "max-age=60"]),
        "new"
      ),
      (
        "no-store", .status(200, body: Data("new".utf8), headers: ["Cache-Control": "no-store"]),
        nil
      ),
      ("a 503", .status(503), "[\"Rex\"]"),
      ("no answer", .error(URLError(.networkConnectionLost)), "[\"Rex\"]"),
    ] as [(String, StubResponse, String?)])
  func theBackgroundAnswerDecidesWhatIsStored(
    _ what: String, _ answer: StubResponse, _ stored: String?
  ) async throws {
    let scenario = CacheScenario()
    await scenario.stub.on(
      .get, "/v1/dogs",
      .sequence([.status(200, body: Self.body, headers: Self.whileRevalidating), answer]))
    _ = try await scenario.call()
    await scenario.clock.advance(by: .seconds(2))
    #expect(try await scenario.call().cacheStatus == .stale)
    try #require(await scenario.cache.waitForRevalidations())
    #expect(scenario.cache.count == (stored == nil ? 0 : 1))
    if let stored {
      let next = try await scenario.call(headers: ["Cache-Control": "max-stale"])
      #expect(next.body == Data(stored.utf8))
    }
  }

  /// Past the window, or where the response says `must-revalidate` or the request asks for
  /// something fresher, the cache revalidates before it answers.
  @Test(
    arguments: [
      ("past the window", "max-age=1, stale-while-revalidate=1", [:] as HTTPHeaders),
      ("must-revalidate", "max-age=1, stale-while-revalidate=60, must-revalidate", [:]),
      (
        "the request's no-cache", "max-age=1, stale-while-revalidate=60",
        ["Cache-Control": "no-cache"]
      ),
      (
        "the request's max-age", "max-age=1, stale-while-revalidate=60",
        ["Cache-Control": "max-age=1"]
      ),
    ] as [(String, String, HTTPHeaders)])
  func otherwiseItRevalidatesBeforeAnswering(
    _ what: String, _ cacheControl: String, _ request: HTTPHeaders
  ) async throws {
    let scenario = CacheScenario()
    await scenario.stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(200, body: Self.body, headers: ["Cache-Control": cacheControl, "ETag": "\"v1\""]),
        .status(304, headers: ["Cache-Control": "max-age=60", "ETag": "\"v1\""]),
      ]))
    _ = try await scenario.call()
    await scenario.clock.advance(by: .seconds(3))
    #expect(try await scenario.call(headers: request).cacheStatus == .revalidated)
    #expect(scenario.cache.revalidationsInFlight == 0)
  }

  /// One revalidation at a time for a stored response: the calls that come meanwhile are
  /// answered stale without starting another.
  @Test func oneBackgroundRevalidationAtATime() async throws {
    let scenario = CacheScenario()
    await scenario.stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(200, body: Self.body, headers: Self.whileRevalidating),
        StubResponse.status(304, headers: ["Cache-Control": "max-age=60", "ETag": "\"v1\""])
          .delayed(by: .seconds(10)),
      ]))
    _ = try await scenario.call()
    await scenario.clock.advance(by: .seconds(2))
    for _ in 0..<5 {
      #expect(try await scenario.call().cacheStatus == .stale)
    }
    try #require(await scenario.clock.waitForSleeper(dueIn: .seconds(10)))
    #expect(scenario.cache.revalidationsInFlight == 1)
    #expect(await scenario.sent == 2)
    await scenario.clock.advance(by: .seconds(10))
    try #require(await scenario.cache.waitForRevalidations())
    #expect(try await scenario.call().cacheStatus == .hit)
    #expect(await scenario.sent == 2)
  }
}
