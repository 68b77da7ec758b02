import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

/// The `RateLimit` field as draft-ietf-httpapi-ratelimit-headers (the working group's latest
/// text) defines it, against the client's reading of it: the draft's own examples, then what a
/// hostile or careless server sends (signs, trailing commas, invalid members, cached answers).
@Suite(.timeLimit(.minutes(3))) struct RateLimitDraftHostileTests {
  /// One response's fields, and the policies the client reads from them: name, remaining, and
  /// the window's end in seconds (`nil` when none is named).
  struct Case: CustomTestStringConvertible, Sendable {
    let name: String
    let fields: [(String, String)]
    let policies: [(String, Int, Int?)]
    var testDescription: String { name }
  }

  static let cases: [Case] = [
    // §4 and §4.2 ("RateLimit Field Examples").
    Case(
      name: "§4 remaining 50, reset in 30 s", fields: [("RateLimit", "\"default\";r=50;t=30")],
      policies: [("default", 50, 30)]),
    // §4.2: `t` is optional; a partition key is a byte sequence.
    Case(
      name: "§4.2 no reset, partition key",
      fields: [("RateLimit", "\"default\";r=999;pk=:dHJpYWwxMjEzMjM=:")],
      policies: [("default", 999, nil)]),
    Case(
      name: "§4.2 300 MB in 60 s",
      fields: [("RateLimit", "\"default\";r=300000000;t=60;pk=:QXBwLTk5OQ==:")],
      policies: [("default", 300_000_000, 60)]),
    // §7 ("Client Behavior").
    Case(
      name: "§7 one left in 7 s", fields: [("RateLimit", "\"default\";r=1;t=7")],
      policies: [("default", 1, 7)]),
    // Appendix "Examples": throttling, several policies, concurrency, windows.
    Case(
      name: "A none left for 50 s", fields: [("RateLimit", "\"default\";r=0;t=50")],
      policies: [("default", 0, 50)]),
    Case(
      name: "A day limit", fields: [("RateLimit", "\"dayLimit\";r=100;t=36000")],
      policies: [("dayLimit", 100, 36000)]),
    Case(
      name: "A basic policy with its RateLimit-Policy",
      fields: [("RateLimit-Policy", "\"basic\";q=100;w=60"), ("RateLimit", "\"basic\";r=20;t=56")],
      policies: [("basic", 20, 56)]),
    Case(
      name: "A throttled with Retry-After",
      fields: [("Retry-After", "20"), ("RateLimit", "\"dynamic\";r=15;t=40")],
      policies: [("dynamic", 15, 40)]),
    // Appendix "Missing Remaining information": `r` is required (§4.1), so the item is
    // ignored.
    Case(name: "A no remaining", fields: [("RateLimit", "quota;t=1")], policies: []),
    Case(
      name: "A several windows",
      fields: [
        ("RateLimit-Policy", "\"hour\";q=1000;w=3600, \"day\";q=5000;w=86400"),
        ("RateLimit", "\"day\";r=100;t=36000"),
      ],
      policies: [("day", 100, 36000)]),
    // §4: several policies, each counts; a list may be split over field lines (RFC 9651,
    // §3.1); a token may name the policy.
    Case(
      name: "several policies",
      fields: [("RateLimit", "\"hour\";r=40;t=1200, \"burst\";r=0;t=30")],
      policies: [("hour", 40, 1200), ("burst", 0, 30)]),
    Case(
      name: "over two lines",
      fields: [("RateLimit", "\"a\";r=1;t=10"), ("RateLimit", "b;r=0;t=60")],
      policies: [("a", 1, 10), ("b", 0, 60)]),
    Case(
      name: "unknown parameters are comments",
      fields: [("RateLimit", "\"a\";r=3;t=9;acme-burst=5;x")], policies: [("a", 3, 9)]),
    // Invalid members are ignored alone (§4.1: `r` a non-negative Integer, `t` too).
    Case(
      name: "invalid members ignored alone",
      fields: [
        ("RateLimit", "\"neg\";r=-1;t=5, \"dec\";r=1.5;t=5, \"t\";r=1;t=-2, \"ok\";r=2;t=5")
      ],
      policies: [("ok", 2, 5)]),
    Case(
      name: "an inner list is no service limit",
      fields: [("RateLimit", "(\"a\" \"b\");r=0;t=5, \"ok\";r=2;t=5")],
      policies: [("ok", 2, 5)]),
    // A field that is no Structured Field List is ignored whole (§7, "Malformed RateLimit
    // header fields MUST be ignored"; RFC 9651, §4.2).
    Case(name: "a plus sign", fields: [("RateLimit", "\"a\";r=+5;t=5")], policies: []),
    Case(name: "a trailing comma", fields: [("RateLimit", "\"a\";r=0;t=5,")], policies: []),
    Case(
      name: "sixteen digits",
      fields: [("RateLimit", "\"a\";r=0;t=1234567890123456, \"b\";r=0;t=5")], policies: []),
    Case(name: "an unclosed string", fields: [("RateLimit", "\"a;r=0;t=5")], policies: []),
    Case(
      name: "a space before a parameter", fields: [("RateLimit", "\"a\" ;r=0;t=5")], policies: []),
    Case(name: "an upper-case key", fields: [("RateLimit", "\"a\";R=0;T=5")], policies: []),
    // §7 ("Caching"): a response with a positive current age says nothing current.
    Case(
      name: "from a cache", fields: [("Age", "12"), ("RateLimit", "\"a\";r=0;t=5")],
      policies: []),
    // The older drafts' fields, with delta-seconds: no sign.
    Case(
      name: "older fields",
      fields: [("RateLimit-Remaining", "0"), ("RateLimit-Reset", "30")], policies: [("", 0, 30)]),
    Case(
      name: "older fields with a sign",
      fields: [("RateLimit-Remaining", "+0"), ("RateLimit-Reset", "30")], policies: []),
  ]

  @Test(arguments: cases)
  func theClientReadsTheFieldAsTheDraftSays(_ example: Case) {
    let headers = HTTPHeaders(example.fields.map { HTTPHeaders.Field(name: $0.0, value: $0.1) })
    let read = ServerRateLimit.policies(headers)
    let expected = example.policies.map {
      ServerRateLimit(policy: $0.0, remaining: $0.1, reset: $0.2.map { .seconds($0) })
    }
    #expect(read == expected)
  }

  /// Several policies: each holds the host until its own window ends. Out of quota for 10 s on
  /// one policy and for 60 s on another, a call waits the 60 s (before the fix, the first
  /// listed with the least remaining counted alone, and the call went at 10 s).
  @Test func everyPolicyHoldsTheHostUntilItsWindowEnds() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(
      .get, "/v1/first", .status(200, headers: ["RateLimit": "\"a\";r=0;t=10, \"b\";r=0;t=60"]))
    await stub.on(.get, "/v1/later", .json(["ok"]))
    let client = CallRateLimitTests.client(stub, clock: clock)
    _ = try await CallRateLimitTests.get(client, "first").value
    let later = CallRateLimitTests.get(client, "later")
    defer { later.cancel() }
    try #require(await clock.waitForSleeper(dueIn: .seconds(60)), "held until the later window")
    await clock.advance(by: .seconds(60))
    #expect(try await later.value.status == 200)
    #expect(await stub.requests.count == 2)
  }
}
