import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// README's "How often, and in which state", as written.
@Suite(.timeLimit(.minutes(1))) struct ReadmeCountsAndScenariosExampleTests {
  struct Token: Codable, Sendable { var value: String }

  @Test func counts() async throws {
    let stub = StubTransport()
    let dogs = [Dog(name: "Rex")]
    let feed = [Dog(name: "Bella")]
    let token = Token(value: "t0k3n")
    // As in README:
    let line = #line + 1
    await stub.on(.get, "/v1/dogs", .json(dogs).times(2))  // exactly twice
    await stub.on(.get, "/v1/feed", .json(feed).atLeast(1))  // once or more
    await stub.on(.post, "/v1/refresh", .json(token).atMost(1))  // at most once, or not at all
    await stub.on(.post, "/v1/payments", .status(201).never())  // a call that must not happen
    let client = client(stub)
    for _ in 0..<2 { _ = try await client.send(Endpoint<[Dog]>(path: "dogs")) }
    _ = try await client.send(Endpoint<[Dog]>(path: "feed"))
    #expect(await stub.callCount(.get, "/v1/dogs") == 2)
    #expect(await stub.verifyExpectations() == [])
    // A third call still gets its answer, and is reported.
    #expect(try await client.send(Endpoint<[Dog]>(path: "dogs")) == dogs)
    let failure = "StubTransport route GET /v1/dogs was expected 2 times and was called 3 times"
    var failures: [String] = []
    await withKnownIssue {
      failures = await stub.verifyExpectations()
    } matching: { issue in
      issue.sourceLocation?.line == line && issue.comments.map(\.rawValue) == [failure]
    }
    #expect(
      failures == [
        "\(failure) (registered at ReadmeCountsAndScenariosExampleTests.swift:\(line))"
      ])
  }

  @Test(.stubbed) func scenarios() async throws {
    let stub = StubTransport.current
    let rex = Dog(name: "Rex")
    let client = client(stub)
    // As in README:
    await stub.on(
      .get, "/v1/dogs", .json([Dog]()).inScenario("Dogs", requires: StubScenario.started))
    await stub.on(
      .post, "/v1/dogs", .json(rex, status: 201).inScenario("Dogs", movesTo: "Created"))
    await stub.on(.get, "/v1/dogs", .json([rex]).inScenario("Dogs", requires: "Created"))
    #expect(try await client.send(Endpoint<[Dog]>(path: "dogs")) == [])
    #expect(try await client.send(Endpoint<Dog>(method: .post, path: "dogs")) == rex)
    #expect(try await client.send(Endpoint<[Dog]>(path: "dogs")) == [rex])
    #expect(await stub.scenarioState("Dogs") == "Created")
    await stub.resetScenarios()
    #expect(await stub.scenarioState("Dogs") == StubScenario.started)
    await stub.setScenario("Dogs", to: "Created")
    #expect(try await client.send(Endpoint<[Dog]>(path: "dogs")) == [rex])
  }
}
