import Errand
import ErrandTesting
import Foundation
import Testing

/// RFC 9111 §3 and §4.2: what the cache stores, of which response, and for how long.
@Suite(.timeLimit(.minutes(3))) struct HTTPCacheStorageTests {
  static let body = Data("[\"Rex\"]".utf8)

  /// An `Expires` that is not exactly an HTTP date means already expired (§5.3): none of these
  /// far-future lookalikes makes the answer reusable.
  @Test(arguments: [
    ["Thu, 18 Aug 2050 02:01:18 UTC"], ["Thu, 18 Aug 2050 02:01:18 AEST"],
    ["Thu, 18 Aug 50 02:01:18 GMT"], ["Thu 18 Aug 2050 02:01:18 GMT"],
    ["Thu, 18  Aug  2050 02:01:18 GMT"], ["Thu, 18-Aug-2050 02:01:18 GMT"],
    ["Thu, 18 Aug 2050 02.01.18 GMT"], ["Thu, 18 Aug 2050 2:01:18 GMT"],
    ["Thu, 18 Aug 2050 02:01:18 GMT", "Thu, 18 Aug 2050 02:01:19 GMT"], ["0"],
  ])
  func anExpiresThatIsNotADateMeansExpired(_ expires: [String]) async throws {
    let scenario = CacheScenario()
    var headers: HTTPHeaders = ["Date": scenario.date()]
    for value in expires {
      headers.add("Expires", value)
    }
    await scenario.stub.on(.get, "/v1/dogs", .status(200, body: Self.body, headers: headers))
    _ = try await scenario.call()
    #expect(try await scenario.call().cacheStatus == .miss)
    #expect(await scenario.sent == 2)
  }

  /// A well-formed `Expires`, in any of the three formats, does make it reusable.
  @Test(arguments: [
    "Thu, 18 Aug 2050 02:01:18 GMT", "Thursday, 18-Aug-50 02:01:18 GMT", "Thu Aug 18 02:01:18 2050",
  ])
  func anExpiresInTheFutureMakesItReusable(_ expires: String) async throws {
    let scenario = CacheScenario()
    await scenario.stub.on(
      .get, "/v1/dogs",
      .status(200, body: Self.body, headers: ["Date": scenario.date(), "Expires": expires]))
    _ = try await scenario.call()
    #expect(try await scenario.call().cacheStatus == .hit)
  }

  /// The hop-by-hop headers, those `Connection` names and the proxy's own (§3.1) are not stored:
  /// the caller who got the answer from the network sees them, a hit does not.
  @Test func hopByHopHeadersAreNotStored() async throws {
    let scenario = CacheScenario()
    let hopByHop: HTTPHeaders = [
      "Connection": "x-a, X-B", "X-A": "1", "x-b": "2", "Keep-Alive": "timeout=5",
      "Proxy-Authenticate": "Basic", "Proxy-Authentication-Info": "a", "Proxy-Authorization": "b",
      "Proxy-Connection": "close", "TE": "trailers", "Transfer-Encoding": "chunked",
      "Upgrade": "h2c",
    ]
    var headers: HTTPHeaders = ["Cache-Control": "max-age=60", "X-C": "3"]
    headers.merge(hopByHop)
    await scenario.stub.on(.get, "/v1/dogs", .status(200, body: Self.body, headers: headers))
    let miss = try await scenario.call()
    #expect(miss.headers["X-A"] == "1")
    let hit = try await scenario.call()
    #expect(hit.cacheStatus == .hit)
    #expect(hit.headers["X-C"] == "3")
    for field in hopByHop.fields {
      #expect(hit.headers[field.name] == nil, "\(field.name) was stored")
    }
  }

  /// A `304` that names hop-by-hop headers does not put them into what is stored either.
  @Test func aNotModifiedAnswerDoesNotStoreHopByHopHeaders() async throws {
    let scenario = CacheScenario()
    await scenario.stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(200, body: Self.body, headers: ["Cache-Control": "max-age=1", "ETag": "\"v1\""]),
        .status(
          304,
          headers: [
            "Cache-Control": "max-age=60", "ETag": "\"v1\"", "Connection": "x-a", "X-A": "1",
            "Keep-Alive": "timeout=5",
          ]),
      ]))
    _ = try await scenario.call()
    await scenario.clock.advance(by: .seconds(2))
    #expect(try await scenario.call().cacheStatus == .revalidated)
    let hit = try await scenario.call()
    #expect(hit.cacheStatus == .hit)
    #expect(hit.headers["X-A"] == nil)
    #expect(hit.headers["Keep-Alive"] == nil)
    #expect(hit.headers["Connection"] == nil)
  }

  /// Any final status with explicit freshness is stored (§3): a `302`, a `404`, a `503` with
  /// `max-age` answer again from the cache.
  @Test(arguments: [200, 203, 204, 299, 301, 302, 303, 307, 308, 400, 404, 410, 499, 500, 503, 599])
  func anyStatusWithExplicitFreshnessIsStored(_ status: Int) async throws {
    let scenario = CacheScenario()
    await scenario.stub.on(
      .get, "/v1/dogs",
      .status(status, body: Self.body, headers: ["Cache-Control": "max-age=60", "Location": "/v1"]))
    _ = try await scenario.call()
    let again = try await scenario.call()
    #expect(again.cacheStatus == .hit)
    #expect(again.status == status)
    #expect(await scenario.sent == 1)
  }

  /// Heuristic freshness is for RFC 9110 §15.1's heuristically cacheable statuses only: with
  /// `Last-Modified` alone, a `404` is reused and a `403` or `502` is not even stored.
  @Test(arguments: [
    (200, true), (203, true), (204, true), (300, true), (301, true), (308, true), (404, true),
    (405, true), (410, true), (414, true), (501, true), (201, false), (202, false), (302, false),
    (403, false), (500, false), (502, false), (503, false), (504, false), (599, false),
  ])
  func heuristicFreshnessIsForTheHeuristicallyCacheableStatuses(_ status: Int, _ reused: Bool)
    async throws
  {
    let scenario = CacheScenario { wallClock in
      HTTPCache(heuristicFreshness: 0.1, now: { wallClock.date })
    }
    await scenario.stub.on(
      .get, "/v1/dogs",
      .status(
        status, body: Self.body,
        headers: ["Date": scenario.date(), "Last-Modified": scenario.date(-86_400)]))
    _ = try await scenario.call()
    #expect(try await scenario.call().cacheStatus == (reused ? .hit : .miss))
    #expect(scenario.cache.count == (reused ? 1 : 0))
  }

  /// `Cache-Control: public` makes any final status heuristically cacheable (§4.2.2).
  @Test func publicMakesAnyStatusHeuristicallyCacheable() async throws {
    let scenario = CacheScenario { wallClock in
      HTTPCache(heuristicFreshness: 0.1, now: { wallClock.date })
    }
    await scenario.stub.on(
      .get, "/v1/dogs",
      .status(
        599, body: Self.body,
        headers: [
          "Cache-Control": "public", "Date": scenario.date(),
          "Last-Modified": scenario.date(-86_400),
        ]))
    _ = try await scenario.call()
    #expect(try await scenario.call().cacheStatus == .hit)
  }
}
