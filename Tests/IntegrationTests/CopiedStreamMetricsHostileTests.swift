import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// Hostile review of the metrics at a body's end through copies of copies over a real socket: a
/// cache over a recording cassette over each production transport. Each test asserts the
/// documented behaviour, so a failure is a finding.
@Suite(.timeLimit(.minutes(3))) struct CopiedStreamMetricsHostileTests {
  static let body = patternBytes(300_000)

  /// The stream a caller reads is the cache's copy of the cassette's copy of the transport's
  /// body: read to its end, it has the transport's end and every byte; a hit afterwards has no
  /// transfer's metrics.
  @Test(arguments: TransportKind.allCases)
  func aCopyOfACopyEndsWithTheTransportsMetrics(_ transport: TransportKind) async throws {
    let server = try LoopbackServer { _ in
      ScriptedResponse(
        headers: [("Cache-Control", "max-age=600")], body: Self.body, chunkSize: 16_384)
    }
    defer { server.stop() }
    let file = FileManager.default.temporaryDirectory
      .appendingPathComponent("errand-copied-\(UUID().uuidString).json")
    defer { try? FileManager.default.removeItem(at: file) }
    let client = APIClient(
      baseURL: server.baseURL,
      transport: CassetteTransport(url: file, mode: .all, upstream: transport.make()),
      configuration: APIClient.Configuration(middleware: [CachingMiddleware(cache: HTTPCache())]))
    let endpoint = Endpoint<Data>(path: "export", decoding: .data)
    let stream = try await client.stream(endpoint)
    #expect(stream.response.metrics?.responseEnd == nil)
    #expect(try await stream.collect() == Self.body)
    let metrics = try #require(stream.metrics)
    #expect(metrics.responseEnd != nil)
    #expect(metrics.responseBodyBytes == Self.body.count)

    let hit = try await client.stream(endpoint)
    #expect(hit.response.cacheStatus == .hit)
    #expect(try await hit.collect() == Self.body)
    #expect(hit.metrics?.responseEnd == nil, "a hit carries the transfer that stored it")
    #expect(server.requests.count == 1)
  }
}
