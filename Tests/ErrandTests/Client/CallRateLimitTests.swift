import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

/// A server's `Retry-After` and `RateLimit` fields hold its host back for every call, and the
/// client's own rate spaces calls out, on the client's clock; a wait past a call's deadline
/// fails it at once, saying why.
@Suite(.timeLimit(.minutes(3))) struct CallRateLimitTests: LimitedCallSuite {
  /// What holds the host back, as the server says it.
  enum Hold: String, CaseIterable, CustomTestStringConvertible {
    case retryAfter429, retryAfter503, rateLimitExhausted, olderRateLimitFields
    var testDescription: String { rawValue }

    var answer: StubResponse {
      switch self {
      case .retryAfter429: .status(429, headers: ["Retry-After": "30"])
      case .retryAfter503: .status(503, headers: ["Retry-After": "30"])
      case .rateLimitExhausted:
        .status(
          200,
          headers: [
            "RateLimit-Policy": "\"hour\";q=100;w=3600, \"burst\";q=10;w=60",
            "RateLimit": "\"hour\";r=40;t=1200, \"burst\";r=0;t=30",
          ])
      case .olderRateLimitFields:
        .status(200, headers: ["RateLimit-Remaining": "0", "RateLimit-Reset": "30"])
      }
    }
  }

  /// The server's hold (30 s) keeps every later call to its host waiting exactly until it ends,
  /// and no call to another host.
  @Test(arguments: Hold.allCases)
  func aServersHoldKeepsItsHostWaitingUntilItEnds(_ hold: Hold) async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.get, "/v1/first", hold.answer)
    await stub.on(.get, "/v1/later", .json(["ok"]))
    await stub.on(.get, "/other", .json(["other"]))
    let client = Self.client(stub, clock: clock)
    _ = try await Self.get(client, "first").value
    let later = Self.get(client, "later")
    defer { later.cancel() }
    try #require(await clock.waitForSleeper(dueIn: .seconds(30)))
    #expect(await stub.requests.count == 1, "not sent while its host is held")
    let other = try await Self.get(client, "https://other.example.com/other").value
    #expect(other.status == 200, "another host is not held")
    await clock.advance(by: .seconds(30))
    #expect(try await later.value.status == 200)
    #expect(await stub.requests.map(\.url.lastPathComponent) == ["first", "other", "later"])
  }

  /// A call that the hold would keep past its deadline fails at once, and says why.
  @Test func aHoldPastTheDeadlineFailsAtOnceSayingWhy() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.get, "/v1/first", .status(429, headers: ["Retry-After": "30"]))
    let client = Self.client(stub, clock: clock)
    _ = try await Self.get(client, "first").value
    let error = await #expect(throws: APIError.self) {
      _ = try await Self.get(client, "later", timeout: .seconds(10)).value
    }
    #expect(error?.kind == .timedOut)
    #expect(error?.context?.rateLimitWait == .seconds(30))
    #expect(error?.localizedDescription.contains("rate limit would have held it 30 s") == true)
    #expect(await stub.requests.count == 1)
  }

  /// A window with room left lets that many calls go, then holds the rest until it ends.
  @Test func aWindowLetsItsRemainingCallsGoThenHolds() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.get, "/v1/first", .status(200, headers: ["RateLimit": "\"default\";r=2;t=60"]))
    await stub.on(.get, "/v1/next", .json(["ok"]))
    let client = Self.client(stub, clock: clock)
    _ = try await Self.get(client, "first").value
    _ = try await Self.get(client, "next").value
    _ = try await Self.get(client, "next").value
    let third = Self.get(client, "next")
    defer { third.cancel() }
    try #require(await clock.waitForSleeper(dueIn: .seconds(60)))
    #expect(await stub.requests.count == 3)
    await clock.advance(by: .seconds(60))
    #expect(try await third.value.status == 200)
  }

  /// The client's own rate: a burst of its count goes at once, then one call per share of its
  /// interval.
  @Test func theClientsRateSpacesCallsOut() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.get, "/v1/dogs", .json(["ok"]))
    let client = Self.client(stub, CallLimits(rate: RequestRate(2, per: .seconds(1))), clock: clock)
    _ = try await Self.get(client, "dogs").value
    _ = try await Self.get(client, "dogs").value
    let third = Self.get(client, "dogs")
    try #require(await clock.waitForSleeper(dueIn: .milliseconds(500)))
    #expect(await stub.requests.count == 2)
    await clock.advance(by: .milliseconds(500))
    #expect(try await third.value.status == 200)
    let fourth = Self.get(client, "dogs")
    try #require(await clock.waitForSleeper(dueIn: .milliseconds(500)))
    await clock.advance(by: .milliseconds(500))
    #expect(try await fourth.value.status == 200)
    #expect(await stub.requests.count == 4)
  }

  /// With `followsServerLimits: false`, and for fields that do not parse, nothing is held.
  @Test(arguments: [
    ("429 ignored", ["Retry-After": "30"], 429, false),
    ("negative remaining", ["RateLimit": "\"d\";r=-1;t=30"], 200, true),
    ("no reset", ["RateLimit": "\"d\";r=0"], 200, true),
    ("not a number", ["RateLimit-Remaining": "none", "RateLimit-Reset": "30"], 200, true),
    ("sixteen digits", ["RateLimit": "\"d\";r=0;t=1234567890123456"], 200, true),
  ])
  func nothingIsHeldWhenTheClientIgnoresOrCannotReadTheServer(
    _ name: String, _ fields: [String: String], _ status: Int, _ follows: Bool
  ) async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(
      .get, "/v1/first",
      .status(
        status,
        headers: HTTPHeaders(fields.map { HTTPHeaders.Field(name: $0.key, value: $0.value) })))
    await stub.on(.get, "/v1/later", .json(["ok"]))
    let client = Self.client(stub, CallLimits(followsServerLimits: follows), clock: clock)
    _ = try await Self.get(client, "first").value
    #expect(try await Self.get(client, "later").value.status == 200, "\(name)")
  }

  /// A server cannot hold its host longer than `longestPause`.
  @Test func aHoldIsNoLongerThanTheLongestPause() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.get, "/v1/first", .status(429, headers: ["Retry-After": "86400"]))
    await stub.on(.get, "/v1/later", .json(["ok"]))
    let client = Self.client(stub, CallLimits(longestPause: .seconds(120)), clock: clock)
    _ = try await Self.get(client, "first").value
    let later = Self.get(client, "later")
    try #require(await clock.waitForSleeper(dueIn: .seconds(120)))
    await clock.advance(by: .seconds(120))
    #expect(try await later.value.status == 200)
  }
}
