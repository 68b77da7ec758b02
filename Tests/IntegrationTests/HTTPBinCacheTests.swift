import Errand
import Foundation
import TestSupport
import Testing

/// The cache against httpbin's caching routes, through every transport: what httpbin marks
/// fresh is a hit the second time; what it only validates comes back revalidated by a `304`.
@Suite(
  .timeLimit(.minutes(3)),
  .enabled(if: HTTPBin.url != nil, "set HTTPBIN_URL to an httpbin server, as .ci/run does"))
struct HTTPBinCacheTests {
  @Test(
    arguments: [
      ("cache/60", CacheStatus.hit),  // Cache-Control: public, max-age=60
      ("response-headers", .hit),  // ?Cache-Control=max-age=60: the header echoed back
      ("etag/v1", .revalidated),  // ETag only: revalidated with If-None-Match
      ("cache", .revalidated),  // Last-Modified and ETag; 304 to either condition
    ], TransportKind.allCases)
  func theSecondCallIsAnsweredAsHTTPBinAllows(
    _ route: (path: String, second: CacheStatus), _ transport: TransportKind
  ) async throws {
    let base = try #require(HTTPBin.url)
    let client = transport.client(
      base,
      configuration: APIClient.Configuration(middleware: [CachingMiddleware(cache: HTTPCache())]))
    var endpoint = Endpoint<Data>(path: route.path, decoding: .data)
    if route.path == "response-headers" {
      endpoint.query = [URLQueryItem(name: "Cache-Control", value: "max-age=60")]
    }
    let first = try await client.response(for: endpoint).response
    #expect(first.cacheStatus == .miss)
    let second = try await client.response(for: endpoint).response
    #expect(second.cacheStatus == route.second)
    #expect(second.status == 200)
    #expect(second.body == first.body)
  }
}
