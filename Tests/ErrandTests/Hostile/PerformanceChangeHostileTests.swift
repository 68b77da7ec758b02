import Dispatch
import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

/// Probes of the performance change for issue 44: the URLs a client keeps for query-less paths,
/// the scheme and framing-name checks read without lowercase copies, `Locked` as one allocation
/// and `HTTPHeaders.reserveCapacity`. Every answer is compared with the one the code gave before
/// (a fresh client, which has kept nothing, builds each URL as the code at e05a7ac did).
@Suite(.timeLimit(.minutes(3))) struct PerformanceChangeHostileTests {
  static let base = URL(string: "https://api.example.com/v1")!

  static func client(_ base: URL = base) -> APIClient {
    APIClient(
      baseURL: base, transport: StubTransport(),
      configuration: APIClient.Configuration(timeout: nil))
  }

  /// The URL a client that has kept nothing builds for `path`: the answer before the change.
  static func freshURL(_ path: String, base: URL = base) throws -> URL {
    try client(base).makeRequest(for: Endpoint<Void>(path: path)).url
  }

  static func url(_ client: APIClient, _ path: String) throws -> URL {
    try client.makeRequest(for: Endpoint<Void>(path: path)).url
  }

  // MARK: - The URLs a client keeps

  /// Paths that Swift's `String ==` calls equal (canonically equivalent) but whose UTF-8 bytes,
  /// and so whose percent-encoded URLs, differ; and paths that differ only by case, a percent
  /// sign or a slash. Asked in turn on one client, each gets the URL built for its own bytes,
  /// never the one kept for the other.
  @Test(arguments: [
    ("caf\u{E9}", "cafe\u{301}"),  // é precomposed and decomposed
    ("users/K", "users/\u{212A}"),  // Latin K and KELVIN SIGN
    ("\u{C5}ngstr\u{F6}m", "\u{212B}ngstro\u{308}m"),  // Å and ANGSTROM SIGN, ö decomposed
    ("ohm/\u{3A9}", "ohm/\u{2126}"),  // Greek Omega and OHM SIGN
    ("a;b", "a\u{37E}b"),  // semicolon and GREEK QUESTION MARK
    ("Users", "users"),
    ("a%20b", "a b"),
    ("100%", "100%25"),
    ("", "/"),
    ("x/", "x"),
    ("//x", "x"),
  ])
  func equalLookingPathsGetTheirOwnURLs(first: String, second: String) throws {
    let client = Self.client()
    let expectedFirst = try Self.freshURL(first)
    let expectedSecond = try Self.freshURL(second)
    for _ in 0..<3 {
      #expect(try Self.url(client, first).absoluteString == expectedFirst.absoluteString)
      #expect(try Self.url(client, second).absoluteString == expectedSecond.absoluteString)
    }
    let reversed = Self.client()
    for _ in 0..<3 {
      #expect(try Self.url(reversed, second).absoluteString == expectedSecond.absoluteString)
      #expect(try Self.url(reversed, first).absoluteString == expectedFirst.absoluteString)
    }
  }

  /// Paths that look like dot segments but are not (percent-encoded dots, three dots, dot
  /// look-alikes), percent signs and odd slashes get the URL a fresh client builds, at every call,
  /// under a base URL with and without a path.
  @Test(
    arguments: [
      "%2E%2E", "%2e", ".%2E", "...", "a/.../b", "..a", "a..", "\u{2024}\u{2024}",
      "\u{FF0E}\u{FF0E}",
      "%", "%%", "%ZZ", "a%2Fb", "a//b", "/", "", "///", "?x", "#frag", "a+b", "\u{FB01}le",
    ], ["https://api.example.com", "https://api.example.com/v1/", "https://api.example.com/v1?k=v"])
  func dotAndPercentLookAlikesMatchAFreshClient(path: String, base: String) throws {
    let base = URL(string: base)!
    let client = Self.client(base)
    let expected = try Self.freshURL(path, base: base)
    for _ in 0..<3 {
      #expect(try Self.url(client, path) == expected)
    }
  }

  /// The canonically equivalent pairs do encode differently: the probe above would catch a
  /// mix-up.
  @Test func canonicallyEquivalentPathsEncodeDifferently() throws {
    #expect("caf\u{E9}" == "cafe\u{301}")
    #expect("users/K" == "users/\u{212A}")
    #expect(
      try Self.freshURL("caf\u{E9}").absoluteString == "https://api.example.com/v1/caf%C3%A9")
    #expect(
      try Self.freshURL("cafe\u{301}").absoluteString == "https://api.example.com/v1/cafe%CC%81")
    #expect(try Self.freshURL("users/K").absoluteString == "https://api.example.com/v1/users/K")
    #expect(
      try Self.freshURL("users/\u{212A}").absoluteString
        == "https://api.example.com/v1/users/%E2%84%AA")
  }

  /// Two clients with different base URLs (a query, credentials, a port, a trailing slash) never
  /// get each other's URL for the same path, in either order.
  @Test(arguments: [
    "https://other.example.com/v2/", "http://user:secret@api.example.com:8080/v1?key=1",
    "HTTPS://API.EXAMPLE.COM", "https://api.example.com/v1/",
  ])
  func aPathKeptByOneClientIsNotServedToAnother(otherBase: String) throws {
    let other = URL(string: otherBase)!
    let one = Self.client()
    let two = Self.client(other)
    for path in ["dogs", "dogs/42", "", "caf\u{E9}"] {
      let expectedOne = try Self.freshURL(path)
      let expectedTwo = try Self.freshURL(path, base: other)
      #expect(try Self.url(one, path) == expectedOne)
      #expect(try Self.url(two, path) == expectedTwo)
      #expect(try Self.url(one, path) == expectedOne)
      #expect(try Self.url(two, path) == expectedTwo)
    }
  }

  /// `.` and `..` segments throw at every call, however often they are asked, and leave nothing
  /// kept; the client still builds good paths afterwards.
  @Test(arguments: [".", "..", "a/../b", "a/./b", "/..", "../secret", "a/..", "./"])
  func dotSegmentsThrowEveryTime(path: String) throws {
    let client = Self.client()
    for _ in 0..<3 {
      let error = #expect(throws: APIError.self) { try Self.url(client, path) }
      #expect(error?.kind == .invalidRequest)
    }
    #expect(client.builtURLs.count == 0)
    #expect(try Self.url(client, "a/b") == Self.freshURL("a/b"))
    let error = #expect(throws: APIError.self) { try Self.url(client, path) }
    #expect(error?.kind == .invalidRequest)
  }

  /// A client whose base URL cannot take paths throws at every call, never keeping an answer.
  @Test(arguments: ["file:///tmp/api", "ftp://files.example.com/", "https:///no-host"])
  func aBaseURLThatCannotTakePathsThrowsEveryTime(base: String) {
    let client = Self.client(URL(string: base)!)
    for _ in 0..<3 {
      let error = #expect(throws: APIError.self) { try Self.url(client, "dogs") }
      #expect(error?.kind == .invalidRequest)
    }
    #expect(client.builtURLs.count == 0)
  }

  /// Ten thousand distinct paths (an ID in each) keep at most 256 of them, and every one gets
  /// its own URL.
  @Test func tenThousandPathsStayBounded() throws {
    let client = Self.client()
    for id in 0..<10_000 {
      let url = try Self.url(client, "dogs/\(id)")
      #expect(url.absoluteString == "https://api.example.com/v1/dogs/\(id)")
      #expect(client.builtURLs.count <= BuiltURLs.capacity)
    }
    #expect(client.builtURLs.count <= BuiltURLs.capacity)
  }

  /// A path of 512 UTF-8 bytes is kept, one of 513 is not; both get the right URL each time.
  @Test(arguments: [511, 512, 513, 4096])
  func longPathsAreBuiltRightAndOnlyShortOnesKept(length: Int) throws {
    let client = Self.client()
    let path = String(repeating: "\u{E9}", count: length / 2) + (length % 2 == 1 ? "x" : "")
    #expect(path.utf8.count == length)
    let expected = try Self.freshURL(path)
    for _ in 0..<2 {
      #expect(try Self.url(client, path) == expected)
    }
    #expect(client.builtURLs.count == (length <= BuiltURLs.longestPath ? 1 : 0))
  }

  /// An endpoint with an absolute URL, or with query items, is built as before and is not
  /// answered from (nor kept as) the URL of a query-less path.
  @Test func absoluteURLsAndQueriesAreNotKeptOrServedFromTheKeptURLs() throws {
    let client = Self.client()
    #expect(try Self.url(client, "dogs") == Self.freshURL("dogs"))
    let absolute = URL(string: "https://elsewhere.example.com/dogs")!
    let request = try client.makeRequest(for: Endpoint<String>(url: absolute))
    #expect(request.url == absolute)
    let queried = try client.makeRequest(
      for: Endpoint<Void>(path: "dogs", query: [URLQueryItem(name: "page", value: "2")]))
    #expect(queried.url.absoluteString == "https://api.example.com/v1/dogs?page=2")
    #expect(client.builtURLs.count == 1)
    #expect(try Self.url(client, "dogs").absoluteString == "https://api.example.com/v1/dogs")
  }

  /// Many tasks building overlapping paths at once on one client (the cache being cleared while
  /// they run) each get the URL for their own path.
  @Test func concurrentCallsGetTheirOwnURLs() async throws {
    let client = Self.client()
    let paths =
      (0..<300).map { "dogs/\($0)" } + ["caf\u{E9}", "cafe\u{301}", "users/K", "users/\u{212A}"]
    var expected: [String] = []
    for path in paths {
      expected.append(try Self.freshURL(path).absoluteString)
    }
    let table = expected
    let wrong = await withTaskGroup(of: Int.self) { group in
      for task in 0..<16 {
        group.addTask {
          var wrong = 0
          for round in 0..<4 {
            for index in paths.indices {
              let pick = (index * 7 + task * 13 + round) % paths.count
              let url = try? Self.url(client, paths[pick])
              if url?.absoluteString != table[pick] {
                wrong += 1
              }
            }
          }
          return wrong
        }
      }
      return await group.reduce(0, +)
    }
    #expect(wrong == 0)
    #expect(client.builtURLs.count <= BuiltURLs.capacity)
  }

  // MARK: - The scheme check

  /// The scheme check answers as `lowercased()` did: `http` and `https` in any case pass,
  /// anything else (a longer, shorter or look-alike scheme) is refused.
  @Test(arguments: [
    "http", "https", "HTTP", "HTTPS", "hTtPs", "HttP", "httpx", "htt", "htts", "httq", "ftp",
    "ws", "wss", "file", "h", "httpss", "https1", "http-s", "http+unix", "hxxp", "HTTPs",
  ])
  func schemesAreCheckedAsBefore(scheme: String) throws {
    let url = try #require(URL(string: "\(scheme)://api.example.com/dogs"))
    let request = HTTPRequest(url: url)
    let before = ["http", "https"].contains(url.scheme?.lowercased() ?? "")
    #expect((request.validationProblem == nil) == before)
    if !before {
      #expect(request.validationProblem?.contains("scheme must be http or https") == true)
    }
  }

  /// Every scheme of four or five bytes that differs from `http` or `https` in one byte is
  /// refused; the same letters in another case pass.
  @Test func everyOneByteChangeOfTheSchemeIsRefused() throws {
    var checked = 0
    for word in ["http", "https"] {
      let bytes = Array(word.utf8)
      for position in bytes.indices {
        for byte in UInt8(0x21)...UInt8(0x7E) where byte != bytes[position] {
          var changed = bytes
          changed[position] = byte
          let scheme = String(decoding: changed, as: UTF8.self)
          guard let url = URL(string: "\(scheme)://api.example.com/"), url.scheme == scheme
          else { continue }
          checked += 1
          let before = ["http", "https"].contains(scheme.lowercased())
          #expect(
            (HTTPRequest(url: url).validationProblem == nil) == before, "\(scheme)")
        }
      }
    }
    #expect(checked > 50)
  }

  /// Schemes with non-ASCII look-alikes or a space never make a URL that passes.
  @Test(arguments: ["\u{4BB}ttp", "htt\u{440}", "https ", " https", "http\u{0}", "\u{FF48}ttp"])
  func lookAlikeSchemesNeverPass(scheme: String) {
    guard let url = URL(string: "\(scheme)://api.example.com/") else { return }
    #expect(HTTPRequest(url: url).validationProblem != nil)
  }

  // MARK: - The framing-name check

  static let framingNameForms: [String] = HTTPRequest.framingHeaderNames.sorted().flatMap {
    name in
    [
      name, name.uppercased(), name.prefix(1).uppercased() + name.dropFirst(),
      String(
        name.enumerated().map {
          $0.offset.isMultiple(of: 2) ? Character($0.element.uppercased()) : $0.element
        }),
    ]
  }

  /// Every framing name, in lowercase, uppercase, capitalized and alternating case, is refused
  /// with the framing message.
  @Test(arguments: framingNameForms)
  func framingNamesInAnyCaseAreRefused(name: String) throws {
    var headers = HTTPHeaders()
    headers.add(name, "1")
    let request = HTTPRequest(url: Self.base, headers: headers)
    #expect(request.validationProblem?.contains("\"\(name)\" frames the message") == true)
  }

  /// Names that are not framing names (one byte longer or shorter, another first letter, 18
  /// bytes starting with `c`, a space, non-ASCII) answer as before: a token passes, anything else
  /// is refused as not a token, never as framing.
  @Test(arguments: [
    "t", "tes", "te ", " te", "TEx", "xte", "content-lengthx", "content-length-xyz",
    "transfer-encodings", "x-content-length", "hosts", "ost", "Cookie", "Keep-Alives",
    "proxy-connectio", "upgrade2", "trailers", "caf\u{E9}", "\u{212A}eep-alive", "\u{C9}te",
    "t\u{E9}", "\u{130}ost", "Content-Type", "Authorization", "cache-control",
  ])
  func otherNamesAreNotFraming(name: String) throws {
    var headers = HTTPHeaders()
    headers.add(name, "1")
    let request = HTTPRequest(url: Self.base, headers: headers)
    let problem = request.validationProblem
    #expect(problem?.contains("frames the message") != true)
    let isToken = name.utf8.allSatisfy { byte in
      byte < 0x80
        && (Character(Unicode.Scalar(byte)).isLetter || Character(Unicode.Scalar(byte)).isNumber
          || "!#$%&'*+-.^_`|~".utf8.contains(byte))
    }
    #expect((problem == nil) == isToken, "\(problem ?? "nil")")
  }

  // MARK: - Locked

  /// Copies share one value and one lock: increments from many threads through copies all land.
  @Test func copiesShareOneValueAcrossThreads() {
    let locked = Locked(0)
    let copies = (0..<8).map { _ in locked }
    DispatchQueue.concurrentPerform(iterations: 8) { index in
      let copy = copies[index]
      for _ in 0..<20_000 {
        copy.withLock { $0 += 1 }
      }
    }
    #expect(locked.withLock { $0 } == 160_000)
  }

  /// A body that throws leaves its change, releases the lock and rethrows the error.
  @Test func aThrowingBodyReleasesTheLock() {
    struct Boom: Error {}
    let locked = Locked([1])
    for round in 0..<3 {
      #expect(throws: Boom.self) {
        try locked.withLock { value in
          value.append(round)
          throw Boom()
        }
      }
    }
    #expect(locked.withLock { $0 } == [1, 0, 1, 2])
  }

  final class Token: Sendable {}

  /// The value is released with the last copy of its `Locked`, and many made and dropped (each
  /// with its mutex) neither crash nor keep their values.
  @Test func theValueIsReleasedWithTheLastCopy() {
    weak var released: Token?
    do {
      let token = Token()
      released = token
      let locked = Locked(token)
      var copy: Locked<Token>? = locked
      #expect(copy?.withLock { $0 === token } == true)
      copy = nil
      #expect(released != nil)
      _ = locked.withLock { $0 }
    }
    #expect(released == nil)
    var total = 0
    for index in 0..<100_000 {
      let locked = Locked([index])
      total += locked.withLock { $0[0] }
    }
    #expect(total == 4_999_950_000)
  }

  // MARK: - HTTPHeaders.reserveCapacity

  /// Reserving room changes nothing that can be seen: equality, hash, order and lookup.
  @Test(arguments: [0, 1, 16, 1000])
  func reservingRoomChangesNothing(count: Int) {
    var plain = HTTPHeaders()
    var reserved = HTTPHeaders()
    reserved.reserveCapacity(count)
    for (name, value) in [("Set-Cookie", "a=1"), ("set-cookie", "b=2"), ("X-One", "1")] {
      plain.add(name, value)
      reserved.add(name, value)
    }
    #expect(plain == reserved)
    #expect(plain.hashValue == reserved.hashValue)
    #expect(reserved.values(for: "SET-COOKIE") == ["a=1", "b=2"])
    #expect(reserved.fields == plain.fields)
  }
}
