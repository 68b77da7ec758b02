import Errand
import ErrandStubs
import Foundation
import TestSupport
import Testing

/// Round six, follow-up: an attacker's probes of four small changes: `Pages`' digest of the
/// fetched URLs, contract stubs matched segment for segment, the user agent as a client header,
/// and `secretValues(in:)` parsing the URL only when it has a query or user info. Each test
/// asserts what must happen.
@Suite(.timeLimit(.minutes(2))) struct RoundSixFollowUpPagesHostileTests {
  static func client(_ stub: StubTransport) -> APIClient {
    APIClient(baseURL: base, transport: stub)
  }

  /// Two pages, the second linking back to the first written another way that names the same
  /// resource (RFC 3986 §6.2.2, §6.2.3): each page is fetched once.
  @Test(arguments: [
    "https://API.Example.COM/v1/dogs?cursor=a%2Fb",
    "https://api.example.com:443/v1/dogs?cursor=a%2Fb",
    "https://api.example.com/v1/dogs?cursor=a%2fb",
    "https://api.example.com/v1/dogs?cursor=a%2Fb#top",
    "HTTPS://api.example.com/v1/dogs?cursor=a%2Fb",
    "/v1/dogs?cursor=a%2Fb",
    "dogs?cursor=a%2Fb",
  ])
  func aLinkBackSpelledAnotherWayEndsTheWalk(_ linkBack: String) async throws {
    let stub = StubTransport()
    await stub.on(
      .path("/v1/dogs") && .query("cursor", "a/b"),
      .status(200, body: Data("[]".utf8), headers: ["Link": "</v1/dogs?cursor=c>; rel=\"next\""]))
    await stub.on(
      .path("/v1/dogs") && .query("cursor", "c"),
      .status(200, body: Data("[]".utf8), headers: ["Link": "<\(linkBack)>; rel=\"next\""]))
    let first = Endpoint<[Dog]>(url: URL(string: "https://api.example.com/v1/dogs?cursor=a%2Fb")!)
    var fetched = 0
    for try await _ in Self.client(stub).pages(first) {
      fetched += 1
      if fetched > 5 { break }
    }
    #expect(fetched == 2)
  }

  /// An empty query (`dogs?`) is the page without one, as the client builds it.
  @Test func aLinkBackWithAnEmptyQueryEndsTheWalk() async throws {
    let stub = StubTransport()
    await stub.on(
      .path("/v1/dogs") && !.query("cursor"),
      .status(200, body: Data("[]".utf8), headers: ["Link": "</v1/dogs?cursor=c>; rel=\"next\""]))
    await stub.on(
      .path("/v1/dogs") && .query("cursor", "c"),
      .status(200, body: Data("[]".utf8), headers: ["Link": "</v1/dogs?>; rel=\"next\""]))
    var fetched = 0
    for try await _ in Self.client(stub).pages(Endpoint<[Dog]>(path: "dogs")) {
      fetched += 1
      if fetched > 5 { break }
    }
    #expect(fetched == 2)
  }

  /// Loops of two and three pages: each page once.
  @Test(arguments: [2, 3])
  func aLoopOfSomePagesEndsAfterEachOnce(_ length: Int) async throws {
    let stub = StubTransport { request in
      let page = Int(request.url.query?.dropFirst("page=".count) ?? "0") ?? 0
      let next = "https://api.example.com/v1/dogs?page=\((page + 1) % length)"
      return .status(200, body: Data("[]".utf8), headers: ["Link": "<\(next)>; rel=\"next\""])
    }
    let first = Endpoint<[Dog]>(path: "dogs", query: [URLQueryItem(name: "page", value: "0")])
    var pages: [String] = []
    for try await page in Self.client(stub).pages(first) {
      pages.append(page.request.url.query ?? "")
      if pages.count > 10 { break }
    }
    #expect(pages == (0..<length).map { "page=\($0)" })
  }

  /// A `next` closure that returns the first endpoint again after the second page.
  @Test func aNextClosureBackToTheFirstEndpointEnds() async throws {
    let stub = StubTransport { _ in .status(200, body: Data("[]".utf8)) }
    let first = Endpoint<[Dog]>(path: "dogs")
    let second = Endpoint<[Dog]>(path: "dogs", query: [URLQueryItem(name: "page", value: "2")])
    var fetched = 0
    let pages = Self.client(stub).pages(first) { page in
      page.request.url.query == nil ? second : first
    }
    for try await _ in pages {
      fetched += 1
      if fetched > 5 { break }
    }
    #expect(fetched == 2)
  }

  /// A cursor in a `POST` body (a search API): every page has the same URL, but each is another
  /// page, so the walk goes on until `next` says there is none.
  @Test func aCursorInAPostBodyIsWalkedToItsEnd() async throws {
    let stub = StubTransport { _ in .status(200, body: Data("[]".utf8)) }
    @Sendable func search(_ cursor: Int) -> Endpoint<[Dog]> {
      Endpoint<[Dog]>(method: .post, path: "search", body: .data(Data("cursor=\(cursor)".utf8)))
    }
    var fetched: [String] = []
    let pages = Self.client(stub).pages(search(0)) { page in
      let cursor = Int(String(decoding: page.request.body ?? Data(), as: UTF8.self).dropFirst(7))
      return cursor.flatMap { $0 < 3 ? search($0 + 1) : nil }
    }
    for try await page in pages {
      fetched.append(String(decoding: page.request.body ?? Data(), as: UTF8.self))
      if fetched.count > 10 { break }
    }
    #expect(fetched == ["cursor=0", "cursor=1", "cursor=2", "cursor=3"])
  }

  /// A cursor in a request header: same method, URL and body each page; the digest reads the
  /// headers (all but those made afresh for each call, such as a generated `Idempotency-Key`).
  @Test func aCursorInAHeaderIsWalkedToItsEnd() async throws {
    let stub = StubTransport { _ in .status(200, body: Data("[]".utf8)) }
    @Sendable func page(_ cursor: Int) -> Endpoint<[Dog]> {
      Endpoint<[Dog]>(path: "dogs", headers: ["X-Page-Token": "\(cursor)"])
    }
    var fetched: [String] = []
    let pages = Self.client(stub).pages(page(0)) { response in
      let cursor = Int(response.request.headers["X-Page-Token"] ?? "")
      return cursor.flatMap { $0 < 3 ? page($0 + 1) : nil }
    }
    for try await response in pages {
      fetched.append(response.request.headers["X-Page-Token"] ?? "")
      if fetched.count > 10 { break }
    }
    #expect(fetched == ["0", "1", "2", "3"])
  }

  /// A POST walk whose every page gets a fresh idempotency key, and whose server links back to
  /// the first page: the key does not make the repeated page look new, so the walk ends.
  @Test func aFreshIdempotencyKeyDoesNotHideALoop() async throws {
    let stub = StubTransport { _ in .status(200, body: Data("[]".utf8)) }
    @Sendable func search(_ cursor: Int) -> Endpoint<[Dog]> {
      Endpoint<[Dog]>(method: .post, path: "search", body: .data(Data("cursor=\(cursor)".utf8)))
        .withIdempotencyKey()
    }
    var fetched: [String] = []
    let pages = Self.client(stub).pages(search(0)) { page in
      let cursor = Int(String(decoding: page.request.body ?? Data(), as: UTF8.self).dropFirst(7))
      return cursor.map { search(($0 + 1) % 2) }
    }
    for try await page in pages {
      fetched.append(String(decoding: page.request.body ?? Data(), as: UTF8.self))
      if fetched.count > 10 { break }
    }
    #expect(fetched == ["cursor=0", "cursor=1"])
  }

  /// A long walk with no loop is walked to its end, and pages whose URLs differ only after a
  /// kilobyte are told apart.
  @Test func aLongWalkWithLongSharedPrefixesIsWalkedToItsEnd() async throws {
    let prefix = String(repeating: "p", count: 1_500)
    let count = 1_500
    let stub = StubTransport { request in
      let query = request.url.query ?? ""
      let page = Int(query.dropFirst("cursor=".count + prefix.count)) ?? 0
      let headers: HTTPHeaders =
        page + 1 < count ? ["Link": "</v1/dogs?cursor=\(prefix)\(page + 1)>; rel=\"next\""] : [:]
      return .status(200, body: Data("[]".utf8), headers: headers)
    }
    let first = Endpoint<[Dog]>(
      path: "dogs", query: [URLQueryItem(name: "cursor", value: "\(prefix)0")])
    var fetched = 0
    for try await _ in Self.client(stub).pages(first) { fetched += 1 }
    #expect(fetched == count)
  }
}

@Suite(.timeLimit(.minutes(2))) struct RoundSixFollowUpContractHostileTests {
  static func answered(
    _ contract: Contract, _ endpoint: Endpoint<Data>, base: URL
  ) async throws -> Int {
    let client = APIClient(baseURL: base, transport: contract.stub(baseURL: base))
    return try await client.response(for: endpoint).response.status
  }

  static let bases = [
    URL(string: "https://api.example.com/v1")!, URL(string: "https://api.example.com")!,
  ]

  /// Odd characters in a segment: each case is answered by its own answer, and a name no case
  /// has is unmatched.
  @Test(arguments: bases)
  func oddSegmentsAreEachAnsweredByTheirOwnCase(_ base: URL) async throws {
    let paths = ["files/{id}", "files/100%", "files/a b", "files/café", "files/a%2Fb", "files/%7B"]
    let contract = Contract(
      "files",
      paths.enumerated().map { index, path in
        .status(path, Endpoint<Data>(path: path, decoding: .data), 200 + index)
      })
    for (index, path) in paths.enumerated() {
      #expect(
        try await Self.answered(contract, Endpoint<Data>(path: path, decoding: .data), base: base)
          == 200 + index, "\(path)")
    }
    await #expect(throws: (any Error).self) {
      _ = try await Self.answered(
        contract, Endpoint<Data>(path: "files/x", decoding: .data), base: base)
    }
  }

  /// `dogs` and `dogs/` are two paths (a server may route them apart): each case answers its own.
  @Test(arguments: bases)
  func aTrailingSlashIsAPathOfItsOwn(_ base: URL) async throws {
    let contract = Contract(
      "dogs",
      [
        .status("plain", Endpoint<Data>(path: "dogs", decoding: .data), 201),
        .status("slash", Endpoint<Data>(path: "dogs/", decoding: .data), 202),
      ])
    #expect(
      try await Self.answered(contract, Endpoint<Data>(path: "dogs", decoding: .data), base: base)
        == 201)
    #expect(
      try await Self.answered(contract, Endpoint<Data>(path: "dogs/", decoding: .data), base: base)
        == 202)
  }

  /// An empty segment (`a//b`) is a segment: not the same path as `a/b`.
  @Test func anEmptySegmentIsASegment() async throws {
    let client = APIClient(baseURL: base, transport: StubTransport())
    let doubled = try client.makeRequest(for: Endpoint<Data>(path: "a//b", decoding: .data))
    let single = try client.makeRequest(for: Endpoint<Data>(path: "a/b", decoding: .data))
    let contract = Contract(
      "a",
      [
        .status("single", Endpoint<Data>(path: "a/b", decoding: .data), 201),
        .status("doubled", Endpoint<Data>(path: "a//b", decoding: .data), 202),
      ])
    #expect(
      try await Self.answered(contract, Endpoint<Data>(path: "a/b", decoding: .data), base: base)
        == 201)
    #expect(
      try await Self.answered(contract, Endpoint<Data>(path: "a//b", decoding: .data), base: base)
        == 202)
    #expect(doubled.url.path(percentEncoded: true) == "/v1/a//b")
    #expect(single.url.path(percentEncoded: true) == "/v1/a/b")
  }

  /// One path, two cases told apart by their query items.
  @Test func onePathTwoQueriesEachAnswerTheirOwn() async throws {
    let contract = Contract(
      "dogs",
      [
        .status(
          "page 2",
          Endpoint<Data>(
            path: "dogs", query: [URLQueryItem(name: "page", value: "2")], decoding: .data), 202),
        .status(
          "page 1",
          Endpoint<Data>(
            path: "dogs", query: [URLQueryItem(name: "page", value: "1")], decoding: .data), 201),
      ])
    for page in [1, 2] {
      let endpoint = Endpoint<Data>(
        path: "dogs", query: [URLQueryItem(name: "page", value: "\(page)")], decoding: .data)
      #expect(try await Self.answered(contract, endpoint, base: base) == 200 + page)
    }
  }

  /// The contract's own stub honours it; a stub that answers one odd path wrongly is reported
  /// for that case alone.
  @Test func violationsAreReportedForTheOddCaseAlone() async throws {
    let contract = Contract(
      "files",
      [
        .status("braces", Endpoint<Data>(path: "files/{id}", decoding: .data), 201),
        .status("encoded slash", Endpoint<Data>(path: "files/a%2Fb", decoding: .data), 202),
      ])
    #expect(await contract.violations(against: contract.stub(baseURL: base), baseURL: base).isEmpty)
    let wrong = StubTransport()
    await wrong.on(.path("/v1/files/{id}"), .status(201))
    let found = await contract.violations(against: wrong, baseURL: base)
    #expect(found.map(\.caseName) == ["encoded slash"])
  }

  /// The unmatched report's path line tells the case's path from the request's when they differ
  /// only in an encoded slash.
  @Test(arguments: [("files/a/b", "files/a%2Fb"), ("files/a%2Fb", "files/a/b")])
  func theUnmatchedReportTellsAnEncodedSlashApart(_ paths: (String, String)) async throws {
    let contract = Contract(
      "files", [.status("case", Endpoint<Data>(path: paths.0, decoding: .data), 201)])
    let stub = contract.stub(baseURL: base)
    let request = try APIClient(baseURL: base, transport: stub).makeRequest(
      for: Endpoint<Data>(path: paths.1, decoding: .data))
    let error = await #expect(throws: UnmatchedRequest.self) { try await stub.send(request) }
    let report = "\(try #require(error))"
    let line = try #require(
      report.split(separator: "\n").first { $0.contains("path: expected") }, "\(report)")
    let parts = line.split(separator: ",").map { $0.split(separator: " ").last ?? "" }
    #expect(parts.count == 2 && parts[0] != parts[1], "\(line)")
  }
}

@Suite(.timeLimit(.minutes(2))) struct RoundSixFollowUpUserAgentHostileTests {
  static let agent = "Tenant-R6F-Agent/3.1"

  static func client(
    _ stub: StubTransport, listed: Bool, trusting hosts: Set<String> = [],
    middleware: [any Middleware] = []
  ) -> APIClient {
    var configuration = APIClient.Configuration(
      headers: ["X-Tenant-Key": "tenant-R6F"], middleware: middleware)
    configuration.userAgent = agent
    configuration.trustedHosts = hosts
    if !listed { configuration.crossOriginHeaders.remove("user-agent") }
    return APIClient(baseURL: base, transport: stub, configuration: configuration)
  }

  /// A next page whose `Link` leaves the origin carries the user agent only while the list
  /// names it; at home it always does.
  @Test(arguments: [false, true])
  func aPageElsewhereGetsTheUserAgentOnlyWhenListed(_ listed: Bool) async throws {
    let stub = StubTransport()
    await stub.on(
      .path("/v1/dogs"),
      .status(
        200, body: Data("[]".utf8),
        headers: ["Link": "<https://other.example.net/dogs?page=2>; rel=\"next\""]))
    await stub.on(.path("/dogs"), .status(200, body: Data("[]".utf8)))
    var agents: [String?] = []
    for try await _ in Self.client(stub, listed: listed).pages(Endpoint<[Dog]>(path: "dogs")) {}
    for request in await stub.requests { agents.append(request.headers["User-Agent"]) }
    #expect(agents == [Self.agent, listed ? Self.agent : nil])
  }

  /// A trusted host is home: an absolute-URL endpoint there gets the user agent, as it gets the
  /// default headers; a redirect there treats the user agent as it treats a default header.
  @Test func aTrustedHostIsHomeForTheUserAgent() async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      .get, "/v1/start", .status(302, headers: ["Location": "https://files.example.net/x"]))
    await stub.on(.get, "/x", .status(200))
    let client = Self.client(stub, listed: false, trusting: ["files.example.net"])
    _ = try await client.response(
      for: Endpoint<Data>(url: URL(string: "https://files.example.net/x")!, decoding: .data))
    let direct = try #require(await stub.requests.last)
    #expect(direct.headers["User-Agent"] == Self.agent)
    #expect(direct.headers["X-Tenant-Key"] == "tenant-R6F")
    _ = try await client.response(for: Endpoint<Data>(path: "start", decoding: .data))
    let redirected = try #require(await stub.requests.last)
    #expect(redirected.url.host == "files.example.net")
    #expect(
      (redirected.headers["User-Agent"] == nil) == (redirected.headers["X-Tenant-Key"] == nil))
  }

  /// A next page that leaves HTTPS for plain HTTP on a trusted host withholds what another
  /// origin would not get: the user agent too, when the list does not name it.
  @Test(arguments: [false, true])
  func aDowngradedPageToATrustedHostWithholdsTheUserAgent(_ listed: Bool) async throws {
    let stub = StubTransport()
    await stub.on(
      .path("/v1/dogs"),
      .status(
        200, body: Data("[]".utf8),
        headers: ["Link": "<http://files.example.net/dogs?page=2>; rel=\"next\""]))
    await stub.on(.path("/dogs"), .status(200, body: Data("[]".utf8)))
    let client = Self.client(stub, listed: listed, trusting: ["files.example.net"])
    for try await _ in client.pages(Endpoint<[Dog]>(path: "dogs")) {}
    let last = try #require(await stub.requests.last)
    #expect(last.url.scheme == "http")
    #expect(last.headers["User-Agent"] == (listed ? Self.agent : nil))
    #expect(last.headers["X-Tenant-Key"] == nil)
  }

  /// An endpoint's own `User-Agent` at another origin is its own choice: sent, listed or not.
  @Test(arguments: [false, true])
  func anEndpointsOwnUserAgentGoesWhereItSays(_ listed: Bool) async throws {
    let stub = StubTransport { _ in .status(200) }
    _ = try await Self.client(stub, listed: listed).response(
      for: Endpoint<Data>(
        url: URL(string: "https://other.example.net/x")!, headers: ["User-Agent": "Mine/1"],
        decoding: .data))
    #expect(await stub.requests.last?.headers["User-Agent"] == "Mine/1")
  }

  /// Two clients that differ only in their user agent, sharing one cache: with the default
  /// list the user agent is no client secret, so the second client gets the stored answer (a
  /// `Vary` would say otherwise); with `user-agent` out of the list, the answers are kept apart
  /// like a tenant key's. Either way an answer is reused by the client that stored it.
  @Test(arguments: [false, true])
  func theCacheKeysTheUserAgentOnlyAsAClientHeader(_ listed: Bool) async throws {
    let cache = HTTPCache()
    let served = Locked(0)
    let stub = StubTransport { _ in
      served.withLock { $0 += 1 }
      return .status(
        200, body: Data("[]".utf8), headers: ["Cache-Control": "max-age=600"])
    }
    func client(_ agent: String) -> APIClient {
      var configuration = APIClient.Configuration(middleware: [CachingMiddleware(cache: cache)])
      configuration.userAgent = agent
      if !listed { configuration.crossOriginHeaders.remove("user-agent") }
      return APIClient(baseURL: base, transport: stub, configuration: configuration)
    }
    let first = client("App/1")
    _ = try await first.send(Endpoint<[Dog]>(path: "dogs"))
    _ = try await first.send(Endpoint<[Dog]>(path: "dogs"))
    #expect(served.withLock { $0 } == 1)
    _ = try await client("App/2").send(Endpoint<[Dog]>(path: "dogs"))
    #expect(served.withLock { $0 } == (listed ? 1 : 2))
  }
}

@Suite(.timeLimit(.minutes(2))) struct RoundSixFollowUpSecretsHostileTests {
  struct Row: Sendable, CustomTestStringConvertible {
    var url: URL
    var secret: String
    var testDescription: String { url.absoluteString }
  }

  static let rows: [Row] = [
    Row(
      url: URL(
        string: "?access_token=tokR6Frel1234",
        relativeTo: URL(string: "https://api.example.com/v1/dogs"))!,
      secret: "tokR6Frel1234"),
    Row(
      url: URL(
        string: "#top",
        relativeTo: URL(string: "https://api.example.com/v1/dogs?token=tokR6Fbase5678"))!,
      secret: "tokR6Fbase5678"),
    Row(
      url: URL(string: "https://api.example.com/v1/dogs?&api_key=tokR6Fempty9012&")!,
      secret: "tokR6Fempty9012"),
    Row(
      url: URL(string: "https://tokR6Fuser3456@api.example.com/v1/dogs")!, secret: "tokR6Fuser3456"),
    Row(
      url: URL(string: "https://:tokR6Fpass7890@api.example.com/v1/dogs")!, secret: "tokR6Fpass7890"
    ),
    Row(
      url: URL(string: "https://api.example.com/v1/dogs#access_token=tokR6Ffrag1234")!,
      secret: "tokR6Ffrag1234"),
    // A hash route with a query in the fragment, as single-page apps write OAuth callbacks.
    Row(
      url: URL(string: "https://api.example.com/v1/dogs#/cb?access_token=tokR6Fspa1234&x=1")!,
      secret: "tokR6Fspa1234"),
    // A query or user that does not percent-decode (`%FF` is no UTF-8 on its own).
    Row(
      url: URL(string: "https://api.example.com/v1/dogs?token=tokR6Fbad%FF5678")!,
      secret: "tokR6Fbad%FF5678"),
    Row(
      url: URL(string: "https://tokR6Fuser%FF9012:pw@api.example.com/v1/dogs")!,
      secret: "tokR6Fuser%FF9012"),
  ]

  /// Sets the request's URL, as a middleware may.
  struct SetsURL: Middleware {
    var url: URL
    func intercept(
      _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
      var request = request
      request.url = url
      return try await next(request)
    }
  }

  /// A secret the URL carries, echoed by the server in a response header, is printed in no
  /// listener event, log line or `APIError` description.
  @Test(arguments: rows)
  func aSecretInTheURLEchoedIsScrubbed(_ row: Row) async throws {
    let listener = RecordingListener()
    let lines = Locked<[LogEvent]>([])
    let stub = StubTransport { _ in .status(401, headers: ["X-Debug-Echo": "got \(row.secret)"]) }
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        middleware: [
          SetsURL(url: row.url), LoggingMiddleware { event in lines.withLock { $0.append(event) } },
        ],
        eventListeners: [listener]))
    let error = await #expect(throws: APIError.self) {
      try await client.send(Endpoint<Data>(path: "dogs", decoding: .data))
    }
    let events = await listener.eventsOfOneCall()
    var forms = printedForms(of: events) + printedForms(of: error as Any)
    forms += lines.withLock { $0 }.flatMap { printedForms(of: $0 as Any) }
    #expect(!forms.isEmpty)
    for form in forms {
      #expect(!form.contains(row.secret), "\(form)")
    }
  }

  /// A secret in a path parameter (`;token=`) is not a query item: whatever the redaction
  /// says of it, `secretValues(in:)` finds what it found before the change (nothing).
  @Test func anEmptyQueryAndPathParametersFindNothing() {
    for address in [
      "https://api.example.com/v1/dogs?", "https://api.example.com/v1/dogs;token=tokR6Fsemi1234",
    ] {
      let request = HTTPRequest(method: .get, url: URL(string: address)!)
      #expect(Redaction.default.secretValues(in: request).isEmpty, "\(address)")
    }
  }
}
