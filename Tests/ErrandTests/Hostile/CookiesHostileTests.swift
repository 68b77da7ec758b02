import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Hostile probes of `CookieJar` and `PublicSuffixList` (RFC 6265bis §5.1.3, §5.7, §5.8.3 and the
/// Public Suffix List's algorithm): each asserts the safe behaviour, so a failure is a finding.
@Suite(.timeLimit(.minutes(3))) struct CookiesHostileTests {
  static let now = Date(timeIntervalSince1970: 1_800_000_000)

  static func jar(limits: CookieJar.Limits = .init()) -> CookieJar {
    CookieJar(limits: limits, now: { Self.now })
  }

  /// One field from one URL, then what a request to another URL carries.
  struct Row: Sendable, CustomStringConvertible {
    var from: String
    var field: String
    var to: String
    var sent: String?
    var rejected: RejectedCookie.Reason?
    var description: String { "\(field) from \(from) → \(to)" }
  }

  // MARK: Crossing sites

  static let crossingRows: [Row] = [
    // Trailing dots: `example.com.` is another host name than `example.com`, and a public
    // suffix stays one with a dot after it.
    Row(
      from: "https://evil.co.uk./", field: "a=1; Domain=co.uk.", to: "https://bank.co.uk/",
      sent: nil, rejected: .publicSuffix),
    Row(
      from: "https://evil.github.io./", field: "a=1; Domain=github.io.",
      to: "https://victim.github.io/", sent: nil, rejected: .publicSuffix),
    Row(
      from: "https://example.com./", field: "a=1; Domain=com.", to: "https://other.com/",
      sent: nil, rejected: .publicSuffix),
    Row(
      from: "https://www.example.com/", field: "a=1; Domain=example.com.",
      to: "https://example.com/", sent: nil, rejected: .foreignDomain),
    Row(from: "https://example.com./", field: "a=1", to: "https://example.com/", sent: nil),
    // Odd Domain spellings.
    Row(
      from: "https://www.example.com/", field: "a=1; Domain=..example.com",
      to: "https://example.com/", sent: nil, rejected: .foreignDomain),
    Row(
      from: "https://www.example.com/", field: "a=1; Domain=example.com:443",
      to: "https://example.com/", sent: nil, rejected: .foreignDomain),
    Row(
      from: "https://WWW.EXAMPLE.COM/", field: "a=1; Domain=EXAMPLE.COM",
      to: "https://Example.Com/", sent: "a=1"),
    // IDN: the ASCII form is the name; a Unicode Domain is refused; the bundled list knows the
    // ASCII form of an internationalized suffix.
    Row(
      from: "https://evil.example/", field: "a=1; Domain=bücher.example",
      to: "https://xn--bcher-kva.example/", sent: nil, rejected: .domainNotASCII),
    Row(
      from: "https://evil.xn--55qx5d.cn/", field: "a=1; Domain=xn--55qx5d.cn",
      to: "https://bank.xn--55qx5d.cn/", sent: nil, rejected: .publicSuffix),
    // Wildcard and exception rules (`*.kawasaki.jp`, `!city.kawasaki.jp`, `*.ck`, `!www.ck`),
    // and private ones.
    Row(
      from: "https://a.evil.kawasaki.jp/", field: "a=1; Domain=evil.kawasaki.jp",
      to: "https://b.evil.kawasaki.jp/", sent: nil, rejected: .publicSuffix),
    Row(
      from: "https://www.city.kawasaki.jp/", field: "a=1; Domain=city.kawasaki.jp",
      to: "https://city.kawasaki.jp/", sent: "a=1"),
    Row(
      from: "https://a.evil.ck/", field: "a=1; Domain=evil.ck", to: "https://b.evil.ck/",
      sent: nil, rejected: .publicSuffix),
    Row(from: "https://a.www.ck/", field: "a=1; Domain=www.ck", to: "https://www.ck/", sent: "a=1"),
    Row(
      from: "https://evil.s3.amazonaws.com/", field: "a=1; Domain=s3.amazonaws.com",
      to: "https://victim.s3.amazonaws.com/", sent: nil, rejected: .publicSuffix),
    // A host that is a public suffix itself gets a host-only cookie, never its subdomains'.
    Row(
      from: "https://github.io/", field: "a=1; Domain=github.io", to: "https://victim.github.io/",
      sent: nil),
    // Addresses: `127.1` is not a dotted quad, but `1` is a public suffix all the same; ports
    // do not separate cookies (RFC 6265bis §8.5).
    Row(
      from: "http://127.1/", field: "a=1; Domain=1", to: "http://2.1/", sent: nil,
      rejected: .publicSuffix),
    Row(from: "http://127.0.0.1:8080/", field: "a=1", to: "http://127.0.0.1:9090/", sent: "a=1"),
    Row(from: "http://[::1]:8080/", field: "a=1", to: "http://[::1]/", sent: "a=1"),
    Row(from: "http://[::1]/", field: "a=1", to: "http://127.0.0.1/", sent: nil),
    // Other schemes neither set nor receive.
    Row(from: "https://a.test/", field: "a=1", to: "wss://a.test/", sent: nil),
  ]

  /// Domain tricks (trailing dots, case, ports, IDN, wildcard and exception rules, private
  /// suffixes, a host that is a suffix, odd IPv4 and IPv6 spellings) never carry a cookie to a
  /// site that did not set it.
  @Test(arguments: crossingRows)
  func noDomainTrickCrossesSites(_ row: Row) throws {
    let jar = Self.jar()
    let rejected = jar.store([row.field], from: try #require(URL(string: row.from)))
    #expect(rejected.map(\.reason) == (row.rejected.map { [$0] } ?? []))
    #expect(jar.cookieHeader(for: try #require(URL(string: row.to))) == row.sent)
  }

  /// A list read from the Public Suffix List's own file (Unicode rules only, as published, and
  /// as ``PublicSuffixList/init(rules:)``'s documentation says to use it) must still refuse the
  /// ASCII (`xn--`) form of an internationalized suffix: the jar only ever sees ASCII hosts, so
  /// otherwise `evil.公司.cn` sets a cookie that `bank.公司.cn` receives.
  @Test func aListReadFromTheOfficialFileRefusesPunycodeSuffixes() throws {
    let list = PublicSuffixList(
      rules: """
        // ===BEGIN ICANN DOMAINS===
        cn
        公司.cn
        """)
    #expect(list.isPublicSuffix("公司.cn"))
    #expect(list.isPublicSuffix("xn--55qx5d.cn"), "the ASCII form of 公司.cn")
    let jar = CookieJar(publicSuffixes: list, now: { Self.now })
    let rejected = jar.store(
      ["session=attacker; Domain=xn--55qx5d.cn"],
      from: try #require(URL(string: "https://evil.xn--55qx5d.cn/")))
    #expect(rejected.map(\.reason) == [.publicSuffix])
    #expect(jar.cookieHeader(for: try #require(URL(string: "https://bank.xn--55qx5d.cn/"))) == nil)
  }

  /// "An IP address only exactly" (the jar's documentation): a cookie set by `127.0.0.1` with
  /// `Domain=127.0.0.1` must not go to a host name that merely ends in `.127.0.0.1`.
  @Test func aCookieForAnAddressGoesToThatAddressOnly() throws {
    let jar = Self.jar()
    let rejected = jar.store(
      ["a=1; Domain=127.0.0.1"], from: try #require(URL(string: "http://127.0.0.1/")))
    #expect(rejected.isEmpty)
    #expect(jar.cookieHeader(for: try #require(URL(string: "http://127.0.0.1/"))) == "a=1")
    #expect(jar.cookieHeader(for: try #require(URL(string: "http://x.127.0.0.1/"))) == nil)
  }

  // MARK: Secure

  /// From plain http a sibling, the parent or the host itself can neither overlay, delete nor
  /// evict a `Secure` cookie, and a `Secure` cookie never goes over http, even to port 443.
  @Test func plainHTTPCannotReachShadowDeleteOrEvictASecureCookie() throws {
    let jar = Self.jar(limits: .init(cookiesPerDomain: 5, cookies: 10))
    let secure = try #require(URL(string: "https://www.example.com/"))
    #expect(jar.store(["sid=good; Secure; Domain=example.com"], from: secure).isEmpty)
    let attempts: [(String, String, RejectedCookie.Reason)] = [
      ("http://evil.example.com/", "sid=evil; Domain=example.com", .shadowsSecureCookie),
      ("http://www.example.com/", "sid=evil", .shadowsSecureCookie),
      ("http://example.com/", "sid=evil", .shadowsSecureCookie),
      ("http://www.example.com/", "sid=; Max-Age=0; Domain=example.com", .shadowsSecureCookie),
      ("http://www.example.com/", "sid=evil; Secure; Domain=example.com", .secureOverHTTP),
      (
        "http://www.example.com/", "sid=evil; Path=/deeper; Domain=example.com",
        .shadowsSecureCookie
      ),
    ]
    for (from, field, reason) in attempts {
      let rejected = jar.store([field], from: try #require(URL(string: from)))
      #expect(rejected.map(\.reason) == [reason], "\(field) from \(from)")
    }
    // Flood the domain and the jar over http.
    for index in 0..<40 {
      jar.store(
        ["flood\(index)=x; Domain=example.com"],
        from: try #require(URL(string: "http://h\(index).example.com/")))
      jar.store(["flood=x"], from: try #require(URL(string: "http://other\(index).test/")))
    }
    #expect(jar.cookies(for: secure).map(\.value).contains("good"))
    #expect(
      jar.cookies(for: try #require(URL(string: "http://www.example.com/"))).allSatisfy {
        $0.name != "sid"
      })
    #expect(
      jar.cookieHeader(for: try #require(URL(string: "http://www.example.com:443/")))?
        .contains("sid") != true)
  }

  // MARK: Prefixes

  static let prefixRows: [Row] = [
    Row(
      from: "https://site.example/", field: "__Host-x=1; Secure; Path=/; Path=/deeper",
      to: "https://site.example/deeper", sent: nil, rejected: .hostPrefix),
    Row(
      from: "https://site.example/a/b", field: "__Host-x=1; Secure",
      to: "https://site.example/a/c", sent: nil, rejected: .hostPrefix),
    Row(
      from: "https://site.example/a/b", field: "__Host-x=1; Secure; Path=",
      to: "https://site.example/a/c", sent: nil, rejected: .hostPrefix),
    Row(
      from: "https://site.example/", field: " __hOsT-x=1; Secure; Path=/; Domain=site.example",
      to: "https://site.example/", sent: nil, rejected: .hostPrefix),
    Row(
      from: "https://a.site.example/", field: "__Host-x=1; Secure; Path=/; Domain=site.example",
      to: "https://b.site.example/", sent: nil, rejected: .hostPrefix),
    Row(
      from: "http://site.example/", field: "__Secure-x=1; Secure", to: "https://site.example/",
      sent: nil, rejected: .secureOverHTTP),
    Row(
      from: "http://site.example/", field: "__secure-x=1", to: "https://site.example/",
      sent: nil, rejected: .securePrefix),
    // No name, and a value that a server would read as a prefixed name.
    Row(
      from: "https://site.example/", field: "__HOST-x", to: "https://site.example/", sent: nil,
      rejected: .prefixInValue),
    Row(
      from: "https://site.example/", field: "  =  __secure-x=1; Secure",
      to: "https://site.example/", sent: nil, rejected: .prefixInValue),
    Row(
      from: "http://site.example/", field: "=__Host-x=1", to: "http://site.example/", sent: nil,
      rejected: .prefixInValue),
    // An empty `Domain` is ignored (§5.6.3): still host-only, so the promise holds.
    Row(
      from: "https://site.example/", field: "__Host-x=1; Secure; Path=/; Domain=",
      to: "https://site.example/", sent: "__Host-x=1"),
  ]

  /// `__Host-` and `__Secure-` keep their promises whatever the case, the spacing, the order
  /// of attributes, an empty name or a later `Path`.
  @Test(arguments: prefixRows)
  func prefixesCannotBeDefeated(_ row: Row) throws {
    let jar = Self.jar()
    let rejected = jar.store([row.field], from: try #require(URL(string: row.from)))
    #expect(rejected.map(\.reason) == (row.rejected.map { [$0] } ?? []))
    #expect(jar.cookieHeader(for: try #require(URL(string: row.to))) == row.sent)
  }

  // MARK: Odd input

  /// Numbers and dates out of every range: no crash, and each read as RFC 6265bis says.
  @Test func outOfRangeNumbersAndDatesAreReadSafely() throws {
    let url = try #require(URL(string: "https://a.test/"))
    let jar = Self.jar()
    let fortyDigits = String(repeating: "9", count: 40)
    let rejected = jar.store(
      [
        "long=1; Max-Age=\(fortyDigits)",
        "year5=1; Expires=Wed, 01 Jan 99999 00:00:00 GMT",
        "year1600=1; Expires=Sat, 01 Jan 1600 00:00:00 GMT",
        "feb31=1; Expires=Thu, 31 Feb 2030 00:00:00 GMT",
        "hour99=1; Expires=Thu, 01 Jan 2030 99:00:00 GMT",
        "arabic=1; Max-Age=\u{663}\u{663}",
        "plus=1; Max-Age=+5",
      ], from: url)
    #expect(rejected.isEmpty)
    let cookies = Dictionary(uniqueKeysWithValues: jar.allCookies.map { ($0.name, $0) })
    #expect(cookies["long"]?.expires == Self.now.addingTimeInterval(34_560_000))
    for name in ["year5", "year1600", "feb31", "hour99", "arabic", "plus"] {
      #expect(cookies[name] != nil && cookies[name]?.expires == nil, "\(name)")
    }
    // A negative Max-Age of any length deletes.
    jar.store(["long=; Max-Age=-\(fortyDigits)"], from: url)
    #expect(!jar.allCookies.contains { $0.name == "long" })
    // The longest lifetime a jar allows, with the longest Max-Age and the last year a date can
    // name: still dates, and the year-9999 one still printable.
    let forever = CookieJar(
      limits: .init(lifetime: .seconds(Int64.max)), now: { Self.now })
    #expect(
      forever.store(
        ["a=1; Max-Age=\(fortyDigits)", "b=1; Expires=Fri, 31 Dec 9999 23:59:59 GMT"], from: url
      ).isEmpty)
    let kept = Dictionary(uniqueKeysWithValues: forever.allCookies.map { ($0.name, $0) })
    #expect(try #require(kept["a"]?.expires) > Self.now)
    let b = try #require(kept["b"])
    #expect("\(b)" == "b=*** for a.test/ (expires 9999-12-31T23:59:59Z)")
  }

  /// NUL and other control characters anywhere refuse the field; Unicode names and values go
  /// back byte for byte.
  @Test func controlCharactersAndUnicode() throws {
    let url = try #require(URL(string: "https://a.test/"))
    let jar = Self.jar()
    let rejected = jar.store(
      ["a=b\u{0}c", "b=1; Path=/\u{0}", "c=1\u{1F}", "d=1; Domain=a.test\u{7F}", "\u{0}=1"],
      from: url)
    #expect(rejected.map(\.reason) == Array(repeating: .controlCharacter, count: 5))
    #expect(rejected.allSatisfy { $0.name.isEmpty })
    #expect(jar.store(["ключ=значение 🍪"], from: url).isEmpty)
    #expect(jar.cookieHeader(for: url) == "ключ=значение 🍪")
  }

  /// Ten thousand attributes, a `Domain` over 1024 bytes, a field of exactly 4096 bytes: read as
  /// RFC 6265bis says (the last `Path` wins, the long `Domain` is ignored, 4096 fits, 4097 not).
  @Test func manyAndLongAttributes() throws {
    let url = try #require(URL(string: "https://a.test/"))
    let jar = Self.jar()
    let many = "many=1" + String(repeating: "; Path=/p", count: 9_999) + "; Path=/q"
    let longDomain = "long=1; Domain=" + String(repeating: "a", count: 1_020) + ".a.test"
    let fits = "f=" + String(repeating: "x", count: 4_095)
    let over = "o=" + String(repeating: "x", count: 4_096)
    let rejected = jar.store([many, longDomain, fits, over], from: url)
    #expect(rejected.map(\.reason) == [.tooLarge])
    let cookies = Dictionary(uniqueKeysWithValues: jar.allCookies.map { ($0.name, $0) })
    #expect(cookies["many"]?.path == "/q")
    #expect(cookies["long"]?.isHostOnly == true && cookies["long"]?.domain == "a.test")
    #expect(cookies["f"] != nil)
  }

  /// One `Set-Cookie` field of 20,000 short attributes (2 MB) is parsed in time linear in its
  /// length. When each attribute copied the rest of the field (`SetCookie.parse` as reviewed),
  /// the work was quadratic, under the jar's lock: a hostile server held every call that used
  /// the jar. The 30 s only guard against that (linear, it takes a fraction of a second).
  @Test(.ownThread) func aHugeFieldIsParsedInLinearTime() async throws {
    let url = try #require(URL(string: "https://a.test/"))
    let jar = Self.jar()
    let field = "a=1" + String(repeating: ";" + String(repeating: "x", count: 99), count: 20_000)
    let finished = await returnsInTime(seconds: 30) {
      await onThread { jar.store([field], from: url) }
      return true
    }
    #expect(finished, "a 2 MB field took more than 30 s to store")
  }

  // MARK: Growth, isolation, printing

  /// Thousands of hosts and cookies: the jar holds at most its limit, each domain at most its
  /// own, and a cookie that replaces another does not count twice.
  @Test(.ownThread) func theJarCannotGrowWithoutBound() throws {
    let jar = Self.jar(limits: .init(cookiesPerDomain: 3, cookies: 100))
    for host in 0..<1_000 {
      let url = try #require(URL(string: "http://h\(host).flood.test/"))
      jar.store((0..<5).map { "c\($0)=x" } + ["c0=y"], from: url)
    }
    let all = jar.allCookies
    #expect(all.count == 100)
    #expect(Dictionary(grouping: all, by: \.domain).values.allSatisfy { $0.count <= 3 })
    let defaults = Self.jar()
    let one = try #require(URL(string: "https://one.test/"))
    defaults.store((0..<200).map { "c\($0)=x" }, from: one)
    #expect(defaults.allCookies.count == 50)
  }

  /// Two jars share nothing: no static store, no shared clock.
  @Test func jarsDoNotShareCookies() throws {
    let url = try #require(URL(string: "https://a.test/"))
    let first = Self.jar()
    let second = Self.jar()
    first.store(["a=1"], from: url)
    #expect(second.cookieHeader(for: url) == nil)
    #expect(second.allCookies.isEmpty)
    first.removeAll()
    second.store(["b=2"], from: url)
    #expect(first.cookieHeader(for: url) == nil)
  }

  /// No printed form of the jar, its cookies (alone, in arrays, as `cookies(for:)` returns
  /// them), any rejection, or a request carrying the jar's `Cookie` field shows a value, however
  /// the field is written.
  @Test func noPrintedFormShowsAValue() throws {
    let secret = "V4LUE-SECRET"
    let url = try #require(URL(string: "https://a.test/p"))
    let jar = Self.jar()
    jar.store(
      ["s=\(secret)", secret, "=\(secret)", "t=\(secret)=\(secret); Secure", "u==\(secret)"],
      from: url)
    let rejected = jar.store(
      [
        "r=\(secret); Domain=com", "\(secret); Domain=com", "=\(secret); Domain=com",
        "r=\(secret)\u{1}", "r=\(secret); Secure; SameSite=None; Domain=evil.test",
        "r=" + secret + String(repeating: "x", count: 5_000),
        "__Host-r=\(secret)", "=__Host-\(secret)",
      ], from: url)
    #expect(rejected.count == 8)
    var request = HTTPRequest(url: url)
    request.headers["Cookie"] = jar.cookieHeader(for: url)
    #expect(request.headers["Cookie"]?.contains(secret) == true)
    var texts: [String] = printedForms(of: jar)
    texts += printedForms(of: jar.allCookies)
    texts += printedForms(of: jar.cookies(for: url))
    texts += printedForms(of: rejected)
    texts += printedForms(of: request)
    texts += [request.cURLDescription]
    for cookie in jar.allCookies { texts += printedForms(of: cookie) }
    for rejection in rejected { texts += printedForms(of: rejection) }
    for text in texts {
      #expect(!text.contains(secret), "\(text)")
    }
  }

  /// A closure given to `remove(where:)` that reads the jar (the cookies a URL would get, say)
  /// must not deadlock or crash the process: `remove` runs it under the jar's lock.
  @Test func removeWhereMayReadTheJar() async {
    #if os(Linux) || os(macOS)
      await #expect(processExitsWith: .success) {
        alarm(10)  // a deadlock ends the child process, not the run
        let jar = CookieJar()
        let url = URL(string: "https://a.test/")!
        jar.store(["a=1", "b=2"], from: url)
        jar.remove { cookie in jar.cookies(for: url).first == cookie }
        precondition(jar.allCookies.map(\.name) == ["b"])
      }
    #endif
  }
}
