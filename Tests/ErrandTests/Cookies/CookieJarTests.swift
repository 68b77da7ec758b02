import Errand
import Foundation
import TestSupport
import Testing

/// The jar's rules, case by case from RFC 6265bis: where a cookie may be set and where it goes
/// back, the name prefixes, `Secure`, expiry on the jar's clock, the order cookies are sent in,
/// the limits, and that no printed form shows a value.
@Suite(.timeLimit(.minutes(3))) struct CookieJarTests {
  /// One `Set-Cookie` field from one URL, then what a request to another URL carries.
  struct Row: Sendable, CustomStringConvertible {
    var from: String
    var field: String
    var to: String
    var sent: String?
    var rejected: RejectedCookie.Reason?
    var description: String { "\(field) from \(from) → \(to)" }
  }

  static let rows: [Row] = [
    // Host-only and Domain (§5.7 steps 7–10, §5.1.3).
    Row(
      from: "https://api.example.com/", field: "a=1", to: "https://api.example.com/x", sent: "a=1"),
    Row(
      from: "https://api.example.com/", field: "a=1", to: "https://sub.api.example.com/", sent: nil),
    Row(
      from: "https://api.example.com/", field: "a=1; Domain=example.com",
      to: "https://www.example.com/", sent: "a=1"),
    Row(
      from: "https://api.example.com/", field: "a=1; Domain=.EXAMPLE.com",
      to: "https://example.com/", sent: "a=1"),
    Row(
      from: "https://api.example.com/", field: "a=1; Domain=other.com", to: "https://other.com/",
      sent: nil, rejected: .foreignDomain),
    Row(
      from: "https://api.example.com/", field: "a=1; Domain=ple.com", to: "https://ple.com/",
      sent: nil, rejected: .foreignDomain),
    Row(
      from: "https://api.example.com/", field: "a=1; Domain=sub.api.example.com",
      to: "https://sub.api.example.com/", sent: nil, rejected: .foreignDomain),
    // Public suffixes (§5.7 step 9).
    Row(
      from: "https://bank.co.uk/", field: "a=1; Domain=co.uk", to: "https://evil.co.uk/",
      sent: nil, rejected: .publicSuffix),
    Row(
      from: "https://me.github.io/", field: "a=1; Domain=github.io", to: "https://you.github.io/",
      sent: nil, rejected: .publicSuffix),
    Row(
      from: "https://example.com/", field: "a=1; Domain=com", to: "https://other.com/", sent: nil,
      rejected: .publicSuffix),
    Row(from: "https://co.uk/", field: "a=1; Domain=co.uk", to: "https://co.uk/", sent: "a=1"),
    Row(from: "https://co.uk/", field: "a=1; Domain=co.uk", to: "https://x.co.uk/", sent: nil),
    // Addresses match only exactly.
    Row(from: "http://127.0.0.1/", field: "a=1", to: "http://127.0.0.1/", sent: "a=1"),
    Row(
      from: "http://127.0.0.1/", field: "a=1; Domain=0.0.1", to: "http://127.0.0.1/", sent: nil,
      rejected: .foreignDomain),
    // Paths (§5.1.4).
    Row(
      from: "https://a.test/docs/page", field: "a=1", to: "https://a.test/docs/other", sent: "a=1"),
    Row(from: "https://a.test/docs/page", field: "a=1", to: "https://a.test/", sent: nil),
    Row(
      from: "https://a.test/", field: "a=1; Path=/docs", to: "https://a.test/docs/x", sent: "a=1"),
    Row(from: "https://a.test/", field: "a=1; Path=/docs", to: "https://a.test/docsx", sent: nil),
    Row(from: "https://a.test/", field: "a=1; Path=/docs/", to: "https://a.test/docs", sent: nil),
    Row(from: "https://a.test/x/y", field: "a=1; Path=rel", to: "https://a.test/x/z", sent: "a=1"),
    // Secure (§5.7 steps 12, 13).
    Row(
      from: "http://a.test/", field: "a=1; Secure", to: "https://a.test/", sent: nil,
      rejected: .secureOverHTTP),
    Row(from: "https://a.test/", field: "a=1; Secure", to: "http://a.test/", sent: nil),
    Row(from: "https://a.test/", field: "a=1; Secure", to: "https://a.test/", sent: "a=1"),
    // Prefixes, as RFC 6265bis §5.4 lists them, matched in any case.
    Row(
      from: "https://site.example/", field: "__Secure-SID=1; Domain=site.example",
      to: "https://site.example/", sent: nil, rejected: .securePrefix),
    Row(
      from: "https://site.example/", field: "__SECURE-SID=1; Domain=site.example",
      to: "https://site.example/", sent: nil, rejected: .securePrefix),
    Row(
      from: "https://site.example/", field: "__Host-SID=1", to: "https://site.example/",
      sent: nil, rejected: .hostPrefix),
    Row(
      from: "https://site.example/", field: "__host-SID=1; Secure", to: "https://site.example/",
      sent: nil, rejected: .hostPrefix),
    Row(
      from: "https://site.example/", field: "__Host-SID=1; Secure; Domain=site.example; Path=/",
      to: "https://site.example/", sent: nil, rejected: .hostPrefix),
    Row(
      from: "https://site.example/", field: "__Secure-SID=1; Domain=site.example; Secure",
      to: "https://site.example/", sent: "__Secure-SID=1"),
    Row(
      from: "https://site.example/", field: "__HOST-SID=1; Secure; Path=/",
      to: "https://site.example/", sent: "__HOST-SID=1"),
    Row(
      from: "https://site.example/", field: "=__Host-SID; Secure; Path=/",
      to: "https://site.example/", sent: nil, rejected: .prefixInValue),
    // SameSite=None needs Secure (§5.7 step 19).
    Row(
      from: "https://a.test/", field: "a=1; SameSite=None", to: "https://a.test/", sent: nil,
      rejected: .sameSiteNoneWithoutSecure),
    Row(
      from: "https://a.test/", field: "a=1; SameSite=None; Secure", to: "https://a.test/",
      sent: "a=1"),
    // Names and values (§5.6).
    Row(from: "https://a.test/", field: "token", to: "https://a.test/", sent: "token"),
    Row(from: "https://a.test/", field: " a = 1 2 ", to: "https://a.test/", sent: "a=1 2"),
    Row(from: "https://a.test/", field: "=", to: "https://a.test/", sent: nil, rejected: .empty),
    Row(
      from: "https://a.test/", field: "a=1\u{7}", to: "https://a.test/", sent: nil,
      rejected: .controlCharacter),
    Row(
      from: "https://a.test/", field: "a=" + String(repeating: "x", count: 4096),
      to: "https://a.test/", sent: nil, rejected: .tooLarge),
    Row(
      from: "https://a.test/", field: "a=1; Domain=exämple.test", to: "https://a.test/",
      sent: nil, rejected: .domainNotASCII),
    // Not http or https.
    Row(
      from: "ftp://a.test/", field: "a=1", to: "https://a.test/", sent: nil,
      rejected: .unsupportedURL),
  ]

  @Test(arguments: rows)
  func storesAndSendsAsTheRFCSays(_ row: Row) throws {
    let jar = CookieJar(now: { Date(timeIntervalSince1970: 1_800_000_000) })
    let (from, to) = (try #require(URL(string: row.from)), try #require(URL(string: row.to)))
    let rejected = jar.store([row.field], from: from)
    #expect(rejected.map(\.reason) == (row.rejected.map { [$0] } ?? []))
    #expect(jar.cookieHeader(for: to) == row.sent)
  }

  /// A cookie from plain http cannot overlay a Secure one of the same name whose path holds its
  /// own (§5.7 step 16), but may sit beside it on another path.
  @Test func plainHTTPCannotShadowASecureCookie() throws {
    let jar = CookieJar(now: { Date(timeIntervalSince1970: 1_800_000_000) })
    let secure = try #require(URL(string: "https://a.test/"))
    let plain = try #require(URL(string: "http://a.test/"))
    let target = try #require(URL(string: "https://a.test/login/en"))
    jar.store(["a=secure; Secure; Path=/login"], from: secure)
    let shadowing = jar.store(["a=evil; Path=/login/en"], from: plain)
    #expect(shadowing.map(\.reason) == [.shadowsSecureCookie])
    let beside = jar.store(["a=fine; Path=/"], from: plain)
    #expect(beside.isEmpty)
    #expect(jar.cookieHeader(for: target) == "a=secure; a=fine")
  }

  /// Expiry on the jar's clock: `Max-Age` wins over `Expires` in any order; neither lasts past
  /// the lifetime limit; zero or less removes the cookie it replaces.
  @Test func cookiesExpireOnTheJarsClock() throws {
    let clock = Locked(Date(timeIntervalSince1970: 1_800_000_000))
    let jar = CookieJar(now: { clock.withLock { $0 } })
    let url = try #require(URL(string: "https://a.test/"))
    jar.store(
      [
        "short=1; Max-Age=10; Expires=Wed, 01 Jan 2200 00:00:00 GMT",
        "long=1; Expires=Wed, 01 Jan 2200 00:00:00 GMT; Max-Age=100",
        "capped=1; Max-Age=999999999",
        "session=1",
      ], from: url)
    #expect(jar.cookieHeader(for: url) == "short=1; long=1; capped=1; session=1")
    clock.withLock { $0 += 10 }
    #expect(jar.cookieHeader(for: url) == "long=1; capped=1; session=1")
    clock.withLock { $0 += 90 }
    #expect(jar.cookieHeader(for: url) == "capped=1; session=1")
    let capped = try #require(jar.allCookies.first { $0.name == "capped" })
    #expect(capped.expires == Date(timeIntervalSince1970: 1_800_000_000 + 34_560_000))
    jar.store(["session=; Max-Age=0"], from: url)
    #expect(jar.cookieHeader(for: url) == "capped=1")
  }

  /// Longer paths first, then the oldest first; a replaced cookie keeps its place (§5.8.3).
  @Test func cookiesAreSentInTheRFCsOrder() throws {
    let clock = Locked(Date(timeIntervalSince1970: 1_800_000_000))
    let jar = CookieJar(now: { clock.withLock { $0 } })
    let url = try #require(URL(string: "https://a.test/a/b/c"))
    for field in ["first=1; Path=/", "deep=1; Path=/a/b", "second=1; Path=/", "mid=1; Path=/a"] {
      jar.store([field], from: url)
      clock.withLock { $0 += 1 }
    }
    jar.store(["first=2; Path=/"], from: url)
    #expect(jar.cookieHeader(for: url) == "deep=1; mid=1; first=2; second=1")
  }

  /// A domain keeps at most its limit, evicting cookies that are not Secure first, then the
  /// least recently sent; the jar keeps at most its own.
  @Test func theLimitsHold() throws {
    let clock = Locked(Date(timeIntervalSince1970: 1_800_000_000))
    let jar = CookieJar(
      limits: .init(cookiesPerDomain: 3, cookies: 5), now: { clock.withLock { $0 } })
    let url = try #require(URL(string: "https://a.test/"))
    jar.store(["secure=1; Secure", "old=1; Path=/old", "used=1; Path=/used"], from: url)
    clock.withLock { $0 += 1 }
    let used = try #require(URL(string: "https://a.test/used"))
    _ = jar.cookies(for: used)  // sends secure and used
    clock.withLock { $0 += 1 }
    jar.store(["new=1"], from: url)
    #expect(Set(jar.allCookies.map(\.name)) == ["secure", "used", "new"])
    for host in ["b.test", "c.test", "d.test"] {
      let other = try #require(URL(string: "https://\(host)/"))
      jar.store(["x=1"], from: other)
    }
    #expect(jar.allCookies.count == 5)
    #expect(!jar.allCookies.contains { $0.name == "used" })
  }

  /// Neither the jar, nor a cookie, nor a rejection shows a cookie's value in any printed form.
  @Test func noPrintedFormShowsAValue() throws {
    let secret = "S3SSION-VALUE-42"
    let jar = CookieJar()
    let url = try #require(URL(string: "https://a.test/"))
    jar.store(["session=\(secret); Secure; HttpOnly"], from: url)
    let rejected = jar.store(["other=\(secret); Domain=com"], from: url)
    let cookie = try #require(jar.allCookies.first)
    #expect(cookie.value == secret)
    for text in printedForms(of: jar) + printedForms(of: cookie) + printedForms(of: rejected) {
      #expect(!text.contains(secret), "\(text)")
    }
    #expect("\(cookie)" == "session=*** for a.test/ (secure, HttpOnly)")
    #expect(
      "\(rejected[0])" == "Cookie \"other\" from a.test was ignored: its Domain is a public suffix")
  }
}
