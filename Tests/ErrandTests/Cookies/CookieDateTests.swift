import ErrandTesting
import Foundation
import Testing

@testable import Errand

/// The cookie-date algorithm (RFC 6265bis §5.1.1) against the date tests of the IETF http-state
/// working group's suite (https://github.com/abarth/http-state, `tests/data/dates`, at 155e45c;
/// `bsd-examples.json` under the BSD licence its header gives), kept in `Fixtures/cookies`: each
/// `test` string is the date `expected` names, or (`null`) no date at all.
@Suite(.timeLimit(.minutes(3))) struct CookieDateTests {
  struct Case: Decodable, Sendable, CustomStringConvertible {
    var test: String
    var expected: String?
    var description: String { test }
  }

  static func cases() throws -> [Case] {
    try ["cookies/http-state-dates.json", "cookies/http-state-bsd-dates.json"].flatMap { name in
      // The BSD file starts with its licence, as `//` comments, before the JSON.
      let text = String(decoding: try Fixtures.nearest().data(name), as: UTF8.self)
      let json = text.split(separator: "\n", omittingEmptySubsequences: false)
        .filter { !$0.hasPrefix("//") }.joined(separator: "\n")
      return try JSONDecoder().decode([Case].self, from: Data(json.utf8))
    }
  }

  @Test func theFilesHaveTheirCases() throws {
    #expect(try Self.cases().count == 70)
  }

  @Test(arguments: try cases())
  func parsesAsTheSuiteSays(_ check: Case) {
    let parsed = CookieDate.parse(check.test)
    #expect(parsed.map(Self.format) == check.expected)
  }

  /// What RFC 6265bis's steps add beyond the suite: two-digit years, the bounds of each field.
  @Test(
    arguments: [
      ("1 Jan 70 00:00:00", "Thu, 01 Jan 1970 00:00:00 GMT"),
      ("1 Jan 69 00:00:00", "Tue, 01 Jan 2069 00:00:00 GMT"),
      ("31 Feb 2020 00:00:00", nil),
      ("1 Jan 1600 00:00:00", nil),
      ("1 Jan 2020 24:00:00", nil),
      ("32 Jan 2020 00:00:00", nil),
      ("1 Jan 2020", nil),
      ("", nil),
    ] as [(String, String?)])
  func theRFCsBounds(_ text: String, expected: String?) {
    #expect(CookieDate.parse(text).map(Self.format) == expected)
  }

  static func format(_ date: Date) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    return formatter.string(from: date)
  }
}
