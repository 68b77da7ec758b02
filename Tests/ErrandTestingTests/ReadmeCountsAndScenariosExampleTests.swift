import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// README's "How often, and in which state", as written.
@Suite(.timeLimit(.minutes(3))) struct ReadmeCountsAndScenariosExampleTests {
  struct Token: Codable, Sendable { var value: String }

  @Test func counts() async throws {
    let stub = StubTransport()
    let dogs = [Dog(name: "Rex")]
    let feed = [Dog(name: "Bella")]
    let token = Token(value: "t0k3n")
    let failure = "StubTransport route GET /v1/dogs was expected 2 times and was called 3 times"
    // As in README (and the DocC article), the issue at the first line expected:
    let line = #line + 1
    await stub.on(.get, "/v1/dogs", .json(dogs).times(2))  // exactly twice
    await stub.on(.get, "/v1/feed", .json(feed).atLeast(1))  // once or more
    await stub.on(.post, "/v1/refresh", .json(token).atMost(1))  // at most once, or not at all
    await stub.on(.post, "/v1/payments", .status(201).never())  // a call that must not happen
    // … the code under test calls GET /v1/feed once and GET /v1/dogs three times …
    try await codeUnderTest(stub, dogs: dogs)
    await withKnownIssue {
      await stub.verifyExpectations()
    } matching: { issue in
      issue.sourceLocation?.line == line && issue.comments.map(\.rawValue) == [failure]
    }
    // StubTransport route GET /v1/dogs was expected 2 times and was called 3 times
    #expect(await stub.callCount(.get, "/v1/dogs") == 3)
    // The failure is also returned, with where the route was registered; reported once.
    #expect(
      await stub.verifyExpectations() == [
        "\(failure) (registered at ReadmeCountsAndScenariosExampleTests.swift:\(line))"
      ])
  }

  /// Calls GET /v1/feed once and GET /v1/dogs three times: the call past the limit still gets
  /// its answer.
  private func codeUnderTest(_ stub: StubTransport, dogs: [Dog]) async throws {
    let client = client(stub)
    _ = try await client.send(Endpoint<[Dog]>(path: "feed"))
    for _ in 0..<3 { #expect(try await client.send(Endpoint<[Dog]>(path: "dogs")) == dogs) }
  }

  @Test func scenariosNearMiss() async throws {
    let stub = StubTransport()
    let rex = Dog(name: "Rex")
    // As in README: only the third route, and `GET /v1/dogs` in the state "Started".
    await stub.on(.get, "/v1/dogs", .json([rex]).inScenario("Dogs", requires: "Created"))
    #expect(await stub.scenarioState("Dogs") == StubScenario.started)
    let error = try await #require(throws: UnmatchedRequest.self) {
      _ = try await stub.send(request(.get, "/v1/dogs"))
    }
    #expect(
      error.description.contains(
        "\n    - requires scenario \"Dogs\" in state \"Created\"; it is \"Started\""),
      "\(error)")
    await stub.setScenario("Dogs", to: "Created")
    #expect(try await stub.send(request(.get, "/v1/dogs")).status == 200)
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
