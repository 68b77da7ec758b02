import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Moya's `sampleData`: endpoints carry samples, and a stub can answer every endpoint with its own.
@Suite(.timeLimit(.minutes(3))) struct SampleResponseTests {
  enum DogAPI {
    static let list = Endpoint<[Dog]>(path: "dogs").withSample(Data(#"[{"name":"Rex"}]"#.utf8))
    static let unauthorized = Endpoint<Dog>(path: "me").withSample(
      Data("expired".utf8), status: 401)
    static let unsampled = Endpoint<Dog>(path: "cats")
  }

  @Test func everyEndpointAnswersWithItsSample() async throws {
    let client = client(StubTransport.samples())
    #expect(try await client.send(DogAPI.list) == [Dog(name: "Rex")])
    let error = await #expect(throws: APIError.self) { try await client.send(DogAPI.unauthorized) }
    guard case .unacceptableStatus(let response) = error else {
      Issue.record("expected unacceptableStatus, got \(String(describing: error))")
      return
    }
    #expect(response.status == 401)
    #expect(response.body == Data("expired".utf8))
  }

  @Test func routesWinOverSamples() async throws {
    let stub = StubTransport(samples: true)
    await stub.on(.get, "/v1/dogs", .json([Dog(name: "Bella")]))
    #expect(try await client(stub).send(DogAPI.list) == [Dog(name: "Bella")])
  }

  @Test func anEndpointWithoutASampleIsUnmatched() async throws {
    let error = await #expect(throws: APIError.self) {
      try await client(StubTransport.samples()).send(DogAPI.unsampled)
    }
    guard case .transport(let underlying) = error else {
      Issue.record("expected transport, got \(String(describing: error))")
      return
    }
    #expect(underlying is UnmatchedRequest)
    #expect(
      error?.localizedDescription.contains(
        "StubTransport has no route for GET https://api.example.com/v1/cats") == true)
  }

  @Test func samplesCanBeDelayedOnTheStubsClock() async throws {
    let clock = ImmediateClock()
    let client = client(StubTransport.samples(delay: .seconds(2), clock: clock))
    _ = try await client.send(DogAPI.list)
    #expect(clock.now == TestClock.Instant(offset: .seconds(2)))
  }
}

@Suite(.timeLimit(.minutes(3))) struct StubFactoryTests {
  @Test func stubReadsWellWhereATransportIsExpected() async throws {
    let client = APIClient(
      baseURL: base, transport: .stub { $0.on(.get, "/v1/dogs", .json([Dog(name: "Rex")])) })
    #expect(try await client.send(Endpoint<[Dog]>(path: "dogs")) == [Dog(name: "Rex")])
    let stub = try #require(client.transport as? StubTransport)
    #expect(await stub.requests.count == 1)
  }

  @Test func stubFactoryKeepsRegistrationLines() async throws {
    let line = #line + 1
    let stub: StubTransport = .stub { $0.on(.get, "/v1/cats", .status(200)) }
    #expect(
      await stub.unusedRoutes == ["GET /v1/cats (registered at SampleResponseTests.swift:\(line))"])
  }
}
