import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// One call a test makes against a replayed HAR, and what it must get.
struct HARCall: Sendable {
  var method: HTTPMethod
  var url: String
  var body: RequestBody?
  var status: Int
  var answer: Data
  var header: (name: String, value: String)?
}

/// A fixture, and the calls that replay it in order.
struct HARReplayCase: Sendable, CustomTestStringConvertible {
  var file: String
  var calls: [HARCall]
  var testDescription: String { file }

  static let png =
    Data(
      base64Encoded:
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
    )
    ?? Data()

  static let all = [
    HARReplayCase(
      file: "chrome-devtools.har",
      calls: [
        HARCall(
          method: .get, url: "https://api.shop.example.com/v1/cart?currency=EUR", status: 200,
          answer: Data(#"{"items":[],"total":0,"currency":"EUR"}"#.utf8),
          header: ("etag", #"W/"cart-v1""#)),
        HARCall(
          method: .post, url: "https://api.shop.example.com/v1/cart/items",
          body: .data(
            Data(#"{"sku":"TEA-42","quantity":2}"#.utf8), contentType: "application/json"),
          status: 201, answer: Data(#"{"id":7,"sku":"TEA-42","quantity":2,"price":9}"#.utf8),
          header: ("location", "https://api.shop.example.com/v1/cart/items/7")),
        HARCall(
          method: .get, url: "https://api.shop.example.com/v1/cart?currency=EUR", status: 200,
          answer: Data(
            #"{"items":[{"id":7,"sku":"TEA-42","quantity":2}],"total":18,"currency":"EUR"}"#.utf8),
          header: ("etag", #"W/"cart-v2""#)),
      ]),
    HARReplayCase(
      file: "charles-proxy.har",
      calls: [
        HARCall(
          method: .post, url: "https://auth.example.org/oauth/token",
          body: .form([("grant_type", "password"), ("username", "rex"), ("password", "pw")]),
          status: 200,
          answer: Data(
            #"{"access_token":"charles-fixture-at","token_type":"Bearer","expires_in":3600}"#.utf8),
          header: ("Cache-Control", "no-store")),
        HARCall(
          method: .get, url: "https://cdn.example.org/avatars/rex.png?size=1", status: 200,
          answer: png, header: ("Content-Type", "image/png")),
        HARCall(
          method: .delete, url: "https://api.example.org/v2/sessions/current", status: 204,
          answer: Data()),
      ]),
  ]
}

/// Where a replayed HAR answers from.
enum HARReplayer: String, Sendable, CaseIterable {
  case cassette, stubRoutes

  func transport(for har: HAR) async throws -> any Transport {
    switch self {
    case .cassette:
      return try CassetteTransport(har: har)
    case .stubRoutes:
      let stub = StubTransport()
      try await stub.on(har: har)
      return stub
    }
  }
}

@Suite(.timeLimit(.minutes(3))) struct HARReplayTests {
  @Test(arguments: HARReplayCase.all, HARReplayer.allCases)
  func fixturesReplayThroughAPIClient(_ replay: HARReplayCase, _ replayer: HARReplayer)
    async throws
  {
    let har = try harFixture(replay.file)
    let client = APIClient(baseURL: base, transport: try await replayer.transport(for: har))
    for call in replay.calls {
      let answer = try await client.response(
        for: Endpoint<Data>(
          method: call.method, url: url(call.url), body: call.body, decoding: .data))
      #expect(answer.response.status == call.status, "\(call.method) \(call.url)")
      #expect(answer.value == call.answer, "\(call.method) \(call.url)")
      if let header = call.header {
        #expect(answer.response.headers[header.name] == header.value)
      }
    }
  }

  @Test(arguments: HARReplayer.allCases)
  func abortedEntriesAreSkippedWithAReason(_ replayer: HARReplayer) async throws {
    let har = try harFixture("chrome-devtools.har")
    #expect(
      har.skippedEntries.map(\.description) == [
        "HAR entry 3 skipped: status 0: GET https://tracker.example.net/collect.js got no "
          + "response (aborted, blocked or failed)"
      ])
    let transport = try await replayer.transport(for: har)
    let error = await #expect(throws: (any Error).self) {
      _ = try await transport.send(HTTPRequest(url: url("https://tracker.example.net/collect.js")))
    }
    #expect("\(error.map { "\($0)" } ?? "")".contains("GET https://tracker.example.net/collect.js"))
  }

  @Test func stubRoutesAnswerRepeatsInTurnThenTheLastAgain() async throws {
    let stub = StubTransport()
    let skipped = try await stub.on(har: try harFixture("chrome-devtools.har"))
    #expect(skipped.map(\.index) == [3])
    let client = APIClient(baseURL: base, transport: stub)
    var etags: [String?] = []
    for _ in 0..<3 {
      let answer = try await client.response(
        for: Endpoint<Data>(
          url: url("https://api.shop.example.com/v1/cart"),
          query: [URLQueryItem(name: "currency", value: "EUR")], decoding: .data))
      etags.append(answer.response.headers["etag"])
    }
    #expect(etags == [#"W/"cart-v1""#, #"W/"cart-v2""#, #"W/"cart-v2""#])
  }

  @Test func stubRoutesMatchMethodPathAndQuery() async throws {
    let stub = StubTransport()
    try await stub.on(har: try harFixture("chrome-devtools.har"))
    let wrongQuery = try await #require(throws: UnmatchedRequest.self) {
      _ = try await stub.send(
        HTTPRequest(url: url("https://api.shop.example.com/v1/cart?currency=USD")))
    }
    #expect(
      wrongQuery.description.contains(
        "URL: expected https://api.shop.example.com/v1/cart?currency=EUR, sent "
          + "https://api.shop.example.com/v1/cart?currency=USD"))
    #expect(wrongQuery.description.contains("(HAR entries 0, 2)"))
    let wrongMethod = try await #require(throws: UnmatchedRequest.self) {
      _ = try await stub.send(
        HTTPRequest(
          method: .delete, url: url("https://api.shop.example.com/v1/cart?currency=EUR")))
    }
    #expect(wrongMethod.description.contains("method: expected GET, sent DELETE"))
  }

  @Test(arguments: [false, true])
  func unusedRoutesAreReportedUnlessAllowed(_ allowingUnused: Bool) async throws {
    let stub = StubTransport()
    let line = #line + 1
    try await stub.on(har: try harFixture("charles-proxy.har"), allowingUnused: allowingUnused)
    _ = try await stub.send(
      HTTPRequest(method: .delete, url: url("https://api.example.org/v2/sessions/current")))
    let unused = await stub.unusedRoutes
    #expect(
      unused
        == (allowingUnused
          ? []
          : [
            "POST https://auth.example.org/oauth/token (HAR entry 0) (registered at "
              + "HARReplayTests.swift:\(line))",
            "GET https://cdn.example.org/avatars/rex.png?size=1 (HAR entry 1) (registered at "
              + "HARReplayTests.swift:\(line))",
          ]))
  }

  @Test func aCassetteTransportReadsAHARFileAndNamesItWhenNothingMatches() async throws {
    let file = try Fixtures.nearest().url("har/charles-proxy.har")
    let cassette = try CassetteTransport(harAt: file)
    let error = try await #require(throws: CassetteError.self) {
      _ = try await cassette.send(HTTPRequest(url: url("https://api.example.org/v2/other")))
    }
    #expect(error.description.contains(file.path))
    #expect(error.description.contains("DELETE https://api.example.org/v2/sessions/current"))
    #expect(await cassette.unplayedExchanges.count == 3)
  }

  @Test func aHARWrittenAsACassetteReplaysTheSame() async throws {
    let file = temporaryCassette()
    try harFixture("charles-proxy.har").writeCassette(to: file)
    let cassetteText = try String(contentsOf: file, encoding: .utf8)
    for secret in ["charles-fixture-pw", "charles-fixture-at"] {
      #expect(!cassetteText.contains(secret), "\(secret) reached the cassette")
    }
    let client = APIClient(baseURL: base, transport: CassetteTransport(url: file, mode: .none))
    let avatar = try await client.response(
      for: Endpoint<Data>(
        url: url("https://cdn.example.org/avatars/rex.png?size=1"), decoding: .data))
    #expect(avatar.value == HARReplayCase.png)
  }
}

/// README's "HAR" lines, run as written.
@Suite(.timeLimit(.minutes(3))) struct ReadmeHARExampleTests {
  @Test func replaysAChromeSession() async throws {
    let har = try HAR(data: try Fixtures.nearest().data("har/chrome-devtools.har"))
    let client = APIClient(
      baseURL: URL(string: "https://api.shop.example.com/v1")!,
      transport: try CassetteTransport(har: har))
    let cart = try await client.send(
      Endpoint<Data>(path: "cart", query: [URLQueryItem(name: "currency", value: "EUR")]))
    #expect(cart == Data(#"{"items":[],"total":0,"currency":"EUR"}"#.utf8))

    let stub = StubTransport()
    let skipped = try await stub.on(har: har)
    #expect(skipped.map(\.index) == [3])
  }
}
