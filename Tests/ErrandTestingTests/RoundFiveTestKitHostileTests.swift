import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Round five of the hostile review of the test kit: probes that try to make a stub, a cassette,
/// a test clock or the `.stubbed` trait touch a file it does not own, leak a secret, hang, or
/// lie to the test. Each asserts the correct behaviour: a failing probe is a defect.
@Suite(.timeLimit(.minutes(2))) struct RoundFiveTestKitHostileTests {
  // MARK: Support

  /// A fresh folder under the temporary directory, removed by `body`'s end.
  private func inFreshFolder<T>(_ body: (URL) async throws -> T) async throws -> T {
    let root = FileManager.default.temporaryDirectory
      .appendingPathComponent("hr3-round-five-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }
    return try await body(root)
  }

  private static let base = URL(string: "https://api.example.com/v1")!

  /// An upstream that answers every request with its path, as a live server would.
  private func echoingUpstream() -> StubTransport {
    StubTransport { request in .status(200, body: Data(request.url.path.utf8)) }
  }

  // MARK: Cassettes: files the kit does not own

  /// A cassette's name is a name: `../..` in it must not put the file outside
  /// `Fixtures/cassettes`, let alone outside `Fixtures`.
  @Test func aCassetteNamedWithParentSegmentsIsNotWrittenOutsideItsFolder() async throws {
    try await inFreshFolder { root in
      let cassettes = root.appendingPathComponent("Fixtures/cassettes", isDirectory: true)
      try FileManager.default.createDirectory(at: cassettes, withIntermediateDirectories: true)
      let caller = root.appendingPathComponent("Tests/Probe/ProbeTests.swift").path
      let cassette = CassetteTransport(
        named: "../../escaped", mode: .all, upstream: echoingUpstream(), filePath: caller)
      _ = try? await cassette.send(HTTPRequest(url: URL(string: "https://x.example/a")!))
      let escaped = root.appendingPathComponent("escaped.json")
      #expect(
        !FileManager.default.fileExists(atPath: escaped.path),
        "the cassette \"../../escaped\" was written at \(escaped.path), outside Fixtures/cassettes")
    }
  }

  /// A cassette file that is a symbolic link to a file elsewhere: recording must not overwrite
  /// the link's target (a dotfile, another test's data).
  @Test func recordingOverASymbolicLinkLeavesItsTargetAlone() async throws {
    try await inFreshFolder { root in
      let target = root.appendingPathComponent("precious.txt")
      try Data("precious".utf8).write(to: target)
      let file = root.appendingPathComponent("cassettes/linked.json")
      try FileManager.default.createDirectory(
        at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
      try FileManager.default.createSymbolicLink(at: file, withDestinationURL: target)
      let cassette = CassetteTransport(url: file, mode: .all, upstream: echoingUpstream())
      _ = try? await cassette.send(HTTPRequest(url: URL(string: "https://x.example/a")!))
      #expect(
        try String(contentsOf: target, encoding: .utf8) == "precious",
        "recording the cassette wrote through the symbolic link into \(target.path)")
    }
  }

  /// A cassette path that is a FIFO (or any file that never ends): loading it must fail, not
  /// block the actor's thread for ever.
  @Test func aCassetteThatIsAFIFOFailsInsteadOfHanging() async throws {
    try await inFreshFolder { root in
      let fifo = root.appendingPathComponent("pipe.json")
      try #require(mkfifo(fifo.path, 0o600) == 0)
      let cassette = CassetteTransport(url: fifo, mode: .none)
      // A load that blocked in open(2) would hang here, until the suite's time limit says so.
      let outcome = await Task {
        try await cassette.send(HTTPRequest(url: URL(string: "https://x.example/a")!))
      }.result
      guard case .failure(let error) = outcome else {
        Issue.record("a cassette that is a FIFO answered a request")
        return
      }
      #expect(error is CassetteError, "loading a cassette that is a FIFO: \(error)")
    }
  }

  /// Two cassettes over one file (two parallel tests with the same cassette name) recording new
  /// episodes: neither may silently drop what the other recorded.
  @Test func twoRecordersOfOneCassetteKeepEachOthersEpisodes() async throws {
    try await inFreshFolder { root in
      let file = root.appendingPathComponent("shared.json")
      let upstream = echoingUpstream()
      let first = CassetteTransport(url: file, mode: .newEpisodes, upstream: upstream)
      let second = CassetteTransport(url: file, mode: .newEpisodes, upstream: upstream)
      _ = try await first.send(HTTPRequest(url: URL(string: "https://x.example/a")!))
      _ = try await second.send(HTTPRequest(url: URL(string: "https://x.example/a")!))
      _ = try await first.send(HTTPRequest(url: URL(string: "https://x.example/c")!))
      _ = try await second.send(HTTPRequest(url: URL(string: "https://x.example/b")!))
      let replay = CassetteTransport(url: file, mode: .none)
      for path in ["/a", "/b", "/c"] {
        let answer = try? await replay.send(
          HTTPRequest(url: URL(string: "https://x.example\(path)")!))
        #expect(
          answer?.body == Data(path.utf8),
          "the episode \(path) recorded by one transport was lost by the other")
      }
    }
  }

  // MARK: Cassettes: secrets

  /// OAuth's implicit grant puts the token in the fragment; the redaction says it hides
  /// `name=value` pairs there. A URL with a fragment and no query must not skip that.
  @Test func aTokenInAFragmentNeverReachesTheCassette() async throws {
    try await inFreshFolder { root in
      let file = root.appendingPathComponent("fragment.json")
      let cassette = CassetteTransport(url: file, mode: .all, upstream: echoingUpstream())
      _ = try await cassette.send(
        HTTPRequest(
          url: URL(string: "https://api.example.com/callback#access_token=frag-3c9d2e")!))
      let text = try String(contentsOf: file, encoding: .utf8)
      #expect(!text.contains("frag-3c9d2e"), "written: \(text)")
    }
  }

  /// A login sent as a multipart form (Errand's own `MultipartForm`): its `password` part is a
  /// secret body field as much as a JSON or form one.
  @Test func aPasswordInAMultipartFormNeverReachesTheCassette() async throws {
    try await inFreshFolder { root in
      let file = root.appendingPathComponent("multipart.json")
      let form = MultipartForm(
        boundary: "XyZ", parts: [.field("user", "ann"), .field("password", "mp-7a1f0c")])
      let cassette = CassetteTransport(url: file, mode: .all, upstream: echoingUpstream())
      _ = try await cassette.send(
        HTTPRequest(
          method: .post, url: URL(string: "https://api.example.com/login")!,
          headers: ["Content-Type": form.contentType], body: try form.encoded()))
      let text = try String(contentsOf: file, encoding: .utf8)
      #expect(!text.contains("mp-7a1f0c"), "written: \(text)")
    }
  }

  /// `apiKey` is hidden (its lower case, `apikey`, is listed); `accessToken` and `refreshToken`,
  /// the same secrets as `access_token` and `refresh_token` in camel case, must be too.
  @Test func aCamelCaseTokenInALoginResponseNeverReachesTheCassette() async throws {
    try await inFreshFolder { root in
      let file = root.appendingPathComponent("camel.json")
      let upstream = StubTransport { _ in
        .status(
          200,
          body: Data(#"{"accessToken":"camel-5e6f7a","refreshToken":"camel-8b9c0d"}"#.utf8),
          headers: ["Content-Type": "application/json"])
      }
      let cassette = CassetteTransport(url: file, mode: .all, upstream: upstream)
      _ = try await cassette.send(
        HTTPRequest(method: .post, url: URL(string: "https://api.example.com/login")!))
      let text = try String(contentsOf: file, encoding: .utf8)
      #expect(!text.contains("camel-5e6f7a"), "written: \(text)")
      #expect(!text.contains("camel-8b9c0d"), "written: \(text)")
    }
  }

  /// A request whose client uses a narrower redaction than the default: the kit's reports hide
  /// what `Redaction.default` hides on top (`UnmatchedRequest` says so); a cassette's "no match"
  /// error must too.
  @Test func aCassetteMissDoesNotQuoteATokenANarrowRedactionLetsThrough() async throws {
    try await inFreshFolder { root in
      let file = root.appendingPathComponent("narrow.json")
      try Data(#"{"version": 1, "exchanges": []}"#.utf8).write(to: file)
      let cassette = CassetteTransport(url: file, mode: .none)
      let request = HTTPRequest(
        url: URL(string: "https://api.example.com/me?access_token=narrow-4d5e6f")!,
        redaction: Redaction(headers: ["x-trace"]))
      do {
        _ = try await cassette.send(request)
        Issue.record("an empty cassette answered")
      } catch {
        #expect(!"\(error)".contains("narrow-4d5e6f"), "reported: \(error)")
        #expect(!error.localizedDescription.contains("narrow-4d5e6f"))
      }
    }
  }

  /// The same request answered twice while recording: a replay gives the two answers in the
  /// order they came, not the first twice.
  @Test func aRepeatedRequestReplaysItsAnswersInOrder() async throws {
    try await inFreshFolder { root in
      let file = root.appendingPathComponent("repeat.json")
      let upstream = StubTransport()
      await upstream.on(
        .get, "/n",
        .sequence([.status(200, body: Data("one".utf8)), .status(200, body: Data("two".utf8))]))
      let recorder = CassetteTransport(url: file, mode: .once, upstream: upstream)
      let request = HTTPRequest(url: URL(string: "https://x.example/n")!)
      _ = try await recorder.send(request)
      _ = try await recorder.send(request)
      let replay = CassetteTransport(url: file, mode: .none)
      #expect(try await replay.send(request).body == Data("one".utf8))
      #expect(try await replay.send(request).body == Data("two".utf8))
      await #expect(throws: CassetteError.self) { try await replay.send(request) }
    }
  }

  // MARK: Stub reports

  /// A request no route matched is reported with its body; a multipart password in it must read
  /// `<redacted>`, as a JSON or form one does.
  @Test func anUnmatchedMultipartLoginDoesNotPrintItsPassword() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs", .status(200).allowingUnused())
    let form = MultipartForm(
      boundary: "XyZ", parts: [.field("user", "ann"), .field("password", "mp-um-2b3c")])
    do {
      _ = try await stub.send(
        HTTPRequest(
          method: .post, url: URL(string: "https://api.example.com/v1/login")!,
          headers: ["Content-Type": form.contentType], body: try form.encoded()))
      Issue.record("an unmatched request was answered")
    } catch {
      #expect(!"\(error)".contains("mp-um-2b3c"), "reported: \(error)")
    }
  }

  /// A token in the fragment of a request no route matched is not printed.
  @Test func anUnmatchedRequestDoesNotPrintAFragmentToken() async throws {
    let stub = StubTransport()
    do {
      _ = try await stub.send(
        HTTPRequest(url: URL(string: "https://api.example.com/cb#access_token=um-frag-9a8b")!))
      Issue.record("an unmatched request was answered")
    } catch {
      #expect(!"\(error)".contains("um-frag-9a8b"), "reported: \(error)")
    }
  }

  /// The request log (`requests`, printed by a failing `#expect`) is the request as sent; but a
  /// route's description shown in a miss report must not print a secret header value that the
  /// request's own redaction names (`X-Session`), as it hides `Authorization`.
  @Test func aMissReportHidesARouteValueTheRequestsRedactionNames() async throws {
    let stub = StubTransport()
    await stub.on(
      .header("X-Session", "route-sess-1f2e") || .path("/v1/other"), .status(200).allowingUnused())
    do {
      _ = try await stub.send(
        HTTPRequest(
          url: URL(string: "https://api.example.com/v1/me")!,
          headers: ["X-Session": "sent-sess-3d4c"],
          redaction: Redaction(headers: ["x-session"])))
      Issue.record("an unmatched request was answered")
    } catch {
      #expect(!"\(error)".contains("sent-sess-3d4c"), "reported: \(error)")
      #expect(!"\(error)".contains("route-sess-1f2e"), "reported: \(error)")
    }
  }

  // MARK: TestClock

  /// Advancing the clock by two intervals delivers every chunk due within them, as time passing
  /// would: the test that advanced by 2 s must not wait for ever on the third chunk.
  @Test func advancingOverTwoIntervalsDeliversEveryChunkDue() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(
      .get, "/v1/feed",
      .chunks([Data("a".utf8), Data("b".utf8), Data("c".utf8)], interval: .seconds(1)))
    let response = try await stub.stream(
      HTTPRequest(url: URL(string: "https://api.example.com/v1/feed")!))
    let body = try #require(response.bodyStream)
    let reader = Task { try await body.collect() }
    try #require(await clock.waitForSleepers(1))
    await clock.advance(by: .seconds(2))
    // The third chunk's sleeper, registered by the woken stream after the advance, is due a
    // second after the advanced instant: the advance did not reach it.
    let missed = await clock.waitForSleeper(dueIn: .seconds(1))
    // Known: `advance(by:)` moves the clock to its target at once (as its documentation says), so
    // a sleeper registered by a woken task counts from the new instant and misses the rest of
    // the advance. Stepping through the deadlines in order would change every TestClock test.
    withKnownIssue("TestClock.advance(by:) jumps to its target; chained sleepers miss the rest") {
      #expect(!missed, "after advancing by 2 s, a stream with a chunk every 1 s had not ended")
    }
    await clock.advance(by: .seconds(1))
    #expect(try await reader.value == Data("abc".utf8))
  }

  /// A test clock moves forward only: a negative advance must not turn time back (a sleeper
  /// already due would then sleep again, a timeout measured on it would grow).
  @Test func aNegativeAdvanceDoesNotTurnTimeBack() async {
    let clock = TestClock()
    await clock.advance(by: .seconds(10))
    await clock.advance(by: .seconds(-5))
    #expect(clock.now.offset >= .seconds(10), "the clock went back to \(clock.now.offset)")
  }

  /// A sleeper cancelled while the clock advances is either woken or cancelled, never both and
  /// never neither; hundreds in parallel, none left behind.
  @Test func sleepersCancelledWhileTheClockAdvancesNeverStayRegistered() async throws {
    let clock = TestClock()
    let sleepers = (0..<200).map { _ in
      Task { try await clock.sleep(for: .seconds(1)) }
    }
    try #require(await clock.waitForSleepers(200))
    async let advancing: Void = clock.advance(by: .seconds(1))
    for (index, sleeper) in sleepers.enumerated() where index.isMultiple(of: 2) {
      sleeper.cancel()
    }
    await advancing
    for sleeper in sleepers {
      _ = await sleeper.result
    }
    #expect(clock.sleeperCount == 0)
  }

  /// The deadline of a call made on a stub that runs on a test clock: a call waiting on a delay
  /// the clock never reaches must still end at the client's deadline (in wall time) or at the
  /// clock's; not hang for ever because the test forgot to advance.
  @Test func aCallDelayedOnAnUnadvancedTestClockEndsAtItsDeadline() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.get, "/v1/slow", StubResponse.status(200).delayed(by: .seconds(30)))
    let client = APIClient(baseURL: Self.base, transport: stub)
    let call = Task {
      try await client.send(Endpoint<Data>(path: "slow", timeout: .seconds(1), decoding: .data))
    }
    // A call that waited on the test clock past its deadline would hang here, until the
    // suite's time limit says so.
    let outcome = await call.result
    guard case .failure(let error) = outcome, case .timedOut = error as? APIError else {
      Issue.record("a request with a 1 s timeout ended with \(outcome), not APIError.timedOut")
      return
    }
  }

  // MARK: The .stubbed trait

  /// A client made in one `.stubbed` test (a `static let` lazily set up by whichever test ran
  /// first, say) must not answer another test from the first test's stub: the second test's
  /// requests would be answered by routes it never registered, and reported nowhere.
  @Test func aClientMadeInOneStubbedTestDoesNotReachThatTestsStubFromAnother() async throws {
    let first = StubTransport()
    await first.on(
      .get, "/v1/dogs", StubResponse.status(200, body: Data("first".utf8)).allowingUnused())
    let client = StubTransport.$scoped.withValue(first) {
      APIClient(baseURL: Self.base, transport: .stubbed)
    }
    let second = StubTransport()
    await second.on(
      .get, "/v1/dogs", StubResponse.status(200, body: Data("second".utf8)).allowingUnused())
    var answer: Data?
    var thrown: (any Error)?
    // The test that sends through another test's stub is told so, where it runs.
    await withKnownIssue {
      do {
        answer = try await StubTransport.$scoped.withValue(second) {
          try await client.send(Endpoint<Data>(path: "dogs"))
        }
      } catch {
        thrown = error
      }
    } matching: { issue in
      issue.comments.contains { $0.rawValue.contains("through the stub of another") }
        || "\(issue)".contains("through the stub of another")
    }
    #expect(answer != Data("first".utf8), "the second test was answered by the first test's stub")
    #expect(await first.requests.isEmpty)
    guard case .invalidRequest(let reason)? = thrown as? APIError else {
      Issue.record("expected APIError.invalidRequest, got \(String(describing: thrown))")
      return
    }
    #expect(reason.contains("GET https://api.example.com/v1/dogs was sent through the stub"))
  }

  // MARK: Growth

  /// A session configuration made for a stub, then dropped with the stub: the stub (its routes,
  /// its journal with every request body) must not stay alive for the rest of the process, or a
  /// suite of a thousand tests keeps a thousand journals.
  @Test func aStubGivenToAURLSessionConfigurationIsFreedWithIt() async throws {
    weak var released: StubTransport?
    do {
      let stub = StubTransport()
      await stub.on(.post, "/v1/upload", .status(204))
      _ = try await stub.send(
        HTTPRequest(
          method: .post, url: URL(string: "https://api.example.com/v1/upload")!,
          body: Data(count: 1_000_000)))
      _ = StubURLProtocol.configuration(for: stub)
      released = stub
    }
    // Known and documented: a session configuration cannot say when it is done with its protocol
    // class, so the registry keeps each stub it made one for (and its journal) for the process.
    withKnownIssue("StubURLProtocol keeps the stub of every configuration it made") {
      #expect(released == nil, "the stub and its 1 MB journal outlive every reference to them")
    }
  }

  // MARK: Matching

  /// An encoded slash is part of one segment: a route for `/v1/files/{dir}/{name}` must not
  /// answer `/v1/files/a%2Fb` (one segment, `a/b`), and `/v1/files/{name}` must.
  @Test func anEncodedSlashDoesNotSplitAPathSegment() {
    let request = HTTPRequest(url: URL(string: "https://api.example.com/v1/files/a%2Fb")!)
    #expect(!RequestMatcher.path("/v1/files/{dir}/{name}").matches(request))
    #expect(RequestMatcher.path("/v1/files/{name}").matches(request))
    // As before segments were decoded one by one: a trailing slash is not a segment of its own
    // (`URL.path` drops it), and a path without escapes reads as written.
    let slashed = HTTPRequest(url: URL(string: "https://api.example.com/v1/files/a/")!)
    #expect(RequestMatcher.path("/v1/files/{name}").matches(slashed))
    #expect(RequestMatcher.path("/v1/files/a").matches(slashed))
    let spaced = HTTPRequest(url: URL(string: "https://api.example.com/v1/files/a%20b")!)
    #expect(RequestMatcher.path("/v1/files/a b").matches(spaced))
  }

  /// A route answering with an empty sequence has nothing to answer: the stub must say so
  /// rather than invent a 500 the code under test takes for the server's.
  @Test func anEmptySequenceDoesNotInventAServerError() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs", .sequence([]))
    let answer = try? await stub.send(
      HTTPRequest(url: URL(string: "https://api.example.com/v1/dogs")!))
    #expect(answer?.status != 500, "an empty sequence answered with a 500 no one wrote")
  }

  // MARK: More TestClock and trait probes

  /// A stub delayed by 1 s on a test clock that the test advances by 5 s at once answered after
  /// 1 s of the clock's time: the metrics it reports must say 1 s, not the 5 s of the advance
  /// (a test of a "slow response" metric would read the advance, not the delay).
  @Test func aDelayedAnswerReportsItsDelayNotTheWholeAdvance() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.get, "/v1/slow", StubResponse.status(200).delayed(by: .seconds(1)))
    let call = Task {
      try await stub.send(HTTPRequest(url: URL(string: "https://api.example.com/v1/slow")!))
    }
    try #require(await clock.waitForSleepers(1))
    await clock.advance(by: .seconds(5))
    let response = try await call.value
    // Known, as `advancingOverTwoIntervalsDeliversEveryChunkDue`: the clock reads the whole
    // advance by the time the woken answer reads it.
    withKnownIssue("TestClock.advance(by:) jumps to its target before woken tasks read it") {
      #expect(response.metrics?.responseStart == .seconds(1))
    }
  }

  /// The real trait, on a parameterized test whose cases run in parallel: each case is answered
  /// by its own routes only.
  @Test(.stubbed, arguments: 0..<6)
  func parallelCasesOfAStubbedTestAreAnsweredByTheirOwnRoutes(_ index: Int) async throws {
    await StubTransport.current.on(.get, "/v1/n", .status(200, body: Data("\(index)".utf8)))
    let client = APIClient(baseURL: Self.base, transport: .stubbed)
    #expect(try await client.send(Endpoint<Data>(path: "n")) == Data("\(index)".utf8))
    #expect(await StubTransport.current.requests.count == 1)
  }
}
