#if os(Linux)
  import Errand
  import ErrandTesting
  import Foundation
  import LoopbackServer
  import TestSupport
  import Testing

  /// The whole hand-off, as a UI test makes it: the test starts a stub server, launches another
  /// process (`StubServerChild`, an app in miniature) with the server's launch environment, the
  /// app finds the server there and calls it through `APIClient` over a production transport,
  /// and the test verifies what the app sent through the stub's journal.
  @Suite(.timeLimit(.minutes(3))) struct StubServerChildProcessTests {
    typealias Call = ChildApp.Call
    typealias Outcome = ChildApp.Outcome

    @Test(arguments: TransportKind.allCases)
    func theAppFindsTheServerAndTheTestSeesWhatItSent(_ kind: TransportKind) async throws {
      let stub = StubTransport()
      await stub.on(.get, "/v1/dogs", .json([Dog(name: "Rex")]))
      await stub.on(.post, "/v1/dogs", .status(201, body: Data("made".utf8)))
      await stub.on(.get, "/v1/me", .json(["name": "Ann"]))
      let server = try LoopbackServer(serving: stub)
      defer { server.stop() }

      let run = try await ChildApp.run(
        [
          Call(path: "dogs"), Call(path: "dogs"),
          Call(method: "POST", path: "dogs", body: #"{"name":"Bella"}"#), Call(path: "cats"),
        ], launchEnvironment: server.launchEnvironment, transport: kind)

      #expect(run.status == 0, "\(run.output)")
      #expect(run.base == server.url("/v1").absoluteString)
      try #require(run.outcomes.count == 4, "\(run.output)")
      #expect(run.outcomes[0] == Outcome(call: 0, status: 200, body: #"[{"name":"Rex"}]"#))
      #expect(run.outcomes[1] == Outcome(call: 1, status: 200, body: #"[{"name":"Rex"}]"#))
      #expect(run.outcomes[2] == Outcome(call: 2, status: 201, body: "made"))
      #expect(run.outcomes[3].status == 501 && run.outcomes[3].error == "unacceptableStatus")
      #expect(
        run.outcomes[3].body?.hasPrefix(
          "StubTransport has no route for GET \(server.url("/v1/cats"))") == true)

      // Verification stays at the test's lines: counts from the journal, unused routes and
      // unmatched requests as the .stubbed trait reports them.
      #expect(await stub.requests(matching: .method(.get) && .path("/v1/dogs")).count == 2)
      #expect(
        await stub.requests(matching: .method(.post)).first?.body == Data(#"{"name":"Bella"}"#.utf8)
      )
      #expect(await stub.unusedRoutes.map { $0.prefix { $0 != "(" } } == ["GET /v1/me "])
      #expect(await stub.unmatchedRequests.map(\.description) == ["GET \(server.url("/v1/cats"))"])
    }

    // MARK: The same table in-process and out-of-process

    /// The routes of both runs, registered at the same lines, so their reports read alike.
    static func routes(_ stub: StubTransport) async {
      await stub.on(
        .method(.get) && .path("/v1/dogs") && .query("page", "2"), .json([Dog(name: "Bella")]))
      await stub.on(.get, "/v1/dogs", .json([Dog(name: "Rex")]))
      await stub.on(
        .method(.post) && .path("/v1/dogs") && .jsonBody(Dog(name: "Bella")), .status(201))
      await stub.on(
        .get, "/v1/flaky", .sequence([.json(["error": "down"], status: 503), .json(["ok": true])]))
      await stub.on(
        .method(.get) && .path("/v1/me") && .header("Authorization"), .json(["name": "Ann"]))
      await stub.on(.delete, "/v1/dogs/{id}", .status(204))
      await stub.on(.get, "/v1/never", .status(200))
    }

    static let calls: [Call] = [
      Call(path: "dogs"),
      Call(path: "dogs", query: ["page": "2"]),
      Call(method: "POST", path: "dogs", body: #"{"name":"Bella"}"#),
      Call(method: "POST", path: "dogs", body: #"{"name":"Kuma"}"#),
      Call(path: "flaky"),
      Call(path: "flaky"),
      Call(path: "me", headers: ["Authorization": "Bearer s3cr3t-t0ken"]),
      Call(path: "me"),
      Call(method: "DELETE", path: "dogs/7"),
      Call(path: "cats", query: ["token": "qu3ry-s3cret"]),
    ]

    /// An outcome with a request no route matched in one form: in-process the call throws the
    /// stub's `UnmatchedRequest`, over the socket it gets `501` with the same report. The
    /// report's list of header fields is left out: a transport adds its own on the wire
    /// (`Accept`, `User-Agent`), which the stub sees and lists.
    static func normalized(_ outcome: Outcome) -> Outcome {
      var normal = outcome
      if outcome.status == 501, outcome.error == "unacceptableStatus" {
        normal.status = nil
        normal.error = "unmatched"
        normal.body = outcome.body.map { String($0.dropLast($0.hasSuffix("\n") ? 1 : 0)) }
      }
      if normal.error == "unmatched", let report = normal.body {
        var lines: [Substring] = []
        var inHeaders = false
        for line in report.split(separator: "\n", omittingEmptySubsequences: false) {
          if line == "headers:" {
            inHeaders = true
          } else if !inHeaders || !line.hasPrefix("  ") {
            inHeaders = false
            lines.append(line)
          }
        }
        normal.body = lines.joined(separator: "\n")
      }
      return normal
    }

    /// The verification messages a stub gives at the test's end.
    static func verification(_ stub: StubTransport) async -> [String] {
      await stub.unusedRoutes.map { "unused: \($0)" }
        + stub.unmatchedRequests.map { "StubTransport has no route for \($0)" }
    }

    @Test(arguments: TransportKind.allCases)
    func theSameRoutesGiveTheSameResultsAndMessagesInEitherProcess(_ kind: TransportKind)
      async throws
    {
      let here = StubTransport()
      await Self.routes(here)
      let hereOutcomes = await ChildApp.inProcess(Self.calls, through: here)

      let there = StubTransport()
      await Self.routes(there)
      let server = try LoopbackServer(serving: there, standingInFor: ChildApp.api)
      defer { server.stop() }
      let run = try await ChildApp.run(
        Self.calls, launchEnvironment: server.launchEnvironment, transport: kind)
      #expect(run.status == 0, "\(run.output)")

      #expect(run.outcomes.map(Self.normalized) == hereOutcomes.map(Self.normalized))
      #expect(await Self.verification(there) == Self.verification(here))
      // The table as it reads: what each call got, and what the stubs report.
      #expect(hereOutcomes.map(\.status) == [200, 200, 201, nil, 503, 200, 200, nil, 204, nil])
      #expect(
        hereOutcomes.map(\.error) == [
          nil, nil, nil, "unmatched", "unacceptableStatus", nil, nil, "unmatched", nil, "unmatched",
        ])
      let messages = await Self.verification(here)
      #expect(messages.count == 4)
      #expect(
        messages.first?.hasPrefix(
          "unused: GET /v1/never (registered at StubServerChildProcessTests.swift:") == true,
        "\(messages)")
      #expect(
        Array(messages.dropFirst()) == [
          "StubTransport has no route for POST https://api.example.com/v1/dogs",
          "StubTransport has no route for GET https://api.example.com/v1/me",
          "StubTransport has no route for GET https://api.example.com/v1/cats?token=<redacted>",
        ])
      // No secret the app sent comes back to it in a report.
      for outcome in run.outcomes {
        #expect(outcome.body?.contains("qu3ry-s3cret") != true, "\(outcome)")
        #expect(outcome.body?.contains("s3cr3t-t0ken") != true, "\(outcome)")
      }
    }

    // MARK: The environment

    @Test func anEnvironmentThatNamesAnotherHostIsRefused() async throws {
      let stub = StubTransport()
      let server = try LoopbackServer(serving: stub)
      defer { server.stop() }
      let port = server.port
      for value in [
        "http://example.com:\(port)", "https://127.0.0.1:\(port)",
        "http://127.0.0.1.nip.io:\(port)",
        "http://user:pw@127.0.0.1:\(port)", "http://127.0.0.1:\(port)/v1", "http://0.0.0.0:\(port)",
      ] {
        let run = try await ChildApp.run(
          [Call(path: "dogs")], launchEnvironment: [StubServerEnvironment.key: value],
          transport: .urlSession)
        #expect(run.status == 3, "\(value): \(run.output)")
        #expect(run.output.hasPrefix("NO-STUB-SERVER \(value)"), "\(value): \(run.output)")
      }
      #expect(server.requests.isEmpty)
      #expect(await stub.requests.isEmpty)
    }
  }
#endif
