import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Scenarios: routes that require a named state and move it, for flows whose answers depend on
/// what came before.
@Suite(.timeLimit(.minutes(3))) struct ScenarioTests {
  @Test(.stubbed) func aCreatedDogShowsInTheList() async throws {
    let stub = StubTransport.current
    let rex = Dog(name: "Rex")
    await stub.on(
      .get, "/v1/dogs", .json([Dog]()).inScenario("Dogs", requires: StubScenario.started))
    await stub.on(.post, "/v1/dogs", .json(rex, status: 201).inScenario("Dogs", movesTo: "Created"))
    await stub.on(.get, "/v1/dogs", .json([rex]).inScenario("Dogs", requires: "Created"))
    let client = client(stub)
    #expect(try await client.send(Endpoint<[Dog]>(path: "dogs")) == [])
    #expect(await stub.scenarioState("Dogs") == StubScenario.started)
    #expect(
      try await client.send(Endpoint<Dog>(method: .post, path: "dogs", body: .json(rex))) == rex)
    #expect(await stub.scenarioState("Dogs") == "Created")
    #expect(try await client.send(Endpoint<[Dog]>(path: "dogs")) == [rex])
    #expect(try await client.send(Endpoint<[Dog]>(path: "dogs")) == [rex])
    #expect(await stub.callCount(.get, "/v1/dogs") == 3)
  }

  @Test(.stubbed) func afterLogoutTheSameCallIsUnauthorized() async throws {
    let stub = StubTransport.current
    await stub.on(.post, "/v1/login", .status(204).inScenario("Session", movesTo: "LoggedIn"))
    await stub.on(
      .get, "/v1/me", .json(Dog(name: "Rex")).inScenario("Session", requires: "LoggedIn"))
    await stub.on(
      .post, "/v1/logout",
      .status(204).inScenario("Session", requires: "LoggedIn", movesTo: "LoggedOut"))
    await stub.on(.get, "/v1/me", .status(401).times(2))
    let client = client(stub)
    let me = Endpoint<Dog>(path: "me")
    let before = await #expect(throws: APIError.self) { try await client.send(me) }
    #expect(before?.response?.status == 401)
    try await client.send(Endpoint<Void>(method: .post, path: "login"))
    #expect(try await client.send(me) == Dog(name: "Rex"))
    try await client.send(Endpoint<Void>(method: .post, path: "logout"))
    #expect(await stub.scenarioState("Session") == "LoggedOut")
    let after = await #expect(throws: APIError.self) { try await client.send(me) }
    #expect(after?.response?.status == 401)
  }

  @Test func ofAHundredCallsAtOnceOnlyOneSeesTheOldState() async throws {
    let stub = StubTransport()
    await stub.on(
      .post, "/v1/dogs",
      .status(201).inScenario("Dogs", requires: StubScenario.started, movesTo: "Created"))
    await stub.on(.post, "/v1/dogs", .status(409).inScenario("Dogs", requires: "Created"))
    let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
      for _ in 0..<100 {
        group.addTask { try await stub.send(request(.post, "/v1/dogs")).status }
      }
      return try await group.reduce(into: [Int]()) { $0.append($1) }
    }
    #expect(statuses.filter { $0 == 201 }.count == 1)
    #expect(statuses.filter { $0 == 409 }.count == 99)
    #expect(await stub.scenarioState("Dogs") == "Created")
  }

  @Test func aRouteHeldBackByItsScenarioSaysWhichStateItWaitsFor() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/cats", .status(200).allowingUnused())
    await stub.on(.post, "/v1/dogs", .status(201).allowingUnused())
    let line = #line + 1
    await stub.on(.get, "/v1/dogs", .json([Dog]()).inScenario("Dogs", requires: "Created"))
    let error = await #expect(throws: UnmatchedRequest.self) {
      _ = try await stub.send(request(.get, "/v1/dogs"))
    }
    #expect(
      error?.closestRoutes.first == """
        GET /v1/dogs (registered at ScenarioTests.swift:\(line))
            - requires scenario "Dogs" in state "Created"; it is "Started"
        """)
    await stub.setScenario("Dogs", to: "Created")
    #expect(try await stub.send(request(.get, "/v1/dogs")).status == 200)
  }

  @Test func resetPutsEveryScenarioBackAtTheStartAndKeepsTheCounts() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/next", .status(200).inScenario("A", movesTo: "Two"))
    await stub.setScenario("B", to: "Elsewhere")
    _ = try await stub.send(request(.get, "/v1/next"))
    #expect(await [stub.scenarioState("A"), stub.scenarioState("B")] == ["Two", "Elsewhere"])
    await stub.resetScenarios()
    #expect(await [stub.scenarioState("A"), stub.scenarioState("B")] == ["Started", "Started"])
    #expect(await stub.scenarioStates.isEmpty)
    #expect(await stub.callCount(.get, "/v1/next") == 1)
    await stub.setScenario("A", to: "Two")
    await stub.setScenario("A", to: StubScenario.started)
    #expect(await stub.scenarioStates.isEmpty)
  }

  @Test func aSequenceInAScenarioCountsOnlyTheCallsItAnswered() async throws {
    let stub = StubTransport()
    await stub.setScenario("Flaky", to: "Down")
    await stub.on(
      .get, "/v1/dogs",
      .sequence([.status(503), .status(502)]).inScenario("Flaky", requires: "Down"))
    await stub.on(
      .get, "/v1/dogs",
      .sequence([.status(200), .status(203)]).inScenario("Flaky", requires: "Up"))
    var statuses: [Int] = []
    for state in ["Down", "Up", "Down", "Up", "Up"] {
      await stub.setScenario("Flaky", to: state)
      statuses.append(try await stub.send(request(.get, "/v1/dogs")).status)
    }
    #expect(statuses == [503, 200, 502, 203, 203])
  }

  @Test func theStateMovesWhenTheRouteIsChosenNotAfterItsDelay() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(
      .get, "/v1/slow",
      .status(200).delayed(by: .seconds(30)).inScenario(
        "S", requires: StubScenario.started, movesTo: "Busy"))
    await stub.on(.get, "/v1/slow", .status(429).inScenario("S", requires: "Busy"))
    let first = Task { try await stub.send(request(.get, "/v1/slow")).status }
    try #require(await clock.waitForSleepers())
    #expect(await stub.scenarioState("S") == "Busy")
    #expect(try await stub.send(request(.get, "/v1/slow")).status == 429)
    await clock.advance(by: .seconds(30))
    #expect(try await first.value == 200)
  }

  @Test func aStreamedAnswerMovesItsScenario() async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/events",
      .events([ServerSentEvent(data: "1")]).inScenario(
        "Feed", requires: StubScenario.started, movesTo: "Read"))
    await stub.on(.get, "/v1/events", .status(204).inScenario("Feed", requires: "Read"))
    var events: [String] = []
    for try await event in try await client(stub).events(Endpoint<Data>(path: "events")) {
      events.append(event.data)
    }
    #expect(events == ["1"])
    #expect(await stub.scenarioState("Feed") == "Read")
    #expect(try await stub.send(request(.get, "/v1/events")).status == 204)
  }

  @Test func eachHopOfAFollowedRedirectMayMoveTheScenario() async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      .get, "/v1/old",
      .status(301, headers: ["Location": "/v1/new"]).inScenario("Move", movesTo: "Redirected"))
    await stub.on(
      .get, "/v1/new",
      .json(Dog(name: "Rex")).inScenario("Move", requires: "Redirected", movesTo: "Arrived"))
    #expect(try await client(stub).send(Endpoint<Dog>(path: "old")) == Dog(name: "Rex"))
    #expect(await stub.scenarioState("Move") == "Arrived")
  }

  @Test func aScenarioOnAnAnswerInsideASequenceHasNoEffect() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/x", .sequence([.status(200).inScenario("S", movesTo: "Moved")]))
    _ = try await stub.send(request(.get, "/v1/x"))
    #expect(await stub.scenarioState("S") == StubScenario.started)
  }
}
