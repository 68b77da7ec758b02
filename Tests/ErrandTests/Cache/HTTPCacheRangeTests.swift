import Errand
import ErrandTesting
import Foundation
import Testing

/// Partial content (RFC 9110 §14, RFC 9111 §3.3–3.4): a `206` is never stored, so never served
/// for a whole-body request; a `Range` request is answered from a fresh stored whole body with a
/// correct `206` when it asks for one satisfiable byte range, and passed to the server otherwise.
@Suite(.timeLimit(.minutes(3))) struct HTTPCacheRangeTests {
  static let body = Data("0123456789".utf8)

  /// A `206` is not stored: the whole-body request that follows goes to the network and gets the
  /// whole body.
  @Test func aPartialAnswerIsNeverStoredNorServedForAWholeRequest() async throws {
    let scenario = CacheScenario()
    await scenario.stub.on(
      .get, "/v1/dogs",
      .handler { request, _ in
        guard request.headers["Range"] != nil else {
          return .status(200, body: Self.body, headers: ["Cache-Control": "max-age=60"])
        }
        return .status(
          206, body: Data("01234".utf8),
          headers: ["Cache-Control": "max-age=60", "Content-Range": "bytes 0-4/10"])
      })
    let partial = try await scenario.call(headers: ["Range": "bytes=0-4"])
    #expect(partial.status == 206)
    #expect(scenario.cache.count == 0)
    let whole = try await scenario.call()
    #expect(whole.status == 200)
    #expect(whole.body == Self.body)
    #expect(whole.cacheStatus == .miss)
  }

  /// One satisfiable byte range of a fresh stored whole body is answered by the cache: a `206`
  /// with that slice, its `Content-Range` and `Content-Length`, nothing sent.
  @Test(arguments: [
    ("bytes=0-1", "01", "bytes 0-1/10"), ("bytes=1-", "123456789", "bytes 1-9/10"),
    ("bytes=-1", "9", "bytes 9-9/10"), ("bytes=5-100", "56789", "bytes 5-9/10"),
    ("bytes=-100", "0123456789", "bytes 0-9/10"), ("Bytes=2-3", "23", "bytes 2-3/10"),
  ])
  func aByteRangeOfAFreshStoredBodyIsServedAsA206(
    _ range: String, _ slice: String, _ contentRange: String
  ) async throws {
    let scenario = CacheScenario()
    await scenario.stub.on(
      .get, "/v1/dogs",
      .status(
        200, body: Self.body,
        headers: ["Cache-Control": "max-age=60", "Content-Length": "10", "A": "1"]))
    _ = try await scenario.call()
    let partial = try await scenario.call(headers: ["Range": range])
    #expect(partial.status == 206)
    #expect(partial.cacheStatus == .hit)
    #expect(partial.body == Data(slice.utf8))
    #expect(partial.headers["Content-Range"] == contentRange)
    #expect(partial.headers["Content-Length"] == "\(slice.utf8.count)")
    #expect(partial.headers["A"] == "1")
    #expect(await scenario.sent == 1)
  }

  /// What the cache does not answer goes to the server as it is, and its answer is not stored
  /// in place of the whole body: several ranges, a range past the end, another unit, `If-Range`,
  /// a malformed range.
  @Test(arguments: [
    "bytes=0-1, 4-5", "bytes=10-", "bytes=-0", "items=0-1", "bytes=5-2", "bytes=a-b",
    "bytes=99999999999999999999999-", "bytes = 2 - 3",
  ])
  func otherRangeRequestsGoToTheServer(_ range: String) async throws {
    let scenario = CacheScenario()
    await scenario.stub.on(
      .get, "/v1/dogs",
      .handler { request, _ in
        guard request.headers["Range"] != nil else {
          return .status(200, body: Self.body, headers: ["Cache-Control": "max-age=60"])
        }
        return .status(416, headers: ["Content-Range": "bytes */10"])
      })
    _ = try await scenario.call()
    let answer = try await scenario.call(headers: ["Range": range])
    #expect(answer.status == 416)
    let sent = await scenario.stub.requests
    #expect(sent.count == 2)
    #expect(sent.last?.headers["Range"] == range)
    #expect(try await scenario.call().cacheStatus == .hit)
  }

  /// `If-Range` goes to the server with its range.
  @Test func ifRangeGoesToTheServer() async throws {
    let scenario = CacheScenario()
    await scenario.stub.on(
      .get, "/v1/dogs",
      .handler { request, _ in
        guard request.headers["Range"] != nil else {
          return .status(
            200, body: Self.body, headers: ["Cache-Control": "max-age=60", "ETag": "\"v1\""])
        }
        return .status(
          206, body: Data("01".utf8), headers: ["Content-Range": "bytes 0-1/10", "ETag": "\"v1\""])
      })
    _ = try await scenario.call()
    let answer = try await scenario.call(headers: ["Range": "bytes=0-1", "If-Range": "\"v1\""])
    #expect(answer.status == 206)
    #expect(await scenario.sent == 2)
  }
}
