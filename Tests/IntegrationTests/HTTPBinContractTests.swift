import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// A slice of httpbin as a contract: JSON, status, headers and bearer auth.
enum HTTPBinContract {
  struct Args: Codable, Equatable, Sendable { var args: [String: String] }

  struct Slideshow: Codable, Equatable, Sendable {
    struct Show: Codable, Equatable, Sendable {
      var title: String
      var author: String
    }
    var slideshow: Show
  }

  struct EchoedHeader: Codable, Equatable, Sendable {
    struct Picked: Codable, Equatable, Sendable {
      var contract: String
      enum CodingKeys: String, CodingKey { case contract = "X-Contract" }
    }
    var headers: Picked
  }

  struct Bearer: Codable, Equatable, Sendable {
    var authenticated: Bool
    var token: String
  }

  static let contract = Contract(
    "httpbin",
    [
      .returns(
        "query is echoed",
        Endpoint<Args>(path: "get", query: [URLQueryItem(name: "dog", value: "Rex & co")]),
        Args(args: ["dog": "Rex & co"])),
      .returns(
        "JSON document", Endpoint<Slideshow>(path: "json"),
        Slideshow(slideshow: .init(title: "Sample Slide Show", author: "Yours Truly"))),
      .returns(
        "headers are echoed",
        Endpoint<EchoedHeader>(path: "headers", headers: ["X-Contract": "yes"]),
        EchoedHeader(headers: .init(contract: "yes"))),
      .status("teapot", Endpoint<Void>(path: "status/418"), 418),
      .returns(
        "bearer token accepted",
        Endpoint<Bearer>(path: "bearer", headers: ["Authorization": "Bearer t0k3n"]),
        Bearer(authenticated: true, token: "t0k3n")),
      .fails("bearer token missing", Endpoint<Bearer>(path: "bearer"), with: .unacceptableStatus),
    ])

  /// The cassette of httpbin's answers to the contract, committed so the check runs offline.
  static func cassette(mode: CassetteTransport.Mode = .none, upstream: (any Transport)? = nil)
    -> CassetteTransport
  {
    CassetteTransport(
      named: "httpbin-contract", mode: mode, upstream: upstream,
      matching: [.method, .path, .query, .headers], redaction: Redaction(), allowsRepeats: true)
  }
}

/// The same table, checked three ways and used once as a stub.
@Suite(.timeLimit(.minutes(3))) struct HTTPBinContractTests {
  @Test(
    .enabled(if: HTTPBin.url != nil, "set HTTPBIN_URL"), arguments: HTTPBinContract.contract.cases)
  func httpbinHonoursTheContract(_ row: ContractCase) async throws {
    try await row.verify(against: URLSessionTransport(), baseURL: try #require(HTTPBin.url))
  }

  @Test(arguments: HTTPBinContract.contract.cases)
  func theRecordedCassetteHonoursTheContract(_ row: ContractCase) async throws {
    try await row.verify(
      against: HTTPBinContract.cassette(), baseURL: URL(string: "http://httpbin.test")!)
  }

  @Test(arguments: HTTPBinContract.contract.cases)
  func theEmulatedHTTPBinHonoursTheContractOrSaysWhy(_ row: ContractCase) async throws {
    // StubTransport.httpbin() has no /json; every other row holds.
    do {
      try await row.verify(
        against: StubTransport.httpbin(), baseURL: URL(string: "http://httpbin.test")!)
      #expect(row.name != "JSON document")
    } catch {
      #expect(row.name == "JSON document", "\(error)")
    }
  }

  @Test func aConsumerRunsOnTheContractsStub() async throws {
    /// A small consumer of the API: asks whether a token is accepted.
    struct TokenChecker {
      let client: APIClient
      func accepts(_ token: String?) async -> Bool {
        let headers: HTTPHeaders = token.map { ["Authorization": "Bearer \($0)"] } ?? [:]
        return
          (try? await client.send(
            Endpoint<HTTPBinContract.Bearer>(path: "bearer", headers: headers)))?.authenticated
          == true
      }
    }
    let base = URL(string: "https://httpbin.example")!
    let stub = HTTPBinContract.contract.stub(baseURL: base)
    let checker = TokenChecker(client: APIClient(baseURL: base, transport: stub))
    #expect(await checker.accepts("t0k3n"))
    #expect(await !checker.accepts(nil))
    #expect(await stub.requests.count == 2)
  }

  @Test(
    .enabled(
      if: ProcessInfo.processInfo.environment["ERRAND_RECORD_CASSETTES"] == "1"
        && HTTPBin.url != nil))
  func recordTheContractCassette() async throws {
    let base = try #require(HTTPBin.url)
    let cassette = HTTPBinContract.cassette(mode: .all, upstream: URLSessionTransport())
    for row in HTTPBinContract.contract.cases {
      try await row.verify(against: cassette, baseURL: base)
    }
  }
}

/// The published transport checks, run against every production transport and a real httpbin.
@Suite(.timeLimit(.minutes(3)), .enabled(if: HTTPBin.url != nil, "set HTTPBIN_URL"))
struct URLSessionTransportConformanceTests {
  @Test(
    arguments: TransportConformance.checks + TransportConformance.streamingChecks
      + TransportConformance.exchangeChecks,
    TransportKind.allCases)
  func productionTransportsConform(
    _ check: TransportConformance.Check, _ transport: TransportKind
  ) async throws {
    try await check.run(transport.make(), httpbin: try #require(HTTPBin.url))
  }
}
