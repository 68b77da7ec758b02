import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Failures that explain themselves: which clause a near miss failed, and how a body differs.
@Suite(.timeLimit(.minutes(3))) struct NearMissTests {
  struct NewDog: Codable, Equatable, Sendable {
    var name: String
    var age: Double
    var tags: [String]
  }

  @Test func aNearMissNamesEachFailedClauseAndDiffsTheJSONBody() async throws {
    let stub = StubTransport()
    await stub.on(
      .method(.post) && .path("/v1/dogs") && .query("notify", "1") && .header("X-Trace")
        && .jsonBody(NewDog(name: "Rex", age: 3, tags: ["good"])),
      .status(201))
    let endpoint = Endpoint<Void>(
      method: .post, path: "dogs", query: [URLQueryItem(name: "notify", value: "0")],
      body: .json(NewDog(name: "Max", age: 3.0, tags: ["good", "loud"])))
    let error = await #expect(throws: APIError.self) { try await client(stub).send(endpoint) }
    let unmatched = try #require(error?.underlyingError as? UnmatchedRequest)
    let text = unmatched.description
    #expect(text.contains("- query: expected notify=1, sent notify=0"), "\(text)")
    #expect(text.contains("- header X-Trace: expected any value, sent none"), "\(text)")
    #expect(text.contains("$.name: expected \"Rex\", sent \"Max\""), "\(text)")
    #expect(text.contains("$.tags: expected 1 elements, sent 2"), "\(text)")
    #expect(!text.contains("$.age"), "3 and 3.0 are the same number:\n\(text)")
    #expect(!text.contains("method:") && !text.contains("path:"), "\(text)")
  }

  @Test func sentBodiesDecodeAndCompareAsJSON() async throws {
    let stub = StubTransport()
    await stub.on(.post, "/v1/dogs", .status(201))
    try await client(stub).send(
      Endpoint<Void>(
        method: .post, path: "dogs", body: .json(NewDog(name: "Rex", age: 1.50, tags: []))))
    let sent = try await stub.nextRequest()
    #expect(try sent.decodeBody(as: NewDog.self) == NewDog(name: "Rex", age: 1.5, tags: []))
    #expect(sent.jsonBodyDifferences(from: NewDog(name: "Rex", age: 1.5, tags: [])).isEmpty)
    #expect(
      sent.jsonBodyDifferences(from: NewDog(name: "Rex", age: 2, tags: ["x"])) == [
        "$.age: expected 2, sent 1.5", "$.tags: expected 1 elements, sent 0",
      ])
  }

  @Test(.ownThread) func aReportStaysSmallWhateverTheRequest() async throws {
    let stub = StubTransport()
    let huge = String(repeating: "v", count: 100_000)
    await stub.on(.method(.post) && .path("/v1/dogs") && .jsonBody(["name": huge]), .status(201))
    var body: [String: String] = ["name": "Rex"]
    for index in 0..<2_010 { body["extra\(index)"] = huge.prefix(100).description }
    var headers = HTTPHeaders()
    for index in 0..<2_000 { headers.add("X-Many-\(index)", String(huge.prefix(300))) }
    let request = HTTPRequest(
      method: .post, url: URL(string: "https://api.example.com/v1/dogs?q=\(huge)")!,
      headers: headers, body: try JSONEncoder().encode(body))
    let error = await #expect(throws: UnmatchedRequest.self) { _ = try await stub.send(request) }
    let text = error?.description ?? ""
    #expect(text.utf8.count < 32_000, "\(text.utf8.count) bytes")
    #expect(text.split(separator: "\n").count < 170, "\(text.split(separator: "\n").count) lines")
    #expect(text.contains("… and 1950 more headers"), "\(text.suffix(2_000))")
    #expect(text.contains("more differences"), "\(text.suffix(2_000))")
    #expect(text.contains("$.name: expected \"vvvv"), "\(text.suffix(2_000))")
  }

  @Test func decodingABodylessRequestSaysSo() throws {
    let request = HTTPRequest(url: URL(string: "https://api.example.com/v1/dogs")!)
    let error = try #require(throws: DecodingError.self) { try request.decodeBody(as: NewDog.self) }
    guard case .dataCorrupted(let context) = error else {
      Issue.record("expected dataCorrupted, got \(error)")
      return
    }
    #expect(context.debugDescription == "GET https://api.example.com/v1/dogs has no body to decode")
  }
}
