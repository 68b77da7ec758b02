import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

#if os(Linux)
  import ErrandCurl
#endif

/// `LoopbackServer(serving:)`: a `StubTransport` (or a cassette) answers another process over a
/// real socket, with its routes, its clock and its journal, through both production transports.
@Suite(.timeLimit(.minutes(3))) struct StubServerTests {
  @Test(arguments: TransportKind.allCases)
  func servesTheRoutesAndTheJournalShowsWhatArrived(_ kind: TransportKind) async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs", .json([Dog(name: "Rex")]))
    await stub.on(.post, "/v1/dogs", .status(201, body: Data("made".utf8)))
    await stub.on(.get, "/v1/cats", .status(200))
    let server = try LoopbackServer(serving: stub)
    defer { server.stop() }
    let client = kind.client(server.url("/v1"))

    #expect(try await client.send(Endpoint<[Dog]>(path: "dogs")) == [Dog(name: "Rex")])
    let made = try await client.send(
      Endpoint<String>(method: .post, path: "dogs", body: .json(Dog(name: "Bella"))))
    #expect(made == "made")

    let requests = await stub.requests
    #expect(
      requests.map { "\($0.method) \($0.url.absoluteString)" } == [
        "GET \(server.baseURL.absoluteString)/v1/dogs",
        "POST \(server.baseURL.absoluteString)/v1/dogs",
      ])
    #expect(requests.last?.body == Data(#"{"name":"Bella"}"#.utf8))
    #expect(requests.last?.headers["Content-Type"] == "application/json")
    // The connection's own fields stay with the connection.
    for name in ["Host", "Connection", "Content-Length", "Transfer-Encoding"] {
      #expect(requests.allSatisfy { $0.headers[name] == nil }, "\(name)")
    }
    #expect(await stub.unusedRoutes.count == 1)
    #expect(await stub.unusedRoutes.first?.hasPrefix("GET /v1/cats") == true)
    #expect(await stub.unmatchedRequests.isEmpty)
  }

  @Test(arguments: TransportKind.allCases)
  func aRequestNoRouteMatchesIsAnswered501WithTheStubsReport(_ kind: TransportKind) async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs", .json([Dog(name: "Rex")]))
    let server = try LoopbackServer(serving: stub)
    defer { server.stop() }

    let error = try await #require(throws: APIError.self) {
      try await kind.client(server.url("/v1")).send(Endpoint<Data>(path: "dogz"))
    }
    let response = try #require(error.response)
    #expect(response.status == 501)
    #expect(response.headers["X-Errand-Stub-Server"] == "unmatched")
    let report = String(decoding: response.body, as: UTF8.self)
    #expect(report.hasPrefix("StubTransport has no route for GET \(server.url("/v1/dogz"))\n"))
    #expect(report.contains("closest routes:\n  GET /v1/dogs"))
    #expect(report.contains("path: expected /v1/dogs, sent /v1/dogz"))
    #expect(await stub.unmatchedRequests.map(\.url) == [server.url("/v1/dogz")])
  }

  @Test(arguments: TransportKind.allCases)
  func standingInForTheRealOriginRoutesSeeItsURLs(_ kind: TransportKind) async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/dogs",
      .status(302, headers: ["Location": "https://api.example.com/v1/dogs/all?page=2"]))
    await stub.on(.get, "/v1/dogs/all", .json([Dog(name: "Rex")]))
    let server = try LoopbackServer(
      serving: stub, standingInFor: url("https://api.example.com/ignored/path"))
    defer { server.stop() }

    // The redirect to the real API is moved onto the server: the client never leaves it.
    let dogs = try await kind.client(server.url("/v1")).send(Endpoint<[Dog]>(path: "dogs"))
    #expect(dogs == [Dog(name: "Rex")])
    #expect(
      await stub.requests.map(\.url.absoluteString) == [
        "https://api.example.com/v1/dogs", "https://api.example.com/v1/dogs/all?page=2",
      ])
    #expect(server.requests.map(\.target) == ["/v1/dogs", "/v1/dogs/all?page=2"])
  }

  @Test(arguments: TransportKind.allCases)
  func aStreamedAnswerArrivesChunkByChunkOnTheStubsClock(_ kind: TransportKind) async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(
      .get, "/v1/feed",
      .chunks(["one", "two", "three"].map { Data($0.utf8) }, interval: .seconds(30)))
    let server = try LoopbackServer(serving: stub)
    defer { server.stop() }

    let stream = try await kind.client(server.url("/v1")).stream(Endpoint<Data>(path: "feed"))
    #expect(stream.response.headers["Transfer-Encoding"]?.lowercased() == "chunked")
    var chunks = stream.makeAsyncIterator()
    for expected in ["one", "two", "three"] {
      if expected != "one" {
        // The next chunk is written only once the stub's clock reaches it.
        try #require(await clock.waitForSleeper(dueIn: .seconds(30)))
        await clock.advance(by: .seconds(30))
      }
      #expect(try await chunks.next().map { String(decoding: $0, as: UTF8.self) } == expected)
    }
    #expect(try await chunks.next() == nil)
  }

  @Test(arguments: TransportKind.allCases)
  func aDelayRunsOnTheStubsClock(_ kind: TransportKind) async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.get, "/v1/slow", .json([Dog(name: "Rex")]).delayed(by: .seconds(3600)))
    let server = try LoopbackServer(serving: stub)
    defer { server.stop() }

    let call = Task {
      try await kind.client(server.url("/v1")).send(Endpoint<[Dog]>(path: "slow"))
    }
    try #require(await clock.waitForSleeper(dueIn: .seconds(3600)))
    await clock.advance(by: .seconds(3600))
    #expect(try await call.value == [Dog(name: "Rex")])
  }

  /// A contract's stub, served to another process, still honours the contract: every row checked
  /// through a production transport over the socket.
  @Test(arguments: TransportKind.allCases)
  func aContractsStubServedOverTheSocketHonoursTheContract(_ kind: TransportKind) async throws {
    let contract = Contract(
      "Dogs API",
      // The more specific of two cases for one path first, as a contract's stub asks.
      [
        .returns(
          "page two",
          Endpoint<[Dog]>(path: "dogs", query: [URLQueryItem(name: "page", value: "2")]),
          [Dog(name: "Bella")]),
        .returns("list dogs", Endpoint<[Dog]>(path: "dogs"), [Dog(name: "Rex")]),
        .status("unknown dog", Endpoint<Dog>(path: "dogs/999"), 404),
        .fails("broken JSON", Endpoint<Dog>(path: "dogs/bad"), with: .decoding),
        .fails("the connection drops", Endpoint<Dog>(path: "dogs/lost"), with: .transport),
      ])
    let stub = contract.stub(baseURL: ChildApp.api)
    let server = try LoopbackServer(serving: stub, standingInFor: ChildApp.api)
    defer { server.stop() }
    let violations = await contract.violations(against: kind.make(), baseURL: server.url("/v1"))
    #expect(violations.isEmpty, "\(violations)")
    #expect(await stub.unusedRoutes.isEmpty)
    #expect(await stub.unmatchedRequests.isEmpty)
  }

  @Test(arguments: TransportKind.allCases)
  func aCassetteReplaysWithItsMatchingRules(_ kind: TransportKind) async throws {
    let cassette = try Fixtures.nearest().url("cassettes/dogpatch.json")
    let server = try LoopbackServer(
      serving: CassetteTransport(url: cassette, mode: .none, allowsRepeats: true),
      standingInFor: url("https://api.dogpatch.example"))
    defer { server.stop() }
    let client = kind.client(server.url("/v1"))

    let dogs = try await client.send(Endpoint<[FixtureDog]>(path: "dogs"))
    #expect(dogs.map(\.name) == ["Rex", "Bella", "Kuma"])
    let error = try await #require(throws: APIError.self) {
      try await client.send(Endpoint<Data>(path: "cats"))
    }
    #expect(error.response?.status == 501)
    let report = String(decoding: error.response?.body ?? Data(), as: UTF8.self)
    #expect(report.contains("matches GET https://api.dogpatch.example/v1/cats"))
  }

  #if os(Linux)
    @Test func aUnixSocketServerServesTheStubToo() async throws {
      // Short: a socket's path has at most 103 bytes.
      let folder = URL(fileURLWithPath: "/tmp/errand-\(UUID().uuidString.prefix(8))")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      defer { try? FileManager.default.removeItem(at: folder) }
      let path = folder.appendingPathComponent("s.sock").path
      let stub = StubTransport()
      await stub.on(.get, "/v1/dogs", .json([Dog(name: "Rex")]))
      let server = try LoopbackServer(unixSocketAt: path, serving: stub)
      defer { server.stop() }
      #expect(server.launchEnvironment.isEmpty)
      let transport = try CurlTransport(
        connection: ConnectionOptions(unixSockets: ["daemon": path]))
      let client = APIClient(baseURL: url("http://daemon/v1"), transport: transport)
      #expect(try await client.send(Endpoint<[Dog]>(path: "dogs")) == [Dog(name: "Rex")])
      #expect(await stub.requests.map(\.url.absoluteString) == ["http://localhost/v1/dogs"])
    }
  #endif

  /// A `.stubbed` test that serves its stub reports what the other side did as it reports an
  /// in-process test: the unused route at its line, the request no route matched.
  @Test func theStubbedTraitReportsWhatCameOverTheSocketAsItDoesInProcess() async throws {
    let test = try #require(Test.current)
    try await withKnownIssue {
      let trait: StubbedTrait = .stubbed
      try await trait.provideScope(for: test, testCase: nil) {
        await StubTransport.current.on(.get, "/v1/never", .status(200))
        let server = try LoopbackServer(serving: .stubbed, standingInFor: ChildApp.api)
        defer { server.stop() }
        _ = try? await liveClient(server.url("/v1")).send(Endpoint<Data>(path: "cats"))
      }
    } matching: { issue in
      issue.comments.contains {
        $0.rawValue == "StubTransport route GET /v1/never was never used"
          || $0.rawValue == "StubTransport has no route for GET https://api.example.com/v1/cats"
      }
    }
  }

  @Test func theLaunchEnvironmentNamesTheServer() throws {
    let server = try LoopbackServer(serving: StubTransport())
    defer { server.stop() }
    #expect(server.launchEnvironment == [StubServerEnvironment.key: server.baseURL.absoluteString])
    #expect(StubServerEnvironment.baseURL(in: server.launchEnvironment) == server.baseURL)
    #expect(
      StubServerEnvironment.baseURL(
        in: server.launchEnvironment, replacing: url("https://api.example.com/v1?x=1"))
        == server.url("/v1?x=1"))
  }
}
