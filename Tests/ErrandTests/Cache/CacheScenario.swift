import Errand
import ErrandTesting
import Foundation
import TestSupport

/// A client with a `CachingMiddleware` over a `StubTransport`, on a `TestClock` whose time is
/// also the cache's wall clock (from 1 January 2026): for the cache's RFC 9111 tests.
struct CacheScenario {
  let clock = TestClock()
  let stub: StubTransport
  let cache: HTTPCache
  let client: APIClient

  /// - Parameter makeCache: Makes the cache, given the wall clock the scenario's dates are on.
  init(makeCache: (CacheTestWallClock) -> HTTPCache = { _ in HTTPCache() }) {
    stub = StubTransport(clock: clock)
    cache = makeCache(CacheTestWallClock(clock: clock))
    client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        timeout: nil, acceptableStatusCodes: 0..<1000,
        middleware: [CachingMiddleware(cache: cache)], clock: clock))
  }

  /// The scenario's now as an HTTP date, `seconds` from now.
  func date(_ seconds: Int = 0) -> String {
    CacheTestDate.string(
      CacheTestWallClock(clock: clock).milliseconds + Int64(seconds) * 1000, format: .imfFixdate)
  }

  /// `GET /v1/dogs` (or `path`) with `headers`.
  func call(_ path: String = "dogs", headers: HTTPHeaders = [:]) async throws -> HTTPResponse {
    try await client.response(
      for: Endpoint<Data>(path: path, headers: headers, decoding: .data)
    ).response
  }

  /// How many requests reached the network.
  var sent: Int {
    get async { await stub.requests.count }
  }
}
