import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// RFC 9111's finer points, on a `TestClock`: duplicate and quoted `Cache-Control` directives, a
/// request's own directives, and a `304` that is about another representation.
@Suite(.timeLimit(.minutes(3))) struct CacheDirectivesTests {
  typealias Setup = HTTPCacheTests.Setup
  static let body = HTTPCacheTests.body

  /// The response's `Cache-Control` field lines, and whether it is still fresh 10 s later.
  @Test(arguments: [
    (["max-age=0", "max-age=600"], false),  // §4.2.1: the first of conflicting duplicates
    (["max-age=600", "max-age=0"], true),
    (["max-age=600, max-age=0"], true),
    (["x-ext=\"a, max-age=600\""], false),  // a comma inside quotes splits nothing
    (["max-age=600, x-ext=\"a, no-store, max-age=0\""], true),
    (["max-age=\"600\""], true),
    (["max-age=600, x-ext=\"a \\\" no-cache\""], true),  // an escaped quote keeps the string open
  ])
  func directivesAreReadAsRFC9111Says(fields: [String], fresh: Bool) async throws {
    let setup = Setup()
    var headers: HTTPHeaders = ["ETag": "\"v1\""]
    for field in fields { headers.add("Cache-Control", field) }
    await setup.stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(200, body: Self.body, headers: headers), .status(200, body: Self.body),
      ]))
    _ = try await setup.call()
    await setup.clock.advance(by: .seconds(10))
    let second = try await setup.call()
    #expect(
      (second.cacheStatus == .hit) == fresh, "\(fields): \(String(describing: second.cacheStatus))")
    #expect(await setup.sent == (fresh ? 1 : 2))
  }

  /// A request's own directives (§5.2.1) against an answer fresh for 600 s, stored 100 s ago
  /// (or 700 s ago, 100 s stale): whether the store answers without asking the server.
  @Test(arguments: [
    ("max-age=0", 100, false), ("max-age=50", 100, false), ("max-age=150", 100, true),
    ("min-fresh=550", 100, false), ("min-fresh=400", 100, true),
    ("max-stale=50", 700, false), ("max-stale=150", 700, true), ("max-stale", 700, true),
    ("max-stale=150, must-revalidate-is-not-a-request-directive", 700, true),
  ])
  func aRequestsOwnDirectivesAreHonoured(
    directive: String, storedFor seconds: Int, answered: Bool
  ) async throws {
    let setup = Setup()
    await setup.stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(200, body: Self.body, headers: ["Cache-Control": "max-age=600"]),
        .status(200, body: Data("[\"Fido\"]".utf8)),
      ]))
    _ = try await setup.call()
    await setup.clock.advance(by: .seconds(seconds))
    var endpoint = HTTPCacheTests.endpoint
    endpoint.headers["Cache-Control"] = directive
    let second = try await setup.call(endpoint)
    #expect(await setup.sent == (answered ? 1 : 2), "\(directive)")
    #expect((second.body == Self.body) == answered)
  }

  /// A stale answer the server said to revalidate is never served past its freshness, however
  /// much staleness the request accepts; `only-if-cached` then gets a `504`.
  @Test(arguments: ["max-stale=1000", "only-if-cached", "only-if-cached, max-stale"])
  func mustRevalidateIsNeverServedStale(directive: String) async throws {
    let setup = Setup()
    await setup.stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(200, body: Self.body, headers: ["Cache-Control": "max-age=60, must-revalidate"]),
        .status(200, body: Data("[\"Fido\"]".utf8)),
      ]))
    _ = try await setup.call()
    await setup.clock.advance(by: .seconds(61))
    var endpoint = HTTPCacheTests.endpoint
    endpoint.headers["Cache-Control"] = directive
    endpoint.acceptableStatusCodes = 200..<600
    let second = try await setup.call(endpoint)
    if directive.hasPrefix("only-if-cached") {
      #expect(second.status == 504)
      #expect(await setup.sent == 1)
    } else {
      #expect(second.body == Data("[\"Fido\"]".utf8))
      #expect(await setup.sent == 2)
    }
  }

  /// §4.3.4: a `304` selects the stored response only when its validator matches (strongly when
  /// both are strong); otherwise nothing is updated and the request goes out again without
  /// conditions.
  @Test(
    arguments: [
      ("\"v1\"", "\"v1\"", true), ("\"v1\"", "\"v2\"", false), ("W/\"v1\"", "W/\"v1\"", true),
      ("W/\"v1\"", "\"v1\"", true), ("\"v1\"", "W/\"v2\"", false), ("\"v1\"", nil, true),
    ] as [(String, String?, Bool)])
  func a304UpdatesOnlyTheResponseItIsAbout(
    stored: String, notModified: String?, selected: Bool
  ) async throws {
    let setup = Setup()
    await setup.stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(200, body: Self.body, headers: ["ETag": stored, "Cache-Control": "max-age=0"]),
        .status(304, headers: notModified.map { ["ETag": $0] } ?? [:]),
        .status(200, body: Data("[\"Fido\"]".utf8), headers: ["ETag": "\"v2\""]),
      ]))
    _ = try await setup.call()
    await setup.clock.advance(by: .seconds(1))
    let second = try await setup.call()
    let sent = await setup.stub.requests
    if selected {
      #expect(second.cacheStatus == .revalidated)
      #expect(second.body == Self.body)
      #expect(sent.count == 2)
    } else {
      #expect(second.cacheStatus == .miss)
      #expect(second.body == Data("[\"Fido\"]".utf8))
      #expect(sent.count == 3)
      #expect(sent.last?.headers["If-None-Match"] == nil)
    }
  }
}
