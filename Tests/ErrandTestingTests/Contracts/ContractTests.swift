import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

enum DogsContract {
  static let base = URL(string: "https://api.dogs.example/v1")!

  static let contract = Contract(
    "Dogs API",
    [
      .returns("list dogs", Endpoint<[Dog]>(path: "dogs"), [Dog(name: "Rex"), Dog(name: "Bella")]),
      .returns(
        "one dog in an envelope", Endpoint<Dog>(path: "dogs/1", decoding: .envelope()),
        Dog(name: "Rex"),
        answer: .status(200, body: Data(#"{"result":{"name":"Rex"}}"#.utf8))),
      .status("unknown dog", Endpoint<Dog>(path: "dogs/999"), 404, body: Data("no such dog".utf8)),
      .fails("broken JSON", Endpoint<Dog>(path: "dogs/bad"), with: .decoding),
      .fails("offline", Endpoint<Dog>(path: "dogs/offline"), with: .transport),
    ])
}

@Suite(.timeLimit(.minutes(3))) struct ContractTests {
  @Test(arguments: DogsContract.contract.cases)
  func theContractsOwnStubHonoursEveryCase(_ row: ContractCase) async throws {
    try await row.verify(
      against: DogsContract.contract.stub(baseURL: DogsContract.base), baseURL: DogsContract.base)
  }

  @Test func appCodeRunsOnTheStub() async throws {
    let client = APIClient(
      baseURL: DogsContract.base, transport: DogsContract.contract.stub(baseURL: DogsContract.base))
    #expect(try await client.send(Endpoint<[Dog]>(path: "dogs")).map(\.name) == ["Rex", "Bella"])
    let error = await #expect(throws: APIError.self) {
      try await client.send(Endpoint<Dog>(path: "dogs/999"))
    }
    guard case .unacceptableStatus(let response) = error else {
      Issue.record("expected unacceptableStatus, got \(String(describing: error))")
      return
    }
    #expect(response.status == 404)
    #expect(response.body == Data("no such dog".utf8))
  }

  @Test func aServerThatChangedIsReportedCaseByCase() async throws {
    let changed = StubTransport()
    await changed.on(.get, "/v1/dogs", .json([Dog(name: "Rex"), Dog(name: "Kuma")]))
    await changed.on(
      .get, "/v1/dogs/1", .status(200, body: Data(#"{"result":{"name":"Rex"}}"#.utf8)))
    await changed.on(.get, "/v1/dogs/999", .status(410, body: Data("gone".utf8)))
    await changed.on(.get, "/v1/dogs/bad", .json(Dog(name: "fine now")))
    await changed.on(.get, "/v1/dogs/offline", .connectionLost)
    let violations = await DogsContract.contract.violations(
      against: changed, baseURL: DogsContract.base)
    #expect(violations.map(\.caseName) == ["list dogs", "unknown dog", "broken JSON"])
    #expect(
      violations.first?.description == """
        Contract case "list dogs" is not honoured:
          [
            {
              "name" : "Rex"
            },
            {
        -     "name" : "Bella"
        +     "name" : "Kuma"
            }
          ]
        """)
    #expect(
      violations.dropFirst().first?.description == """
        Contract case "unknown dog" is not honoured:
        - status 404
        - body no such dog
        + status 410
        + body gone
        """)
    #expect(
      violations.last?.description == """
        Contract case "broken JSON" is not honoured:
        - fails with decoding
        + succeeded with Dog(name: "fine now")
        """)
  }

  @Test func casesReadAsTheirNames() {
    #expect(
      DogsContract.contract.cases.map(\.testDescription) == [
        "list dogs", "one dog in an envelope", "unknown dog", "broken JSON", "offline",
      ])
    #expect(DogsContract.contract.cases[2].description == "unknown dog: status 404")
  }
}

/// README's three-case contract, used both ways.
@Suite(.timeLimit(.minutes(3))) struct ReadmeContractExampleTests {
  static let base = URL(string: "https://api.example.com/v1")!
  static let dogsAPI = Contract(
    "Dogs API",
    [
      .returns("list dogs", Endpoint<[Dog]>(path: "dogs"), [Dog(name: "Rex")]),
      .status("unknown dog", Endpoint<Dog>(path: "dogs/999"), 404),
      .fails("broken JSON", Endpoint<Dog>(path: "dogs/bad"), with: .decoding),
    ])

  @Test func appTestRunsOnTheStub() async throws {
    let client = APIClient(baseURL: Self.base, transport: Self.dogsAPI.stub(baseURL: Self.base))
    #expect(try await client.send(Endpoint<[Dog]>(path: "dogs")) == [Dog(name: "Rex")])
  }

  @Test(arguments: dogsAPI.cases)
  func apiHonoursTheContract(_ row: ContractCase) async throws {
    let server = StubTransport()  // stands in for URLSessionTransport() against the real API
    await server.on(.get, "/v1/dogs", .json([Dog(name: "Rex")]))
    await server.on(.get, "/v1/dogs/999", .status(404))
    await server.on(.get, "/v1/dogs/bad", .invalidJSON)
    try await row.verify(against: server, baseURL: Self.base)
  }
}

@Suite(.timeLimit(.minutes(3))) struct TransportConformanceTests {
  @Test(
    arguments: TransportConformance.checks + TransportConformance.streamingChecks
      + TransportConformance.exchangeChecks)
  func theHTTPBinStubConforms(_ check: TransportConformance.Check) async throws {
    try await check.run(StubTransport.httpbin(), httpbin: URL(string: "http://httpbin.test")!)
  }

  // watchOS runs no custom URLProtocol, and StubURLProtocol is unavailable there.
  #if !os(watchOS)
    // Without the exchange checks: a URLProtocol has no way to tell URLSession how much of the
    // request body it has read, so no upload progress reaches the transport.
    @Test(arguments: TransportConformance.checks + TransportConformance.streamingChecks)
    func urlSessionOverStubURLProtocolConforms(_ check: TransportConformance.Check) async throws {
      let transport = URLSessionTransport(
        configuration: StubURLProtocol.configuration(for: .httpbin()))
      try await check.run(transport, httpbin: URL(string: "http://httpbin.test")!)
    }
  #endif

  @Test func aBrokenTransportIsToldWhatIsWrong() async throws {
    struct AlwaysOK: Transport {
      func send(_ request: HTTPRequest) async throws -> HTTPResponse { HTTPResponse(status: 200) }
    }
    let statuses = try #require(
      TransportConformance.checks.first { $0.description == "status codes pass through" })
    let error = try await #require(throws: ConformanceFailure.self) {
      try await statuses.run(AlwaysOK(), httpbin: URL(string: "http://httpbin.test")!)
    }
    #expect(error.description == "GET /status/201 came back as 200")
    let failures = try #require(
      TransportConformance.checks.first { $0.description == "network failures are thrown" })
    let thrown = try await #require(throws: ConformanceFailure.self) {
      try await failures.run(AlwaysOK(), httpbin: URL(string: "http://httpbin.test")!)
    }
    #expect(
      thrown.description == "a request to http://127.0.0.1:9/ returned 200 instead of throwing")
  }
}

/// Cases whose paths hold a percent sign or braces (sent encoded, `%25`, `%7B`): the contract's
/// stub answers each case by its own path, segment for segment, and braces in a case's path are
/// a name, not a placeholder that answers any other name.
@Suite(.timeLimit(.minutes(2))) struct ContractPathSegmentTests {
  static let base = URL(string: "https://files.example/v1")!
  static let contract = Contract(
    "Files API",
    [
      .status("a percent sign", Endpoint<Data>(path: "files/a%2Fb"), 201),
      .status("two segments", Endpoint<Data>(path: "files/a/b"), 202),
      .status("braces", Endpoint<Data>(path: "files/{id}"), 203),
      .status("a plain name", Endpoint<Data>(path: "files/report"), 204),
    ])

  @Test(arguments: contract.cases)
  func theContractsOwnStubHonoursEveryCase(_ row: ContractCase) async throws {
    try await row.verify(against: Self.contract.stub(baseURL: Self.base), baseURL: Self.base)
  }

  /// Each path gets its own case's status: braces are not a placeholder that answers any name.
  @Test(arguments: [("files/a%2Fb", 201), ("files/a/b", 202), ("files/{id}", 203)])
  func eachPathGetsItsOwnCasesAnswer(_ path: String, _ status: Int) async throws {
    let client = APIClient(baseURL: Self.base, transport: Self.contract.stub(baseURL: Self.base))
    let response = try await client.response(for: Endpoint<Data>(path: path, decoding: .data))
    #expect(response.response.status == status)
  }

  @Test func aNameTheContractDoesNotHoldIsNotAnswered() async throws {
    let client = APIClient(baseURL: Self.base, transport: Self.contract.stub(baseURL: Self.base))
    let error = await #expect(throws: APIError.self) {
      try await client.send(Endpoint<Data>(path: "files/other", decoding: .data))
    }
    #expect(error?.underlyingError is UnmatchedRequest, "\(String(describing: error))")
  }
}
