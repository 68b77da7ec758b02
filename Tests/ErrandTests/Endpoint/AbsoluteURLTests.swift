import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Endpoints at absolute URLs, and credentials kept to the client's own origin.
@Suite(.timeLimit(.minutes(3))) struct AbsoluteURLTests {
  struct Tokens: TokenProvider {
    func currentToken() async throws -> String? { "t0k3n" }
    func refreshToken() async throws -> String { "t0k3n" }
  }

  static func client(_ stub: StubTransport, crossOrigin: Set<String>? = nil) -> APIClient {
    var configuration = APIClient.Configuration(
      headers: [
        "X-API-Key": "k3y", "X-Trace": "abc", "Tenant-Key": "t3nant", "Accept-Language": "de",
      ],
      middleware: [BearerAuthenticationMiddleware(provider: Tokens())])
    if let crossOrigin { configuration.crossOriginHeaders = crossOrigin }
    return APIClient(baseURL: base, transport: stub, configuration: configuration)
  }

  @Test func anAbsoluteURLReadsTextAndRawBodiesAsAPathDoes() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/readme", .status(200, body: Data("plain text".utf8)))
    let url = try #require(URL(string: "https://api.example.com/v1/readme"))
    let client = Self.client(stub)
    #expect(try await client.send(Endpoint<String>(url: url)) == "plain text")
    #expect(try await client.send(Endpoint<Data>(url: url)) == Data("plain text".utf8))
    #expect(try await client.send(Endpoint<String>(path: "readme")) == "plain text")
  }

  @Test func anAbsoluteURLAtTheClientsOriginGetsItsCredentials() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs", .json([Dog(name: "Rex")]))
    let url = try #require(URL(string: "https://api.example.com/v1/dogs?page=2"))
    _ = try await Self.client(stub).send(
      Endpoint<[Dog]>(
        url: url, query: [URLQueryItem(name: "size", value: "10")], requiresAuthentication: true))
    let sent = try await stub.nextRequest()
    #expect(sent.url.absoluteString == "https://api.example.com/v1/dogs?page=2&size=10")
    #expect(sent.headers["Authorization"] == "Bearer t0k3n")
    #expect(sent.headers["X-API-Key"] == "k3y")
  }

  @Test(arguments: [
    "https://uploads.example.net/put?sig=abc", "http://api.example.com/v1/dogs",
    "https://api.example.com:8443/v1/dogs",
  ])
  func anotherOriginGetsOnlyTheSafeDefaultHeaders(address: String) async throws {
    let stub = StubTransport { _ in .status(200) }
    let url = try #require(URL(string: address))
    _ = try await Self.client(stub).send(
      Endpoint<Data>(
        url: url, headers: ["X-Upload-Part": "3"], requiresAuthentication: true, decoding: .data))
    let sent = try await stub.nextRequest()
    #expect(sent.url == url)
    // Deny by default: a default header goes only if it is safe anywhere, secret or not.
    for name in ["Authorization", "X-API-Key", "Tenant-Key", "X-Trace"] {
      #expect(sent.headers[name] == nil, "\(name) went to \(address)")
    }
    #expect(sent.headers["Accept-Language"] == "de")
    #expect(sent.headers["User-Agent"]?.hasPrefix("Errand/") == true)
    #expect(sent.headers["X-Upload-Part"] == "3", "the endpoint's own headers are sent as written")
  }

  /// `crossOriginHeaders` widens (or narrows) what goes; a header the redaction hides never does.
  @Test func theCrossOriginListSaysWhichDefaultsGo() async throws {
    let stub = StubTransport { _ in .status(200) }
    let url = try #require(URL(string: "https://uploads.example.net/put"))
    _ = try await Self.client(stub, crossOrigin: ["X-TRACE", "x-api-key"]).send(
      Endpoint<Data>(url: url, decoding: .data))
    let sent = try await stub.nextRequest()
    #expect(sent.headers["X-Trace"] == "abc")
    #expect(sent.headers["X-API-Key"] == nil, "a header the redaction hides is never sent there")
    #expect(sent.headers["Accept-Language"] == nil)
  }

  @Test(arguments: ["ftp://files.example.com/x", "file:///etc/passwd", "/relative/path"])
  func onlyHTTPURLsWithAHostAreAccepted(address: String) throws {
    let url = try #require(URL(string: address))
    let error = try #require(throws: APIError.self) {
      try makeClient().makeRequest(for: Endpoint<Data>(url: url, decoding: .data))
    }
    #expect(
      error.invalidRequestReason?.hasSuffix("the URL needs an http or https scheme and a host.")
        == true)
  }
}

@Suite(.timeLimit(.minutes(3))) struct PaginationTests {
  static let dogs = (1...5).map { Dog(name: "Dog \($0)") }

  @Test func followsLinkHeadersToTheLastPage() async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/dogs", .pages([Array(Self.dogs[0..<2]), Array(Self.dogs[2..<4]), [Self.dogs[4]]]))
    var names: [String] = []
    for try await page in client(stub).pages(Endpoint<[Dog]>(path: "dogs")) {
      names += page.value.map(\.name)
    }
    #expect(names == Self.dogs.map(\.name))
    #expect(await stub.requests.map { $0.url.query ?? "" } == ["", "page=2", "page=3"])
  }

  @Test func followsACursorInTheBody() async throws {
    struct Page: Codable, Sendable {
      var dogs: [Dog]
      var cursor: String?
    }
    let stub = StubTransport()
    await stub.on(.query("cursor", "c2"), .json(Page(dogs: [Self.dogs[1]], cursor: nil)))
    await stub.on(.get, "/v1/dogs", .json(Page(dogs: [Self.dogs[0]], cursor: "c2")))
    var names: [String] = []
    let pages = client(stub).pages(Endpoint<Page>(path: "dogs")) { page in
      page.value.cursor.map {
        Endpoint<Page>(path: "dogs", query: [URLQueryItem(name: "cursor", value: $0)])
      }
    }
    for try await page in pages {
      names += page.value.dogs.map(\.name)
    }
    #expect(names == ["Dog 1", "Dog 2"])
  }

  @Test func aPageThatLinksBackEndsThePages() async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/dogs",
      .status(200, body: Data("[]".utf8), headers: ["Link": #"</v1/dogs>; rel="next""#]))
    var count = 0
    for try await _ in client(stub).pages(Endpoint<[Dog]>(path: "dogs")) { count += 1 }
    #expect(count == 1)
  }

  /// Three pages with kilobyte cursors, the third linking back to the first (written as a path
  /// or as the absolute URL): each page is fetched once, then the pages end.
  @Test(arguments: ["/v1/dogs?cursor=", "https://api.example.com/v1/dogs?cursor="])
  func aWalkThatCirclesBackEndsAfterEachPageOnce(_ linkBack: String) async throws {
    let cursors = ["a", "b", "c"].map { String(repeating: $0, count: 1_000) }
    let stub = StubTransport()
    for (index, cursor) in cursors.enumerated() {
      let next =
        index + 1 < cursors.count ? "/v1/dogs?cursor=\(cursors[index + 1])" : linkBack + cursors[0]
      await stub.on(
        .method(.get) && .path("/v1/dogs") && .query("cursor", cursor),
        .status(200, body: Data("[]".utf8), headers: ["Link": "<\(next)>; rel=\"next\""]))
    }
    var fetched: [String] = []
    let first = Endpoint<[Dog]>(
      path: "dogs", query: [URLQueryItem(name: "cursor", value: cursors[0])])
    for try await page in client(stub).pages(first) {
      fetched.append(String(page.request.url.query?.dropFirst("cursor=".count).prefix(1) ?? ""))
    }
    #expect(fetched == ["a", "b", "c"])
  }
}
