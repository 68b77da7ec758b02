import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

/// Hostile review of the metrics a body ends with (`HTTPBody.metrics`, `ResponseStream.metrics`,
/// a buffered call's response): through stubs, the cache's copies and a cassette's. Each test
/// asserts what the documentation promises, so a failure is a finding.
@Suite(.timeLimit(.minutes(3))) struct BodyEndMetricsHostileTests {
  static let base = url("https://api.example.com/v1/")
  static let chunks = [Data("one".utf8), Data("two".utf8), Data("three".utf8)]

  /// A stub whose `GET /v1/feed` streams ``chunks`` at once, with the given metrics.
  static func feed(_ metrics: TransferMetrics = TransferMetrics()) async -> StubTransport {
    let stub = StubTransport()
    await stub.on(.get, "/v1/feed", StubResponse.chunks(chunks).withMetrics(metrics))
    return stub
  }

  /// A streamed call whose body has been written to its end by the stub, none of it read yet.
  static func endedStream(_ stub: StubTransport) async throws -> ResponseStream {
    let client = APIClient(baseURL: base, transport: stub)
    let stream = try await client.stream(Endpoint<Data>(path: "feed", decoding: .data))
    #expect(await eventually { stream.body.buffer.isStopped }, "the stub wrote the whole body")
    return stream
  }

  // MARK: What a reader that has not read to the end sees

  /// Until the body has been read to its end, a stream's metrics are the head's (its
  /// documentation), even when the transport has already finished writing.
  @Test func aStreamNotReadToItsEndHasTheHeadsMetrics() async throws {
    let stream = try await Self.endedStream(await Self.feed())
    var chunks = stream.makeAsyncIterator()
    #expect(try await chunks.next() == Self.chunks[0])
    #expect(stream.metrics == stream.response.metrics)
    #expect(stream.metrics?.responseEnd == nil, "an end the reader has not reached")
    #expect(stream.body.metrics == nil)
  }

  /// A reader that stops early (cancels) never sees the whole transfer's metrics: it did not
  /// get the whole body.
  @Test func aCancelledStreamHasNoMetricsOfTheEnd() async throws {
    let stream = try await Self.endedStream(await Self.feed())
    var chunks = stream.makeAsyncIterator()
    _ = try await chunks.next()
    stream.cancel()
    #expect(stream.body.metrics == nil, "metrics of a cancelled body")
    #expect(stream.metrics?.responseEnd == nil)
    #expect(stream.metrics?.responseBodyBytes == stream.response.metrics?.responseBodyBytes)
  }

  /// Read to its end, a stream keeps the whole transfer's metrics after its loop is over (the
  /// iterator's end cancels the body, harmlessly).
  @Test func aStreamReadToItsEndKeepsItsMetricsAfterTheLoop() async throws {
    let stream = try await Self.endedStream(await Self.feed())
    var read = Data()
    for try await chunk in stream {
      read.append(chunk)
    }
    #expect(read == Data("onetwothree".utf8))
    let metrics = try #require(stream.metrics)
    #expect(metrics.responseEnd != nil)
    #expect(metrics.responseBodyBytes == 11)
    #expect(stream.body.metrics != nil)
  }

  /// A body that fails after some chunks has no metrics of an end; its end event is a failure.
  @Test func aFailedStreamHasNoMetricsOfTheEnd() async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/feed",
      StubResponse.chunks(Self.chunks, failingWith: URLError(.networkConnectionLost)))
    let client = APIClient(baseURL: Self.base, transport: stub)
    let stream = try await client.stream(Endpoint<Data>(path: "feed", decoding: .data))
    let error = await #expect(throws: APIError.self) { _ = try await stream.collect() }
    #expect((error?.underlyingError as? URLError)?.code == .networkConnectionLost)
    #expect(stream.body.metrics == nil)
    #expect(stream.metrics?.responseEnd == nil)
  }

  // MARK: Buffered calls whose body a middleware reads first

  /// A middleware that collects the body (`collectingBody`, as the docs tell one that needs the
  /// whole body) of a streamed call: the stream, read to its end, still has the whole
  /// transfer's metrics, as it would without the middleware.
  @Test func aBodyAMiddlewareCollectedKeepsTheMetricsOfItsEnd() async throws {
    struct Collecting: Middleware {
      func intercept(
        _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
      ) async throws -> HTTPResponse {
        try await next(request).collectingBody()
      }
    }
    let client = APIClient(
      baseURL: Self.base, transport: await Self.feed(),
      configuration: APIClient.Configuration(middleware: [Collecting()]))
    let stream = try await client.stream(Endpoint<Data>(path: "feed", decoding: .data))
    #expect(try await stream.collect() == Data("onetwothree".utf8))
    let metrics = try #require(stream.metrics)
    #expect(metrics.responseEnd != nil, "the end of a body read by a middleware is lost")
    #expect(metrics.responseBodyBytes == 11)
  }

  /// A stale answer with `stale-if-error` is revalidated by a streamed call and the server
  /// answers anew: the cache reads the new body ahead (to stand in should it be cut), and the
  /// stream, read to its end, still has the whole transfer's metrics, as it would without the
  /// cache.
  @Test func aRevalidationReadAheadKeepsTheMetricsOfItsEnd() async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/feed",
      StubResponse.sequence([
        .status(
          200, body: Data("old".utf8),
          headers: ["Cache-Control": "max-age=0, stale-if-error=600", "ETag": "\"1\""]),
        .chunks(Self.chunks, headers: ["Cache-Control": "max-age=0", "ETag": "\"2\""]),
      ]))
    let client = APIClient(
      baseURL: Self.base, transport: stub,
      configuration: APIClient.Configuration(middleware: [CachingMiddleware(cache: HTTPCache())]))
    let endpoint = Endpoint<Data>(path: "feed", decoding: .data)
    _ = try await client.send(endpoint)
    let second = try await client.stream(endpoint)
    #expect(try await second.collect() == Data("onetwothree".utf8))
    #expect(await stub.requests.count == 2)
    #expect(second.response.cacheStatus == .miss)
    let metrics = try #require(second.metrics)
    #expect(metrics.responseEnd != nil, "the end of a body the cache read ahead is lost")
    #expect(metrics.responseBodyBytes == 11)
  }

  // MARK: Copies of copies, and answers from the cache

  /// A cache over a recording cassette over a stub: the stream the caller reads is a copy of a
  /// copy, and still ends with the stub's metrics; the cache's hit afterwards carries none (it
  /// made no transfer), not the earlier call's.
  @Test func copiesOfCopiesEndWithTheTransfersMetricsAndAHitWithNone() async throws {
    var given = TransferMetrics()
    given.protocolName = "h2"
    given.remoteAddress = "203.0.113.9"
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/feed",
      StubResponse.chunks(Self.chunks, headers: ["Cache-Control": "max-age=600"]).withMetrics(
        given))
    let file = FileManager.default.temporaryDirectory
      .appendingPathComponent("errand-copies-\(UUID().uuidString).json")
    defer { try? FileManager.default.removeItem(at: file) }
    let client = APIClient(
      baseURL: Self.base, transport: CassetteTransport(url: file, mode: .all, upstream: stub),
      configuration: APIClient.Configuration(middleware: [CachingMiddleware(cache: HTTPCache())]))
    let endpoint = Endpoint<Data>(path: "feed", decoding: .data)
    let stream = try await client.stream(endpoint)
    #expect(try await stream.collect() == Data("onetwothree".utf8))
    let metrics = try #require(stream.metrics)
    #expect(metrics.protocolName == "h2")
    #expect(metrics.responseEnd != nil)
    #expect(metrics.responseBodyBytes == 11)

    let hit = try await client.stream(endpoint)
    #expect(hit.response.cacheStatus == .hit)
    #expect(try await hit.collect() == Data("onetwothree".utf8))
    #expect(hit.metrics?.protocolName == nil, "a hit carries the earlier transfer's metrics")
    #expect(hit.metrics?.remoteAddress == nil)
    let buffered = try await client.response(for: endpoint).response
    #expect(buffered.cacheStatus == .hit)
    #expect(buffered.metrics?.remoteAddress == nil)
  }

  /// A hit from disk (a new cache on the folder) carries no metrics of the transfer that stored
  /// it either.
  @Test func aHitFromDiskCarriesNoEarlierMetrics() async throws {
    var given = TransferMetrics()
    given.remoteAddress = "203.0.113.9"
    try await DiskCacheFiles.withFolder { folder in
      let stub = StubTransport()
      await stub.on(
        .get, "/v1/dogs",
        StubResponse.status(200, body: Data("[]".utf8), headers: ["Cache-Control": "max-age=600"])
          .withMetrics(given))
      let endpoint = Endpoint<Data>(path: "dogs", decoding: .data)
      let first = try await DiskCacheFiles.client(HTTPCache(directory: folder), stub)
        .response(for: endpoint).response
      #expect(first.metrics?.remoteAddress == "203.0.113.9")
      let hit = try await DiskCacheFiles.client(HTTPCache(directory: folder), stub)
        .response(for: endpoint).response
      #expect(hit.cacheStatus == .hit)
      #expect(hit.metrics?.remoteAddress == nil)
    }
  }
}
