import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// A second hostile review of call counts and scenarios: secrets in the reports, the docs run as
/// written, counts and states across cancellation, sequences, pass-through, redirects, streams,
/// samples and routes added while calls wait.
@Suite(.timeLimit(.minutes(3))) struct RouteExpectationsReviewTests {
  static let secret = "s3cret-t0k3n"

  // MARK: - Secrets in the reports

  @Test func aSecretHeaderOnARouteItsScenarioHoldsBackIsNotPrinted() async throws {
    let stub = StubTransport()
    await stub.on(
      .method(.get) && .path("/v1/me") && .header("Authorization", "Bearer \(Self.secret)"),
      .json(Dog(name: "Rex")).inScenario("Session", requires: "LoggedIn"))
    let error = try await #require(throws: UnmatchedRequest.self) {
      _ = try await stub.send(
        request(.get, "/v1/me", headers: ["Authorization": "Bearer \(Self.secret)"]))
    }
    let text = error.description
    // The headers section hides it, as the redaction says it must …
    #expect(text.contains("Authorization: <redacted>"), "\(text)")
    #expect(text.contains("requires scenario \"Session\""), "\(text)")
    // … and so does the near miss, though the route matched the request and its matcher holds
    // the request's own token.
    #expect(text.contains("header Authorization: <redacted>"), "\(text)")
    #expect(!text.contains(Self.secret), "\(text)")
  }

  @Test func aSecretQueryValueOnARouteItsScenarioHoldsBackIsNotPrinted() async throws {
    let stub = StubTransport()
    await stub.on(
      .method(.get) && .path("/v1/me") && .query("token", Self.secret),
      .json(Dog(name: "Rex")).inScenario("Session", requires: "LoggedIn"))
    let error = try await #require(throws: UnmatchedRequest.self) {
      _ = try await stub.send(request(.get, "/v1/me?token=\(Self.secret)"))
    }
    let text = error.description
    #expect(
      text.hasPrefix("StubTransport has no route for GET https://api.example.com/v1/me?token="),
      "\(text)")
    #expect(text.contains("requires scenario \"Session\""), "\(text)")
    #expect(text.contains("query token=<redacted>"), "\(text)")
    #expect(!text.contains(Self.secret), "\(text)")
  }

  @Test func aSecretQueryValueIsNotPrintedAsWhatTheRequestSentInstead() async throws {
    let stub = StubTransport()
    await stub.on(
      .method(.get) && .path("/v1/me") && .query("token", "expected"), .status(200))
    let error = try await #require(throws: UnmatchedRequest.self) {
      _ = try await stub.send(request(.get, "/v1/me?token=\(Self.secret)"))
    }
    let text = error.description
    // Both sides hidden, as a hidden header's are: the matcher's value may be a secret too.
    #expect(
      text.contains("- query: expected token=<redacted>, sent token=<redacted>"), "\(text)")
    #expect(!text.contains(Self.secret), "\(text)")
  }

  @Test func aHeaderTheRequestsRedactionHidesIsNotPrintedAsWhatItSentInstead() async throws {
    let stub = StubTransport()
    await stub.on(
      .method(.get) && .path("/v1/me") && .header("X-Session", "expected"), .status(200))
    var redaction = Redaction.default
    redaction.headers.insert("X-Session")
    let sent = HTTPRequest(
      url: url("https://api.example.com/v1/me"), headers: ["X-Session": Self.secret],
      redaction: redaction)
    let error = try await #require(throws: UnmatchedRequest.self) {
      _ = try await stub.send(sent)
    }
    let text = error.description
    #expect(text.contains("X-Session: <redacted>"), "the headers section hides it:\n\(text)")
    #expect(
      text.contains("- header X-Session: expected <redacted>, sent <redacted>"), "\(text)")
    #expect(!text.contains(Self.secret), "\(text)")
  }

  @Test func aSecretBodyFieldIsNotPrintedInTheJSONDifferences() async throws {
    let stub = StubTransport()
    await stub.on(
      .method(.post) && .path("/v1/login") && .jsonBody(["user": "rex", "password": "other"]),
      .status(204))
    let sent = request(
      .post, "/v1/login", headers: ["Content-Type": "application/json"],
      body: Data(#"{"user":"rex","password":"\#(Self.secret)"}"#.utf8))
    let error = try await #require(throws: UnmatchedRequest.self) {
      _ = try await stub.send(sent)
    }
    let text = error.description
    #expect(text.contains(#""password":"<redacted>""#), "the body line hides it:\n\(text)")
    #expect(
      text.contains("$.password: expected <redacted>, sent <redacted> (they differ)"), "\(text)")
    #expect(!text.contains(Self.secret), "\(text)")
  }

  @Test func aCountReportDoesNotPrintASecretTheRouteMatchesOn() async throws {
    let stub = StubTransport()
    let line = #line + 1
    await stub.on(.header("Authorization", "Bearer \(Self.secret)"), .status(200).never())
    _ = try await stub.send(
      request(.get, "/v1/me", headers: ["Authorization": "Bearer \(Self.secret)"]))
    var failures: [String] = []
    await withKnownIssue {
      failures = await stub.verifyExpectations()
    } matching: { issue in
      issue.sourceLocation?.line == line
    }
    #expect(failures.count == 1)
    #expect(failures.allSatisfy { !$0.contains(Self.secret) }, "\(failures)")
    #expect(
      failures.first?.hasPrefix(
        "StubTransport route header Authorization: <redacted> must not be called") == true,
      "\(failures)")
    // Counted by the matcher as written: another token is another route.
    #expect(await stub.callCount(for: .header("Authorization", "Bearer \(Self.secret)")) == 1)
    #expect(await stub.callCount(for: .header("Authorization", "Bearer other")) == 0)
  }

  // MARK: - Counts that are wrong or lost

  @Test func aNegativeFewestIsReportedEvenOnARouteThatMayGoUnused() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/x", .status(200).atLeast(-5).allowingUnused())
    await stub.on(.get, "/v1/y", .status(200).allowingUnused().atLeast(-1))
    // Docs: "A negative count, or a fewest above the most, is reported as a mistake."
    var failures: [String] = []
    await withKnownIssue {
      failures = await stub.verifyExpectations()
    } matching: { issue in
      issue.comments.allSatisfy { $0.rawValue.hasSuffix("a number of calls cannot be negative") }
    }
    #expect(failures.count == 2, "\(failures)")
    #expect(
      failures.map { $0.prefix { $0 != "(" } } == [
        "StubTransport route GET /v1/x was expected at least -5 times: a number of calls cannot "
          + "be negative ",
        "StubTransport route GET /v1/y was expected at least -1 times: a number of calls cannot "
          + "be negative ",
      ], "\(failures)")
  }

  @Test func aRouteWhoseMatcherHoldsALineBreakIsReportedOnOneLine() async throws {
    let stub = StubTransport()
    let forged = "StubTransport route GET /v1/b was expected 1 time and was called 9 times"
    await stub.on(.get, "/v1/a\n\(forged)", .status(200))
    await stub.on(.get, "/v1/\u{202E}gnp.exe", .status(200))
    var failures: [String] = []
    await withKnownIssue {
      failures = await stub.verifyExpectations()
    }
    #expect(failures.count == 2)
    // Escaped as scenario names are (`\n`, `\u{202E}`), so that a report cannot be disguised.
    #expect(failures.allSatisfy { !$0.contains("\n") && !$0.contains("\u{202E}") })
    #expect(
      failures.first?.hasPrefix(#"StubTransport route GET /v1/a\nStubTransport route GET /v1/b"#)
        == true, "\(failures)")
    #expect(failures.last?.contains(#"GET /v1/\u{202E}gnp.exe"#) == true, "\(failures)")
    // The near miss names the routes the same way, and escapes what the request sent.
    let error = try await #require(throws: UnmatchedRequest.self) {
      _ = try await stub.send(request(.get, "/v1/a%0AStubTransport%20route"))
    }
    let text = error.description
    #expect(!text.contains("\u{202E}"), "\(text)")
    #expect(text.contains(#"  GET /v1/a\nStubTransport route GET /v1/b"#), "\(text)")
    #expect(
      text.contains(#"- path: expected /v1/a\nStubTransport route GET /v1/b"#)
        && text.contains(#"sent /v1/a\nStubTransport route"#), "\(text)")
    #expect(!text.contains("\nStubTransport route GET /v1/b"), "\(text)")
  }

  @Test func callCountOfAMethodAndPathMissesTheSameRouteWrittenInAnotherOrder() async throws {
    let stub = StubTransport()
    await stub.on(.path("/v1/dogs") && .method(.get), .json([Dog]()))
    _ = try await stub.send(request(.get, "/v1/dogs"))
    // Documented as "the routes registered with this method and path (or a matcher that reads
    // the same)": this one reads "/v1/dogs GET", and is not counted.
    #expect(await stub.callCount(.get, "/v1/dogs") == 0)
    #expect(await stub.callCount(for: .path("/v1/dogs") && .method(.get)) == 1)
  }

  @Test func aContractStubsCountIsReportedAtTheTestsLineNotInsideTheKit() async throws {
    let rex = [Dog(name: "Rex")]
    let contract = Contract(
      "Dogs API",
      [.returns("list dogs", Endpoint<[Dog]>(path: "dogs"), rex, answer: .json(rex).times(1))])
    let line = #line + 1
    let stub = contract.stub(baseURL: base)
    for _ in 0..<2 { _ = try await client(stub).send(Endpoint<[Dog]>(path: "dogs")) }
    let reported = Reported()
    var failures: [String] = []
    await withKnownIssue {
      failures = await stub.verifyExpectations()
    } matching: { issue in
      reported.fileIDs.append(
        "\(issue.sourceLocation?.fileID ?? ""):\(issue.sourceLocation?.line ?? 0)")
      return true
    }
    #expect(failures.count == 1)
    #expect(reported.fileIDs == ["\(#fileID):\(line)"], "\(failures)")
    #expect(
      failures == [
        "StubTransport route GET /v1/dogs was expected 1 time and was called 2 times "
          + "(registered at RouteExpectationsReviewTests.swift:\(line))"
      ])
  }

  /// What a `matching:` closure saw.
  final class Reported: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [String] = []
    var fileIDs: [String] {
      get { lock.withLock { seen } }
      set { lock.withLock { seen = newValue } }
    }
  }

  // MARK: - The docs, as written

  @Test func theVerifyExpectationsDocExampleRunsAsWritten() async throws {
    let stub = StubTransport()
    let line = #line + 1
    await stub.on(.get, "/v1/dogs", .json([Dog]()).times(2))
    for _ in 0..<3 { _ = try await stub.send(request(.get, "/v1/dogs")) }
    // As `verifyExpectations()`'s doc comment writes it: the issue at the route's line is a
    // known one, and the #expect holds.
    await withKnownIssue {
      #expect(
        await stub.verifyExpectations() == [
          "StubTransport route GET /v1/dogs was expected 2 times and was called 3 times "
            + "(registered at RouteExpectationsReviewTests.swift:\(line))"
        ])
    }
  }

  @Test func readmesCountSnippetExpectsTheCountItsOwnCommentReports() async throws {
    let stub = StubTransport()
    let line = #line + 1
    await stub.on(.get, "/v1/dogs", .json([Dog]()).times(2))
    // README: "// StubTransport route GET /v1/dogs was expected 2 times and was called 3 times"
    // then "#expect(await stub.callCount(.get, "/v1/dogs") == 3)". Called three times:
    for _ in 0..<3 { _ = try await stub.send(request(.get, "/v1/dogs")) }
    var failures: [String] = []
    await withKnownIssue {
      failures = await stub.verifyExpectations()
    } matching: { issue in
      issue.sourceLocation?.line == line
    }
    #expect(failures.count == 1)
    #expect(await stub.callCount(.get, "/v1/dogs") == 3)
  }

  @Test func theArticlesSessionFlowRunsAsWritten() async throws {
    let stub = StubTransport()
    let me = Dog(name: "Rex")
    await stub.on(.post, "/v1/login", .status(204).inScenario("Session", movesTo: "LoggedIn"))
    await stub.on(.get, "/v1/me", .json(me).inScenario("Session", requires: "LoggedIn"))
    await stub.on(.post, "/v1/logout", .status(204).inScenario("Session", movesTo: "LoggedOut"))
    await stub.on(.get, "/v1/me", .status(401))  // any other state
    var statuses: [Int] = []
    for (method, path) in [
      (HTTPMethod.get, "/v1/me"), (.post, "/v1/login"), (.get, "/v1/me"), (.post, "/v1/logout"),
      (.get, "/v1/me"),
    ] {
      statuses.append(try await stub.send(request(method, path)).status)
    }
    #expect(statuses == [401, 204, 200, 204, 401])
    #expect(await stub.verifyExpectations() == [])
  }

  @Test func theArticlesNearMissComesFromTheRequiresCreatedRouteAlone() async throws {
    let rex = Dog(name: "Rex")
    // With the article's three routes, `GET /v1/dogs` in "Started" is answered by the first.
    let flow = StubTransport()
    await flow.on(
      .get, "/v1/dogs", .json([Dog]()).inScenario("Dogs", requires: StubScenario.started))
    await flow.on(.post, "/v1/dogs", .json(rex, status: 201).inScenario("Dogs", movesTo: "Created"))
    await flow.on(.get, "/v1/dogs", .json([rex]).inScenario("Dogs", requires: "Created"))
    #expect(try await flow.send(request(.get, "/v1/dogs")).status == 200)
    // The article and README show the report for the `requires: "Created"` route alone.
    let stub = StubTransport()
    let line = #line + 1
    await stub.on(.get, "/v1/dogs", .json([rex]).inScenario("Dogs", requires: "Created"))
    let error = try await #require(throws: UnmatchedRequest.self) {
      _ = try await stub.send(request(.get, "/v1/dogs"))
    }
    #expect(
      error.description == """
        StubTransport has no route for GET https://api.example.com/v1/dogs
        closest routes:
          GET /v1/dogs (registered at RouteExpectationsReviewTests.swift:\(line))
            - requires scenario "Dogs" in state "Created"; it is "Started"
        """)
  }

  @Test func currentOutsideAStubbedTestIsReportedAtTheTestThatReadIt() async throws {
    let reported = Reported()
    withKnownIssue {
      _ = StubTransport.current
    } matching: { issue in
      reported.fileIDs.append(
        "\(issue.sourceLocation?.fileID ?? ""):\(issue.sourceLocation?.line ?? 0)")
      return true
    }
    // A getter cannot know its caller's line: the issue is at this test's declaration.
    let declared = try #require(Test.current?.sourceLocation)
    #expect(reported.fileIDs == ["\(#fileID):\(declared.line)"], "\(reported.fileIDs)")
  }

  // MARK: - Counts and states across the ways a call is answered

  @Test func aCallCancelledInItsDelayIsCountedOnceAndMovesTheStateOnce() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(
      .post, "/v1/pay",
      .status(201).delayed(by: .seconds(5)).inScenario(
        "Pay", requires: StubScenario.started, movesTo: "Paid"
      ).times(1))
    await stub.on(.post, "/v1/pay", .status(409).inScenario("Pay", requires: "Paid").times(1))
    let call = Task { try await stub.send(request(.post, "/v1/pay")) }
    try #require(await clock.waitForSleepers(1))
    // Counted and moved when chosen, before the delay.
    #expect(await stub.callCount(.post, "/v1/pay") == 1)
    #expect(await stub.scenarioState("Pay") == "Paid")
    call.cancel()
    await #expect(throws: CancellationError.self) { _ = try await call.value }
    #expect(clock.sleeperCount == 0)
    // The retry finds the state moved.
    #expect(try await stub.send(request(.post, "/v1/pay")).status == 409)
    #expect(await stub.callCount(.post, "/v1/pay") == 2)
    #expect(await stub.verifyExpectations() == [])
  }

  @Test func aSequenceInAScenarioGivesEachOfManyCallsAtOnceItsOwnAnswer() async throws {
    let stub = StubTransport()
    let answers = (0..<50).map { StubResponse.status(200 + $0) }
    await stub.on(
      .get, "/v1/s", .sequence(answers).inScenario("Q", movesTo: "Asked").times(50))
    let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
      for _ in 0..<50 {
        group.addTask { try await stub.send(request(.get, "/v1/s")).status }
      }
      return try await group.reduce(into: [Int]()) { $0.append($1) }
    }
    #expect(statuses.sorted() == Array(200..<250))
    #expect(await stub.scenarioState("Q") == "Asked")
    #expect(await stub.verifyExpectations() == [])
  }

  @Test func aPassThroughRouteCountsOnceAndItsUpstreamCountsItsOwn() async throws {
    let upstream = StubTransport()
    await upstream.on(.get, "/v1/live", .status(200).times(2))
    let stub = StubTransport(passthrough: upstream)
    await stub.on(
      .get, "/v1/live",
      .passthrough.inScenario("L", requires: StubScenario.started, movesTo: "Forwarded").times(1))
    #expect(try await stub.send(request(.get, "/v1/live")).status == 200)
    #expect(await stub.scenarioState("L") == "Forwarded")
    // Held back now: the request goes on to the upstream without a route.
    #expect(try await stub.send(request(.get, "/v1/live")).status == 200)
    #expect(await stub.callCount(.get, "/v1/live") == 1)
    #expect(await stub.forwardedRequests.count == 2)
    #expect(await stub.unmatchedRequests.isEmpty)
    #expect(await upstream.callCount(.get, "/v1/live") == 2)
    #expect(await stub.verifyExpectations() == [])
    #expect(await upstream.verifyExpectations() == [])
  }

  @Test func aFollowedRedirectChainCountsEachHopOnceAndMovesTheStateAtEach() async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      .get, "/v1/a",
      .status(302, headers: ["Location": "/v1/b"]).inScenario(
        "R", requires: StubScenario.started, movesTo: "AtB"
      ).times(1))
    await stub.on(
      .get, "/v1/b",
      .status(302, headers: ["Location": "/v1/a"]).inScenario("R", requires: "AtB", movesTo: "Back")
        .times(1))
    await stub.on(
      .get, "/v1/a",
      .json(Dog(name: "Rex")).inScenario("R", requires: "Back", movesTo: "Done").times(1))
    #expect(try await client(stub).send(Endpoint<Dog>(path: "a")) == Dog(name: "Rex"))
    #expect(await stub.scenarioState("R") == "Done")
    #expect(await stub.callCount(.get, "/v1/a") == 2)
    #expect(await stub.requests.count == 3)
    #expect(await stub.verifyExpectations() == [])
  }

  @Test func aStreamLeftAfterItsFirstChunkCountsOnceAndMovesOnce() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(
      .get, "/v1/feed",
      .chunks([Data("a".utf8), Data("b".utf8), Data("c".utf8)], interval: .seconds(1))
        .inScenario("F", requires: StubScenario.started, movesTo: "Streaming").times(1))
    await stub.on(.get, "/v1/feed", .status(204).inScenario("F", requires: "Streaming").times(1))
    let stream = try await client(stub).stream(Endpoint<Data>(path: "feed", decoding: .data))
    #expect(await stub.scenarioState("F") == "Streaming")
    var first: Data?
    for try await chunk in stream {
      first = chunk
      break
    }
    #expect(first == Data("a".utf8))
    #expect(try await stub.send(request(.get, "/v1/feed")).status == 204)
    #expect(await stub.callCount(.get, "/v1/feed") == 2)
    #expect(await stub.verifyExpectations() == [])
  }

  @Test func aSamplesStubAnswersWhatAScenarioHoldsBackWithoutCountingTheRoute() async throws {
    let stub = StubTransport.samples()
    await stub.on(
      .get, "/v1/dogs", .json([Dog(name: "Rex")]).inScenario("S", requires: "Open").times(1))
    let endpoint = Endpoint<[Dog]>(path: "dogs").withSample(
      try JSONEncoder().encode([Dog(name: "Sample")]))
    #expect(try await client(stub).send(endpoint) == [Dog(name: "Sample")])
    #expect(await stub.callCount(.get, "/v1/dogs") == 0)
    await stub.setScenario("S", to: "Open")
    #expect(try await client(stub).send(endpoint) == [Dog(name: "Rex")])
    #expect(await stub.unmatchedRequests.isEmpty)
    #expect(await stub.verifyExpectations() == [])
  }

  @Test func aRouteAddedWhileACallWaitsAnswersTheNextCallAndCountsOnlyThat() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(
      .post, "/v1/dogs",
      .status(201).delayed(by: .seconds(10)).inScenario(
        "D", requires: StubScenario.started, movesTo: "Created"
      ).times(1))
    let first = Task { try await stub.send(request(.post, "/v1/dogs")).status }
    try #require(await clock.waitForSleepers(1))
    // Registered while the first call waits out its delay.
    await stub.on(.post, "/v1/dogs", .status(409).inScenario("D", requires: "Created").times(1))
    #expect(try await stub.send(request(.post, "/v1/dogs")).status == 409)
    await clock.advance(by: .seconds(10))
    #expect(try await first.value == 201)
    #expect(await stub.verifyExpectations() == [])
  }

  @Test(.ownThread) func aReportForTwentyThousandCallsIsOneLineRecordedOnce() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/x", .status(200).never())
    for _ in 0..<20_000 { _ = try await stub.send(request(.get, "/v1/x")) }
    var failures: [String] = []
    await withKnownIssue {
      failures = await stub.verifyExpectations()
      failures += await stub.verifyExpectations()
    } matching: { issue in
      issue.comments.map(\.rawValue) == [
        "StubTransport route GET /v1/x must not be called and was called 20000 times"
      ]
    }
    #expect(failures.count == 2)
    #expect(Set(failures).count == 1)
  }
}

/// Probes that run under the `.stubbed` trait: each case of a parameterized test has a stub of
/// its own, and the trait checks it when the case ends.
@Suite(.timeLimit(.minutes(3))) struct RouteExpectationsReviewTraitTests {
  @Test(.stubbed, arguments: 0..<16)
  func eachCaseCountsOnlyItsOwnCalls(_ index: Int) async throws {
    let stub = StubTransport.current
    let calls = index % 3 + 1
    await stub.on(.get, "/v1/shared", .json([Dog]()).times(calls))
    await stub.on(.get, "/v1/case/\(index)", .status(204).times(1))
    await stub.on(.get, "/v1/spare", .status(200).times(1).allowingUnused())
    let client = APIClient(baseURL: base, transport: .stubbed)
    for _ in 0..<calls { _ = try await client.send(Endpoint<[Dog]>(path: "shared")) }
    try await client.send(Endpoint<Void>(path: "case/\(index)"))
    #expect(await stub.callCount(.get, "/v1/shared") == calls)
    #expect(await stub.requests.count == calls + 1)
    #expect(await stub.verifyAllRoutesUsed() == [])
    #expect(await stub.verifyExpectations() == [])
  }

  @Test(.stubbed, arguments: [1, 2, 3])
  func aCaseThatChecksItsOwnFailuresIsNotFailedAgainByTheTrait(_ extra: Int) async throws {
    let stub = StubTransport.current
    await stub.on(.get, "/v1/dogs", .json([Dog]()).times(1))
    await stub.on(.get, "/v1/cats", .json([Dog]()).times(2))
    await withKnownIssue {
      _ = await stub.verifyAllRoutesUsed()
    } matching: { issue in
      issue.comments.allSatisfy { $0.rawValue.hasSuffix("and was called 0 times") }
    }
    let client = client(stub)
    for _ in 0..<(1 + extra) { _ = try await client.send(Endpoint<[Dog]>(path: "dogs")) }
    for _ in 0..<2 { _ = try await client.send(Endpoint<[Dog]>(path: "cats")) }
    await withKnownIssue {
      _ = await stub.verifyExpectations()
    } matching: { issue in
      issue.comments.map(\.rawValue) == [
        "StubTransport route GET /v1/dogs was expected 1 time and was called \(1 + extra) times"
      ]
    }
  }

  @Test(.stubbed) func childTasksShareTheTestsStubAndItsCounts() async throws {
    let stub = StubTransport.current
    await stub.on(.get, "/v1/dogs", .json([Dog]()).times(20))
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<20 {
        group.addTask {
          #expect(StubTransport.current === stub)
          _ = try await APIClient(baseURL: base, transport: .stubbed).send(
            Endpoint<[Dog]>(path: "dogs"))
        }
      }
      try await group.waitForAll()
    }
    #expect(await stub.callCount(.get, "/v1/dogs") == 20)
  }
}

/// A suite whose initializer registers routes on the trait's stub.
@Suite(.timeLimit(.minutes(3))) struct RouteExpectationsReviewInitTests {
  let stub: StubTransport

  init() async {
    stub = StubTransport.current
    await stub.on(.get, "/v1/dogs", .json([Dog]()).times(1))
  }

  @Test(.stubbed) func aSuiteInitializerRunsInsideTheTestsScope() async throws {
    #expect(stub === StubTransport.current)
    _ = try await stub.send(request(.get, "/v1/dogs"))
  }
}
