import Errand
import Foundation
import Testing

@testable import Errand

/// RFC 9110 §5.6.7, read strictly: the three formats exactly, and nothing else.
@Suite(.timeLimit(.minutes(3))) struct HTTPDateTests {
  /// 18 August 2050, 02:01:18 GMT.
  static let august2050 = Date(timeIntervalSince1970: 2_544_400_878)
  /// 1 January 2026, the `now` the two-digit years are read against.
  static let now = Date(timeIntervalSince1970: 1_767_225_600)

  /// The three formats, with day and month names in any case, a leap second and white space
  /// around the value.
  @Test(arguments: [
    ("Thu, 18 Aug 2050 02:01:18 GMT", 0.0),
    ("Thursday, 18-Aug-50 02:01:18 GMT", 0),
    ("Thu Aug 18 02:01:18 2050", 0),
    ("THU, 18 AUG 2050 02:01:18 gmt", 0),
    ("  Thu, 18 Aug 2050 02:01:18 GMT\t", 0),
    ("Thu, 18 Aug 2050 02:01:60 GMT", 42),
    ("Thu Aug  8 02:01:18 2050", -864_000),
  ])
  func aDateInOneOfTheThreeFormatsIsRead(_ text: String, _ offset: Double) {
    #expect(HTTPDate.parse(text, now: Self.now) == Self.august2050.addingTimeInterval(offset))
  }

  /// What is not exactly one of the three formats is not a date (RFC 9111 §5.3: an `Expires`
  /// that is not a date means already expired).
  @Test(arguments: [
    "Thu, 18 Aug 2050 02:01:18 UTC", "Thu, 18 Aug 2050 02:01:18 AEST",
    "Thu, 18 Aug 50 02:01:18 GMT", "Thu 18 Aug 2050 02:01:18 GMT",
    "Thu, 18  Aug  2050 02:01:18 GMT", "Thu, 18-Aug-2050 02:01:18 GMT",
    "Thu, 18 Aug 2050 02.01.18 GMT", "Thu, 18 Aug 2050 2:01:18 GMT", "Thu, 8 Aug 2050 02:01:18 GMT",
    "Thu, 31 Feb 2050 02:01:18 GMT", "Thu, 18 Aug 2050 24:00:00 GMT",
    "Thu, 18 Aug 2050 02:60:00 GMT", "Thu, 18 Aug 2050 02:01:61 GMT",
    "Xyz, 18 Aug 2050 02:01:18 GMT",
    "Thu, 18 Foo 2050 02:01:18 GMT", "Thu, 18 Aug 2050 02:01:18 GMT, Thu, 18 Aug 2050 02:01:19 GMT",
    "Thu, 18 Aug 2050 02:01:18 GMT junk", "0", "-1", "", "2050-08-18T02:01:18Z",
    "Thu, +8 Aug 2050 02:01:18 GMT", "Thu, 18 Aug 2050 02:01:18 +0000",
  ])
  func anythingElseIsNotADate(_ text: String) {
    #expect(HTTPDate.parse(text, now: Self.now) == nil)
  }

  /// RFC 850's two-digit year is the one that puts the date at most 50 years ahead.
  @Test(arguments: [
    ("Sunday, 06-Nov-94 08:49:37 GMT", 1994), ("Friday, 01-Jan-76 00:00:00 GMT", 2076),
  ])
  func aTwoDigitYearIsAtMostFiftyYearsAhead(_ text: String, _ year: Int) throws {
    let date = try #require(HTTPDate.parse(text, now: Self.now))
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = try #require(TimeZone(identifier: "GMT"))
    #expect(calendar.component(.year, from: date) == year)
  }

  /// A date is one value: two field lines are none.
  @Test func twoFieldLinesAreNotADate() {
    let headers: HTTPHeaders = HTTPHeaders([
      .init(name: "Expires", value: "Thu, 18 Aug 2050 02:01:18 GMT"),
      .init(name: "Expires", value: "Thu, 18 Aug 2050 02:01:19 GMT"),
    ])
    #expect(HTTPDate.parse("Expires", in: headers, now: Self.now) == nil)
    #expect(
      HTTPDate.parse("Expires", in: ["Expires": "Thu, 18 Aug 2050 02:01:18 GMT"], now: Self.now)
        == Self.august2050)
  }

  /// `Retry-After` is read by the same parser: a malformed date is no wait at all.
  @Test(arguments: [
    ("Thu, 18 Aug 2050 02:01:18 UTC", nil), ("Thu, 18 Aug 2050 2:01:18 GMT", nil),
    ("Thu, 01 Jan 2026 00:00:30 GMT", Duration.seconds(30)),
  ])
  func retryAfterReadsDatesStrictly(_ value: String, _ wait: Duration?) {
    let policy = RetryPolicy(maxRetryAfter: .seconds(3600 * 24 * 365 * 100))
    #expect(policy.retryAfter(value, now: Self.now) == wait)
  }
}
