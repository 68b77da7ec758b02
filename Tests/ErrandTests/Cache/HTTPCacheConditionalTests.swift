import Errand
import ErrandTesting
import Foundation
import Testing

/// RFC 9111 §4.3.2: the caller's own conditional requests, answered by the cache from a fresh
/// stored response, and passed on (updating what is stored) when it has none.
@Suite(.timeLimit(.minutes(3))) struct HTTPCacheConditionalTests {
  static let body = Data("[\"Rex\"]".utf8)
  static let modified = "Mon, 30 Nov 2026 10:00:00 GMT"

  /// A fresh stored response answers the caller's `If-None-Match` and `If-Modified-Since`:
  /// `304` when it matches (with the stored `ETag`, `Cache-Control` and `Date`, no body),
  /// the stored `200` when it does not; nothing is sent. `If-None-Match` wins over
  /// `If-Modified-Since`.
  @Test(
    arguments: [
      ("If-None-Match, the same tag", ["If-None-Match": "\"v1\""], 304),
      ("If-None-Match, a weak match", ["If-None-Match": "W/\"v1\""], 304),
      ("If-None-Match, one of a list", ["If-None-Match": "\"v0\", \"v1\""], 304),
      ("If-None-Match: *", ["If-None-Match": "*"], 304),
      ("If-None-Match, another tag", ["If-None-Match": "\"v2\""], 200),
      ("If-Modified-Since, the same date", ["If-Modified-Since": modified], 304),
      ("If-Modified-Since, later", ["If-Modified-Since": "Tue, 01 Dec 2026 10:00:00 GMT"], 304),
      ("If-Modified-Since, earlier", ["If-Modified-Since": "Sun, 29 Nov 2026 10:00:00 GMT"], 200),
      ("If-Modified-Since, not a date", ["If-Modified-Since": "yesterday"], 200),
      (
        "If-None-Match wins", ["If-None-Match": "\"v2\"", "If-Modified-Since": modified], 200
      ),
    ] as [(String, HTTPHeaders, Int)])
  func aFreshStoredResponseAnswersTheCallersConditionalRequest(
    _ what: String, _ conditional: HTTPHeaders, _ status: Int
  ) async throws {
    let scenario = CacheScenario()
    await scenario.stub.on(
      .get, "/v1/dogs",
      .status(
        200, body: Self.body,
        headers: [
          "Cache-Control": "max-age=60", "ETag": "\"v1\"", "Last-Modified": Self.modified,
          "Content-Type": "application/json",
        ]))
    _ = try await scenario.call()
    let answer = try await scenario.call(headers: conditional)
    #expect(answer.status == status)
    #expect(answer.cacheStatus == .hit)
    #expect(await scenario.sent == 1)
    if status == 304 {
      #expect(answer.body.isEmpty)
      #expect(answer.headers["ETag"] == "\"v1\"")
      #expect(answer.headers["Cache-Control"] == "max-age=60")
      #expect(answer.headers["Content-Type"] == nil)
    } else {
      #expect(answer.body == Self.body)
    }
  }

  /// Without a fresh stored response the caller's conditional request goes to the server as the
  /// caller wrote it; a `304` that confirms the stored response refreshes it, and reaches the
  /// caller as a `304`.
  @Test func aStaleStoredResponseIsRefreshedByTheCallersOwnValidation() async throws {
    let scenario = CacheScenario()
    await scenario.stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(200, body: Self.body, headers: ["Cache-Control": "max-age=1", "ETag": "\"v1\""]),
        .status(304, headers: ["Cache-Control": "max-age=60", "ETag": "\"v1\""]),
      ]))
    _ = try await scenario.call()
    await scenario.clock.advance(by: .seconds(2))
    let answer = try await scenario.call(headers: ["If-None-Match": "\"v1\""])
    #expect(answer.status == 304)
    let sent = await scenario.stub.requests
    #expect(sent.count == 2)
    #expect(sent.last?.headers["If-None-Match"] == "\"v1\"")
    let hit = try await scenario.call()
    #expect(hit.cacheStatus == .hit)
    #expect(hit.body == Self.body)
    #expect(hit.headers["Cache-Control"] == "max-age=60")
  }
}
