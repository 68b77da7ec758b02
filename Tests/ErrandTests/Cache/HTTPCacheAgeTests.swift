import Errand
import ErrandTesting
import Foundation
import Testing

/// RFC 9111 §4.2.3 and §5.1: a stored response's current age, sent as `Age` whenever the cache
/// answers, and the `Age` a response arrives with read by its first member.
@Suite(.timeLimit(.minutes(3))) struct HTTPCacheAgeTests {
  static let body = Data("[\"Rex\"]".utf8)

  /// A hit carries its current age: the `Age` it arrived with (or the time since its `Date`,
  /// whichever is more) plus the time stored; a stored `Age: 30` reads 33 three seconds later.
  @Test(arguments: [
    ("no Age", [:] as HTTPHeaders, 3),
    ("Age: 30", ["Age": "30"] as HTTPHeaders, 33),
    ("Date 10 s ago", ["Date": "-10"] as HTTPHeaders, 13),
    ("Date 10 s ago and Age: 4", ["Date": "-10", "Age": "4"] as HTTPHeaders, 13),
    ("Date 10 s ahead", ["Date": "10"] as HTTPHeaders, 3),
  ])
  func aHitCarriesItsCurrentAge(_ what: String, _ extra: HTTPHeaders, _ age: Int) async throws {
    let scenario = CacheScenario { wallClock in HTTPCache(now: { wallClock.date }) }
    var headers: HTTPHeaders = ["Cache-Control": "max-age=600"]
    for field in extra.fields {
      headers[field.name] =
        field.name == "Date" ? scenario.date(Int(field.value) ?? 0) : field.value
    }
    await scenario.stub.on(.get, "/v1/dogs", .status(200, body: Self.body, headers: headers))
    let miss = try await scenario.call()
    #expect(miss.cacheStatus == .miss)
    #expect(miss.headers.values(for: "Age") == extra.values(for: "Age"))
    await scenario.clock.advance(by: .seconds(3))
    let hit = try await scenario.call()
    #expect(hit.cacheStatus == .hit)
    #expect(hit.headers.values(for: "Age") == ["\(age)"])
    #expect(hit.headers["Date"] == headers["Date"])
  }

  /// The time the answer took to arrive counts into its age (§4.2.3, `response_delay`).
  @Test func theTimeAnAnswerTookToArriveCountsIntoItsAge() async throws {
    let scenario = CacheScenario()
    await scenario.stub.on(
      .get, "/v1/dogs",
      StubResponse.status(
        200, body: Self.body, headers: ["Cache-Control": "max-age=600", "Age": "1"]
      )
      .delayed(by: .seconds(5)))
    let call = Task { try await scenario.call() }
    try #require(await scenario.clock.waitForSleeper(dueIn: .seconds(5)))
    await scenario.clock.advance(by: .seconds(5))
    #expect(try await call.value.cacheStatus == .miss)
    #expect(try await scenario.call().headers["Age"] == "6")
  }

  /// An age past 2^31 seconds is stale, and sent as 2147483648 (§1.2.2) when the caller takes a
  /// stale answer.
  @Test func anAgePastTwoToTheThirtyFirstIsSentAsTwoToTheThirtyFirst() async throws {
    let scenario = CacheScenario()
    await scenario.stub.on(
      .get, "/v1/dogs",
      .status(
        200, body: Self.body,
        headers: ["Cache-Control": "max-age=2147483647", "Age": "99999999999999999999"]))
    _ = try await scenario.call()
    let stale = try await scenario.call(headers: ["Cache-Control": "max-stale"])
    #expect(stale.cacheStatus == .stale)
    #expect(stale.headers.values(for: "Age") == ["2147483648"])
    #expect(await scenario.sent == 1)
  }

  /// A list-based `Age` counts by its first member (§5.1), empty elements not counting
  /// (RFC 9110 §5.6.1), two field lines as one list; a value that is not one non-negative integer
  /// is ignored.
  @Test(arguments: [
    (["7200, 0"], false), (["0, 7200"], true), ([", 7200"], false), (["", "7200"], false),
    (["7200", "0"], false), (["0", "7200"], true), (["abc"], true), (["-7200"], true),
    (["7200.0"], true), (["7200;foo=bar"], true), (["+7200"], true), (["7200 0"], true),
    (["2147483648"], false),
  ])
  func aListBasedAgeCountsByItsFirstMember(_ values: [String], _ fresh: Bool) async throws {
    let scenario = CacheScenario()
    var headers: HTTPHeaders = ["Cache-Control": "max-age=3600"]
    for value in values {
      headers.add("Age", value)
    }
    await scenario.stub.on(.get, "/v1/dogs", .status(200, body: Self.body, headers: headers))
    _ = try await scenario.call()
    #expect(try await scenario.call().cacheStatus == (fresh ? .hit : .miss))
    #expect(await scenario.sent == (fresh ? 1 : 2))
  }
}
