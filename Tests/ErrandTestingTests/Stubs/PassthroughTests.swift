import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Partial stubbing: what the routes do not answer goes to a real transport (here another stub
/// standing in for the API, or a cassette).
@Suite(.timeLimit(.minutes(3))) struct PassthroughTests {
  @Test func unmatchedRequestsGoUpstreamAndAreMarkedForwarded() async throws {
    let api = StubTransport()
    await api.on(.get, "/v1/dogs", .json([Dog(name: "Real Rex")]))
    let stub = StubTransport(passthrough: api)
    await stub.on(.get, "/v1/dogs/7", .status(404))
    let client = client(stub)
    #expect(try await client.send(Endpoint<[Dog]>(path: "dogs")) == [Dog(name: "Real Rex")])
    let error = await #expect(throws: APIError.self) {
      try await client.send(Endpoint<Dog>(path: "dogs/7"))
    }
    #expect(error?.response?.status == 404)
    #expect(await stub.requests.map(\.url.path) == ["/v1/dogs", "/v1/dogs/7"])
    #expect(await stub.forwardedRequests.map(\.url.path) == ["/v1/dogs"])
    #expect(await api.requests.map(\.url.path) == ["/v1/dogs"])
  }

  @Test func aPassthroughRouteSaysThisEndpointIsReal() async throws {
    let api = StubTransport()
    await api.on(.get, "/v1/me", .json(Dog(name: "Owner")))
    let stub = StubTransport(passthrough: api)
    await stub.on(.get, "/v1/me", .passthrough)
    #expect(try await client(stub).send(Endpoint<Dog>(path: "me")) == Dog(name: "Owner"))
    #expect(await stub.forwardedRequests.count == 1)
    #expect(await stub.verifyAllRoutesUsed().isEmpty)
  }

  @Test func aPassthroughRouteWithoutAnUpstreamSaysHowToFixIt() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/me", .passthrough)
    let error = await #expect(throws: APIError.self) {
      try await client(stub).send(Endpoint<Dog>(path: "me"))
    }
    let missing = try #require(error?.underlyingError as? NoPassthrough)
    #expect(missing.description.hasSuffix("create it with StubTransport(passthrough:)"))
  }

  @Test func streamsPassThroughAsStreams() async throws {
    let api = StubTransport()
    await api.on(.get, "/v1/feed", .chunks([Data("a".utf8), Data("b".utf8)]))
    let stub = StubTransport(passthrough: api)
    var chunks: [Data] = []
    for try await chunk in try await client(stub).stream(
      Endpoint<Data>(path: "feed", decoding: .data))
    {
      chunks.append(chunk)
    }
    #expect(chunks == [Data("a".utf8), Data("b".utf8)])
  }

  @Test func aCassetteCanBeTheUpstream() async throws {
    let file = temporaryCassette()
    let api = StubTransport()
    await api.on(.get, "/v1/dogs", .json([Dog(name: "Recorded Rex")]))
    let recorder = CassetteTransport(url: file, mode: .once, upstream: api)
    _ = try await client(recorder).send(Endpoint<[Dog]>(path: "dogs"))
    let stub = StubTransport(passthrough: CassetteTransport(url: file, mode: .none))
    await stub.on(.get, "/v1/dogs/7", .status(404))
    #expect(
      try await client(stub).send(Endpoint<[Dog]>(path: "dogs")) == [Dog(name: "Recorded Rex")])
  }
}
