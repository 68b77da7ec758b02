import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// README's "Testing with stubs" examples, compiled and run as written.
@Suite(.timeLimit(.minutes(3))) struct ReadmeExampleTests {
  @Test func stubOneEndpoint() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs", .json([Dog(name: "Rex")]))
    let client = APIClient(baseURL: base, transport: stub)
    #expect(try await client.send(Endpoint<[Dog]>(path: "dogs")) == [Dog(name: "Rex")])
    #expect(try await stub.nextRequest().url.path == "/v1/dogs")
  }

  @Test func errorStatusKeepsItsBody() async throws {
    let broken = APIClient(
      baseURL: base, transport: .stub { $0.on(.get, "/v1/dogs", .status(500)) })
    let error = await #expect(throws: APIError.self) {
      try await broken.send(Endpoint<[Dog]>(path: "dogs"))
    }
    #expect(error?.kind == .unacceptableStatus && error?.response?.status == 500)
  }

  @Test func networkFails() async throws {
    let offline = APIClient(baseURL: base, transport: StubTransport { _ in .notConnected })
    let failure = await #expect(throws: APIError.self) {
      try await offline.send(Endpoint<[Dog]>(path: "dogs"))
    }
    #expect(failure?.kind == .transport && failure?.urlError?.code == .notConnectedToInternet)
  }

  @Test func retryAfterAThirtySecondDelay() async throws {
    let clock = TestClock()
    let flaky = StubTransport(clock: clock)
    await flaky.on(
      .get, "/v1/dogs",
      .sequence([.status(503), StubResponse.fixture("dogs.json").delayed(by: .seconds(30))]))
    let client = APIClient(baseURL: base, transport: flaky)
    await #expect(throws: APIError.self) { try await client.send(Endpoint<[Dog]>(path: "dogs")) }
    let retry = Task {
      try await client.send(Endpoint<[Dog]>(path: "dogs"))
    }
    try #require(await clock.waitForSleepers())
    await clock.advance(by: .seconds(30))
    #expect(try await retry.value.count == 3)
  }

  @Test func matchOnMoreThanThePath() async throws {
    let stub = StubTransport()
    await stub.on(
      .method(.post) && .path("/v1/dogs/{id}/photos") && .header("Authorization"), .status(201))
    await stub.on(.method(.put) && .jsonBody(Dog(name: "Rex")), .status(204))
    let client = APIClient(baseURL: base, transport: stub)
    try await client.send(
      Endpoint<Void>(method: .post, path: "dogs/7/photos", headers: ["Authorization": "Bearer t"]))
    try await client.send(
      Endpoint<Void>(method: .put, path: "dogs/7", body: .json(Dog(name: "Rex"))))
    #expect(await stub.verifyAllRoutesUsed().isEmpty)
  }

  @Test func aSixtySecondTimeoutOnATestClock() async throws {
    let clock = TestClock()
    let slow = APIClient(
      baseURL: base, transport: .stub { $0.on(.get, "/v1/never", .hang) },
      configuration: APIClient.Configuration(timeout: .seconds(60), clock: clock))
    let call = Task { try await slow.send(Endpoint<Void>(path: "never")) }
    try #require(await clock.waitForSleepers())
    await clock.advance(by: .seconds(60))
    #expect(await #expect(throws: APIError.self) { try await call.value }?.kind == .timedOut)
  }

  @Test func requestBuildingWithoutATransport() throws {
    let client = APIClient(baseURL: base, transport: .unimplemented())
    #expect(try client.makeRequest(for: Endpoint<[Dog]>(path: "dogs")).method == .get)
  }
}
