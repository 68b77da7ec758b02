import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Counts and scenarios, reviewed as an attacker would: odd numbers and names, crowds of calls,
/// routes that never come back.
@Suite(.timeLimit(.minutes(3))) struct RouteExpectationsHostileTests {
  /// A count no call can meet, the calls the route gets, and what is reported.
  struct BadCount: Sendable, CustomTestStringConvertible {
    var testDescription: String
    var modify: @Sendable (StubResponse) -> StubResponse
    var calls: Int
    var failure: String?
  }

  static let badCounts: [BadCount] = [
    BadCount(
      testDescription: "times(-1)", modify: { $0.times(-1) }, calls: 1,
      failure: "was expected -1 times: a number of calls cannot be negative"),
    BadCount(
      testDescription: "atLeast(-5)", modify: { $0.atLeast(-5) }, calls: 0,
      failure: "was expected at least -5 times: a number of calls cannot be negative"),
    BadCount(
      testDescription: "atMost(-1)", modify: { $0.atMost(-1) }, calls: 0,
      failure: "was expected at most -1 times: a number of calls cannot be negative"),
    BadCount(
      testDescription: "times(Int.min)", modify: { $0.times(Int.min) }, calls: 0,
      failure: "was expected \(Int.min) times: a number of calls cannot be negative"),
    BadCount(
      testDescription: "atLeast(3).atMost(1)", modify: { $0.atLeast(3).atMost(1) }, calls: 2,
      failure:
        "was expected at least 3 and at most 1 time, which no number of calls can be; it was called 2 times"
    ),
    BadCount(
      testDescription: "times(Int.max)", modify: { $0.times(Int.max) }, calls: 1,
      failure: "was expected \(Int.max) times and was called 1 time"),
    BadCount(
      testDescription: "atLeast(Int.max)", modify: { $0.atLeast(Int.max) }, calls: 2,
      failure: "was expected at least \(Int.max) times and was called 2 times"),
    BadCount(
      testDescription: "atMost(Int.max)", modify: { $0.atMost(Int.max) }, calls: 3, failure: nil),
  ]

  @Test(arguments: badCounts)
  func aCountNoCallCanMeetIsReportedNotACrash(_ bad: BadCount) async throws {
    let stub = StubTransport()
    let line = #line + 1
    await stub.on(.get, "/v1/x", bad.modify(.status(200)))
    for _ in 0..<bad.calls {
      #expect(try await stub.send(request(.get, "/v1/x")).status == 200)
    }
    guard let failure = bad.failure.map({ "StubTransport route GET /v1/x \($0)" }) else {
      #expect(await stub.verifyExpectations() == [])
      return
    }
    var failures: [String] = []
    await withKnownIssue {
      failures = await stub.verifyExpectations()
    } matching: { issue in
      issue.sourceLocation?.line == line && issue.comments.map(\.rawValue) == [failure]
    }
    #expect(failures == ["\(failure) (registered at RouteExpectationsHostileTests.swift:\(line))"])
  }

  @Test func aHundredCallsAtOnceToARouteForOneAreAllAnsweredAndCountedOnce() async throws {
    let stub = StubTransport()
    let line = #line + 1
    await stub.on(.get, "/v1/once", .status(200).times(1))
    let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
      for _ in 0..<100 {
        group.addTask { try await stub.send(request(.get, "/v1/once")).status }
      }
      return try await group.reduce(into: [Int]()) { $0.append($1) }
    }
    #expect(statuses == Array(repeating: 200, count: 100))
    #expect(await stub.callCount(.get, "/v1/once") == 100)
    let failure = "StubTransport route GET /v1/once was expected 1 time and was called 100 times"
    var failures: [String] = []
    await withKnownIssue {
      failures = await stub.verifyExpectations()
    } matching: { issue in
      issue.sourceLocation?.line == line && issue.comments.map(\.rawValue) == [failure]
    }
    #expect(failures == ["\(failure) (registered at RouteExpectationsHostileTests.swift:\(line))"])
  }

  @Test func twoRoutesThatHandTheStateBackAndForthSplitAThousandCallsEvenly() async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/toggle", .status(200).inScenario("T", requires: "Started", movesTo: "B"))
    await stub.on(
      .get, "/v1/toggle", .status(201).inScenario("T", requires: "B", movesTo: "Started"))
    let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
      for _ in 0..<1_000 {
        group.addTask { try await stub.send(request(.get, "/v1/toggle")).status }
      }
      return try await group.reduce(into: [Int]()) { $0.append($1) }
    }
    #expect(statuses.filter { $0 == 200 }.count == 500)
    #expect(statuses.filter { $0 == 201 }.count == 500)
    #expect(await stub.scenarioState("T") == StubScenario.started)
    #expect(await stub.scenarioStates.isEmpty, "a scenario back at the start keeps no entry")
  }

  /// Names a test may well write by mistake, or on purpose.
  static let oddNames: [String] = [
    "", " ", "Café", "\u{202E}evil", "line\nbreak", "zero\u{200B}width", "🐕‍🦺", "\"quoted\"",
    String(repeating: "long", count: 25_000),
  ]

  @Test(arguments: oddNames)
  func anOddNameOrStateIsAScenarioLikeAnyOther(_ name: String) async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/x", .status(201).inScenario(name, requires: name, movesTo: "Done"))
    await stub.on(.get, "/v1/y", .status(202).inScenario(name, movesTo: name))
    let error = await #expect(throws: UnmatchedRequest.self) {
      _ = try await stub.send(request(.get, "/v1/x"))
    }
    let text = error?.description ?? ""
    #expect(text.utf8.count < 32_000, "\(text.utf8.count) bytes")
    // The reason stays on one line of the report, whatever the name holds.
    let reason = try #require(
      text.split(separator: "\n").first { $0.contains("requires scenario") })
    #expect(reason.hasSuffix("; it is \"Started\""), "\(reason)")
    // Nothing in it that disguises text: no bidirectional override, no invisible character, no
    // line separator (escaped as \u{…} instead); an emoji's joiner is left as it is.
    let disguising = reason.unicodeScalars.filter {
      [.control, .format, .lineSeparator, .paragraphSeparator].contains(
        $0.properties.generalCategory)
        && $0 != "\u{200D}"
    }
    #expect(disguising.isEmpty, "\(disguising.map { String($0.value, radix: 16) })")
    #expect(
      name.unicodeScalars.count > 30 || reason.contains("\"\(Self.escaped(name))\""), "\(reason)")
    #expect(try await stub.send(request(.get, "/v1/y")).status == 202)
    #expect(await stub.scenarioState(name) == name)
    #expect(try await stub.send(request(.get, "/v1/x")).status == 201)
    #expect(await stub.scenarioState(name) == "Done")
  }

  /// How a report writes a name: `\u{202E}` for a scalar that disguises text.
  static func escaped(_ name: String) -> String {
    name.unicodeScalars.map { scalar in
      switch scalar {
      case "\u{202E}", "\u{200B}": "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
      case "\n": "\\n"
      case "\"": "\\\""
      default: String(scalar)
      }
    }.joined()
  }

  @Test func aVeryLongRouteIsCutInItsCountReport() async throws {
    let stub = StubTransport()
    let path = "/v1/" + String(repeating: "x", count: 100_000)
    let line = #line + 1
    await stub.on(.get, path, .status(200).never())
    _ = try await stub.send(request(.get, path))
    var failures: [String] = []
    await withKnownIssue {
      failures = await stub.verifyExpectations()
    } matching: { issue in
      issue.comments.allSatisfy { $0.rawValue.utf8.count < 2_000 }
    }
    #expect(failures.count == 1)
    #expect(failures.allSatisfy { $0.utf8.count < 2_000 }, "\(failures.map(\.utf8.count))")
    let ending =
      "bytes) must not be called and was called 1 time "
      + "(registered at RouteExpectationsHostileTests.swift:\(line))"
    #expect(failures.first?.hasSuffix(ending) == true, "\(failures.first?.suffix(200) ?? "")")
  }

  @Test func aNameIsTheSameScenarioHoweverItsAccentIsWritten() async throws {
    let stub = StubTransport()
    let composed = "Caf\u{E9}"
    let combining = "Cafe\u{301}"
    await stub.on(.get, "/v1/x", .status(200).inScenario(composed, requires: "Open"))
    await stub.setScenario(combining, to: "Open")
    #expect(await stub.scenarioState(composed) == "Open")
    #expect(try await stub.send(request(.get, "/v1/x")).status == 200)
  }

  @Test func aStateThatNeverComesEndsTheCallAtOnceInsteadOfWaiting() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/x", .status(200).inScenario("S", requires: "Never").allowingUnused())
    await #expect(throws: UnmatchedRequest.self) { _ = try await stub.send(request(.get, "/v1/x")) }
    #expect(await stub.unmatchedRequests.count == 1)
  }

  @Test func aThousandHeldBackRoutesStillMakeAShortReport() async throws {
    let stub = StubTransport()
    for index in 0..<1_000 {
      await stub.on(.get, "/v1/x", .status(200).inScenario("S\(index)", requires: "Open"))
    }
    let error = await #expect(throws: UnmatchedRequest.self) {
      _ = try await stub.send(request(.get, "/v1/x"))
    }
    #expect(error?.closestRoutes.count == 3)
    #expect(error?.closestRoutes.first?.contains("requires scenario \"S0\"") == true)
  }

  @Test func manyScenarioNamesAreForgottenOnReset() async {
    let stub = StubTransport()
    for index in 0..<10_000 { await stub.setScenario("S\(index)", to: "Moved") }
    #expect(await stub.scenarioStates.count == 10_000)
    await stub.resetScenarios()
    #expect(await stub.scenarioStates.isEmpty)
  }

  @Test func aHangingRouteMovesItsScenarioAndACancelledCallLeavesItMoved() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/hang", .hang.inScenario("S", movesTo: "Hung"))
    let call = Task { try await stub.send(request(.get, "/v1/hang")) }
    _ = try await stub.nextRequest()
    // The request is journalled and routed in the same step of the actor.
    #expect(await stub.scenarioState("S") == "Hung")
    call.cancel()
    await #expect(throws: CancellationError.self) { _ = try await call.value }
    #expect(await stub.callCount(.get, "/v1/hang") == 1)
  }

  @Test func routesBuiltBeforeTheStubReportAtTheirOwnLines() async throws {
    let line = #line + 1
    let stub: StubTransport = .stub { $0.on(.get, "/v1/x", .status(200).never()) }
    _ = try await stub.send(request(.get, "/v1/x"))
    await withKnownIssue {
      _ = await stub.verifyExpectations()
    } matching: { issue in
      issue.sourceLocation?.line == line
        && issue.comments.map(\.rawValue) == [
          "StubTransport route GET /v1/x must not be called and was called 1 time"
        ]
    }
  }

  @Test func verifyingAgainReportsOnlyWhatChanged() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/x", .status(200).atMost(1))
    for _ in 0..<2 { _ = try await stub.send(request(.get, "/v1/x")) }
    await withKnownIssue {
      _ = await stub.verifyExpectations()
    } matching: { issue in
      issue.comments.map(\.rawValue) == [
        "StubTransport route GET /v1/x was expected at most 1 time and was called 2 times"
      ]
    }
    // The same failure: returned, not recorded again (an unexpected issue would fail the test).
    #expect(await stub.verifyExpectations().count == 1)
    _ = try await stub.send(request(.get, "/v1/x"))
    await withKnownIssue {
      _ = await stub.verifyExpectations()
    } matching: { issue in
      issue.comments.map(\.rawValue) == [
        "StubTransport route GET /v1/x was expected at most 1 time and was called 3 times"
      ]
    }
  }
}
