import Errand
import ErrandTesting
import Foundation
import Testing

/// A `CookieJar` against the parser tests of the IETF http-state working group's suite
/// (https://github.com/abarth/http-state, `tests/data/parser.json`, at 155e45c), kept as
/// `Fixtures/cookies/http-state-parser.json`. Each test answers
/// `http://home.example.org:8888/cookie-parser?NAME` with its `Set-Cookie` fields (`received`),
/// then expects a request to `sent-to` (by default
/// `http://home.example.org:8888/cookie-parser-result?NAME`) to carry exactly the cookies
/// `sent`, in order. The jar's clock stands at the suite's date, 2017-08-09, so that its
/// "future" expiry dates are still ahead.
///
/// Where RFC 6265bis, which the jar follows, changed what the 2017 suite expects, the case is
/// listed in ``divergences`` with the section that decides it, and the RFC's answer is checked.
@Suite(.timeLimit(.minutes(3))) struct CookieConformanceTests {
  struct Pair: Decodable, Sendable, Equatable, CustomStringConvertible {
    var name: String
    var value: String
    var description: String { "\(name)=\(value)" }
  }

  struct Case: Decodable, Sendable, CustomStringConvertible {
    var test: String
    var received: [String]
    var sent: [Pair]
    var sentTo: String?
    var description: String { test }

    enum CodingKeys: String, CodingKey {
      case test, received, sent
      case sentTo = "sent-to"
    }
  }

  /// Cases whose expectation RFC 6265bis changed, with what it expects instead, and why: 27 of
  /// the 222.
  static let divergences: [String: (sent: [Pair], reason: String)] = [
    "0004": ([.init(name: "", value: "foo")], nameless),
    "0021": (
      [.init(name: "a", value: "b"), .init(name: "", value: "x"), .init(name: "c", value: "d")],
      nameless
    ),
    "0023": ([.init(name: "", value: "foo")], nameless),
    "0024": ([.init(name: "", value: "foo")], nameless),
    "0025": ([.init(name: "", value: "foo")], nameless),
    "0026": ([.init(name: "", value: "foo")], nameless),
    "0027": ([.init(name: "", value: "bar")], nameless),
    "0028": ([.init(name: "", value: "foo")], nameless),
    "CHROMIUM0009": ([.init(name: "", value: "BLAHHH")], nameless),
    "CHROMIUM0010": ([.init(name: "", value: "\"BLA\\\"HHH\"")], nameless),
    "CHROMIUM0012": ([.init(name: "", value: "ABC")], nameless),
    "MOZILLA0012": (
      [.init(name: "test", value: "\"fubar! = foo"), .init(name: "", value: "five")], nameless
    ),
    "MOZILLA0014": ([.init(name: "", value: "six")], nameless),
    "MOZILLA0015": ([.init(name: "", value: "seven")], nameless),
    "MOZILLA0016": ([.init(name: "", value: "eight")], nameless),
    "MOZILLA0017": (
      [.init(name: "", value: "eight"), .init(name: "test", value: "six")], nameless
    ),
    "NAME0017": ([.init(name: "", value: "a=bar")], nameless),
    "NAME0023": ([.init(name: "", value: "foo")], nameless),
    "NAME0025": ([.init(name: "", value: "==a=bar")], nameless),
    "NAME0028": ([.init(name: "", value: "a")], nameless),
    "NAME0031": ([.init(name: "", value: "\"foo")], nameless),
    "NAME0032": ([.init(name: "", value: "\"foo\\\"bar")], nameless),
    "NAME0033": ([.init(name: "", value: "aaa")], nameless),
    "DISABLED_CHROMIUM0022": ([], controlCharacter),
    "DISABLED_CHROMIUM0023": ([], controlCharacter),
    "DISABLED_PATH0029": ([], pathsAsWritten),
    "OPTIONAL_DOMAIN0042": ([.init(name: "foo", value: "bar")], lastDomainWins),
  ]

  static let nameless =
    "§5.6 step 3: a field without `=` (or starting with one) is a cookie with an empty name, "
    + "kept and sent as its value alone; the 2017 suite ignored it"
  static let controlCharacter =
    "§5.6 step 1: a control character other than a tab makes the whole field ignored; the 2017 "
    + "suite cut the field there"
  static let pathsAsWritten =
    "§5.1.4: paths match as written, `%6F` is not `o` (the suite disabled this case)"
  static let lastDomainWins =
    "§5.7 step 7: the last Domain attribute counts, an empty one too (making the cookie "
    + "host-only); RFC 6265 left an empty Domain undefined"

  @Test func theDivergencesAreTheListedOnes() throws {
    let names = Set(try Self.cases().map(\.test))
    #expect(Set(Self.divergences.keys).isSubset(of: names))
    #expect(Self.divergences.count == 27)
  }

  static func cases() throws -> [Case] {
    try Fixtures.nearest().decode([Case].self, from: "cookies/http-state-parser.json")
  }

  static let suiteDate = Date(timeIntervalSince1970: 1_502_265_742)  // 2017-08-09T08:02:22Z

  @Test func theSuiteHasItsCases() throws {
    #expect(try Self.cases().count == 222)
  }

  @Test(arguments: try cases())
  func sendsWhatTheSuiteExpects(_ check: Case) throws {
    let jar = CookieJar(now: { Self.suiteDate })
    let setter = try #require(
      URL(string: "http://home.example.org:8888/cookie-parser?\(check.test.lowercased())"))
    jar.store(check.received, from: setter)
    let target = try #require(
      URL(
        string: check.sentTo
          ?? "http://home.example.org:8888/cookie-parser-result?\(check.test.lowercased())",
        relativeTo: setter)?.absoluteURL)
    let sent = jar.cookies(for: target).map { Pair(name: $0.name, value: $0.value) }
    let expected = Self.divergences[check.test]?.sent ?? check.sent
    #expect(sent == expected, "received \(check.received)")
  }
}
