import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// README's testing section after the five tests: the trait, a near miss, a typed error body,
/// pass-through and pagination, as written.
@Suite(.timeLimit(.minutes(3))) struct ReadmeErgonomicsExampleTests {
  struct Problem: Codable, Equatable, Sendable { var title: String }
  struct NewDog: Codable, Equatable, Sendable { var name: String }

  @Test(.stubbed) func listsDogs() async throws {
    await StubTransport.current.on(.get, "/v1/dogs", .json([Dog(name: "Rex")]))
    #expect(
      try await APIClient(baseURL: base, transport: .stubbed).send(Endpoint<[Dog]>(path: "dogs"))
        == [Dog(name: "Rex")])
  }

  @Test func aNearMissExplainsItself() async throws {
    let stub = StubTransport()
    await stub.on(
      .method(.post) && .path("/v1/dogs") && .query("notify", "1")
        && .jsonBody(NewDog(name: "Rex")),
      .status(201))
    let error = await #expect(throws: APIError.self) {
      try await client(stub).send(
        Endpoint<Void>(
          method: .post, path: "dogs", query: [URLQueryItem(name: "notify", value: "0")],
          body: .json(NewDog(name: "Max"))))
    }
    let text = try #require(error?.underlyingError as? UnmatchedRequest).description
    #expect(
      text.contains("    - query: expected notify=1, sent notify=0\n    - JSON body differs:\n"))
    #expect(text.contains(#"$.name: expected "Rex", sent "Max""#))
    let sent = try await stub.nextRequest()
    #expect(try sent.decodeBody(as: NewDog.self) == NewDog(name: "Max"))
    #expect(sent.jsonBodyDifferences(from: NewDog(name: "Max")) == [])
  }

  @Test func typedErrorBodies() async throws {
    let stub = StubTransport()
    let client = client(stub)
    // As in README:
    await stub.on(.get, "/v1/dogs/7", .json(Problem(title: "No such dog"), status: 404))
    let missing = await #expect(throws: APIError.self) {
      try await client.send(Endpoint<Dog>(path: "dogs/7").failure(Problem.self))
    }
    #expect(missing?.decodedBody(as: Problem.self)?.title == "No such dog")
  }

  @Test func passThrough() async throws {
    // As in README (only the stubbed route is called, so nothing reaches the network):
    let partial = StubTransport(passthrough: URLSessionTransport())
    await partial.on(.get, "/v1/dogs/7", .status(404))  // this one is stubbed
    await partial.on(.get, "/v1/me", .passthrough)  // this one is real, and says so
    let error = await #expect(throws: APIError.self) {
      try await client(partial).send(Endpoint<Dog>(path: "dogs/7"))
    }
    #expect(error?.response?.status == 404)
    #expect(await partial.forwardedRequests.isEmpty)
    // The same stub over a stand-in for the real API forwards what it does not stub.
    let live = StubTransport()
    await live.on(.get, "/v1/me", .json(Dog(name: "Owner")))
    let overStandIn = StubTransport(passthrough: live)
    await overStandIn.on(.get, "/v1/me", .passthrough)
    #expect(try await client(overStandIn).send(Endpoint<Dog>(path: "me")) == Dog(name: "Owner"))
    #expect(await overStandIn.forwardedRequests.map(\.url.path) == ["/v1/me"])
  }

  @Test func pagination() async throws {
    let stub = StubTransport()
    let client = client(stub)
    // As in README:
    await stub.on(
      .get, "/v1/dogs", .pages([[Dog(name: "Rex"), Dog(name: "Bella")], [Dog(name: "Kuma")]]))
    var all: [Dog] = []
    for try await page in client.pages(Endpoint<[Dog]>(path: "dogs")) { all += page.value }
    #expect(all.map(\.name) == ["Rex", "Bella", "Kuma"])
  }
}
