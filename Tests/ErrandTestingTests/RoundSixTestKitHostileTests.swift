import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Round six of the hostile review of the test kit: a stub that belongs to one `.stubbed` test
/// must not answer another test's requests silently, and must not refuse its own test's.
@Suite(.timeLimit(.minutes(2))) struct RoundSixTestKitHostileTests {
  private static let base = URL(string: "https://api.example.com/v1")!

  /// A client made with `.stubbed` in one test, sent after that test ended from a task that has
  /// no test's stub (a test without the trait, a detached task of a later test): the first
  /// test's routes must not answer it silently.
  @Test func aStubOfAnEndedTestDoesNotAnswerAnUnscopedRequest() async throws {
    let first = StubTransport()
    await first.on(
      .get, "/v1/dogs", StubResponse.status(200, body: Data("first".utf8)).allowingUnused())
    // The first test: it makes the client, then ends (as `StubbedTrait` ends it).
    let client = StubTransport.$scoped.withValue(first) {
      APIClient(baseURL: Self.base, transport: .stubbed)
    }
    first.endTestScope()
    // Another test, without `.stubbed`, or a detached task: no stub is current.
    let outcome = await Task.detached { () -> Result<Data, any Error> in
      do {
        return .success(try await client.send(Endpoint<Data>(path: "dogs")))
      } catch {
        return .failure(error)
      }
    }.value
    guard case .failure(let error) = outcome, case .invalidRequest(let reason)? = error as? APIError
    else {
      Issue.record("expected APIError.invalidRequest, got \(outcome)")
      return
    }
    #expect(reason.contains("GET https://api.example.com/v1/dogs was sent through the stub"))
    #expect(reason.contains("has ended"))
    #expect(await first.requests.isEmpty)
  }

  /// While the first test still runs, a task with no test's stub cannot be told from one of the
  /// first test's own detached tasks: it is answered.
  @Test func aStubOfARunningTestAnswersAnUnscopedRequest() async throws {
    let first = StubTransport()
    await first.on(
      .get, "/v1/dogs", StubResponse.status(200, body: Data("first".utf8)).allowingUnused())
    let client = StubTransport.$scoped.withValue(first) {
      APIClient(baseURL: Self.base, transport: .stubbed)
    }
    let answer = try? await Task.detached {
      try await client.send(Endpoint<Data>(path: "dogs"))
    }.value
    withKnownIssue(
      """
      while its test runs, a stub cannot tell an unscoped request of its own test (a detached \
      task) from another test's (one without the trait)
      """
    ) {
      #expect(answer != Data("first".utf8), "another test was answered by the first test's stub")
    }
  }

  /// A detached task of the test that owns the stub is the test's own request: answered.
  @Test(.stubbed) func aDetachedTaskOfTheOwningTestIsAnswered() async throws {
    await StubTransport.current.on(.get, "/v1/dogs", .status(200, body: Data("mine".utf8)))
    let client = APIClient(baseURL: Self.base, transport: .stubbed)
    let answer = try await Task.detached {
      try await client.send(Endpoint<Data>(path: "dogs"))
    }.value
    #expect(answer == Data("mine".utf8))
  }

  /// A stub made with `StubTransport()` (no trait) outside any test, kept in a `static`, is
  /// nobody's: every test may use it.
  static let shared: StubTransport = StubTransport { _ in .status(200, body: Data("shared".utf8)) }

  @Test(.stubbed, arguments: 0..<4)
  func aStubMadeOutsideAnyTestIsNotRefused(_ index: Int) async throws {
    let client = APIClient(baseURL: Self.base, transport: Self.shared)
    #expect(try await client.send(Endpoint<Data>(path: "n\(index)")) == Data("shared".utf8))
  }

  /// Tasks of a task group inherit the test's stub: answered, in parallel.
  @Test(.stubbed) func aTaskGroupOfTheOwningTestIsAnswered() async throws {
    await StubTransport.current.on(.get, "/v1/n", .status(200, body: Data("ok".utf8)).times(8))
    let client = APIClient(baseURL: Self.base, transport: .stubbed)
    let answers = try await withThrowingTaskGroup(of: Data.self) { group in
      for _ in 0..<8 { group.addTask { try await client.send(Endpoint<Data>(path: "n")) } }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(answers == Array(repeating: Data("ok".utf8), count: 8))
  }

  /// A stub read with `.current` wrapped as another stub's passthrough upstream in the same
  /// test: its own test's request, answered.
  @Test(.stubbed) func theTestsOwnStubBehindAPassthroughIsAnswered() async throws {
    await StubTransport.current.on(.get, "/v1/dogs", .status(200, body: Data("inner".utf8)))
    let outer = StubTransport(passthrough: StubTransport.current)
    let client = APIClient(baseURL: Self.base, transport: outer)
    #expect(try await client.send(Endpoint<Data>(path: "dogs")) == Data("inner".utf8))
  }
}

/// A secret the request carried that the server makes a response header's name of
/// (`X-Echo-<token>: 1`; `+` may be in a name), or quotes percent-encoded (`%2B` for `+`): neither a HAR nor
/// a cassette may hold it.
@Suite(.timeLimit(.minutes(2))) struct RoundSixRecordingHostileTests {
  static let token = "tokR6har+name5e"

  static func echoing() -> StubTransport {
    StubTransport { request in
      let credential = String(request.headers["Authorization"]?.dropFirst(7) ?? "")
      return .status(
        401,
        headers: [
          "X-Echo-\(credential)": "1",
          "X-Quoted": credential.replacingOccurrences(of: "+", with: "%2B"),
        ])
    }
  }

  static let request = HTTPRequest(
    url: URL(string: "https://api.example.com/v1/me")!,
    headers: ["Authorization": "Bearer \(token)"])

  @Test func aHARHoldsNoSecretEchoedInAHeaderName() async throws {
    let stub = Self.echoing()
    _ = try await stub.send(Self.request)
    let text = String(decoding: try JSONEncoder().encode(await stub.har()), as: UTF8.self)
    #expect(!text.contains("tokR6har"), "\(text)")
  }

  @Test func aCassetteHoldsNoSecretEchoedInAHeaderName() async throws {
    let root = FileManager.default.temporaryDirectory
      .appendingPathComponent("round-six-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }
    let file = root.appendingPathComponent("echo.json")
    let cassette = CassetteTransport(url: file, mode: .all, upstream: Self.echoing())
    _ = try await cassette.send(Self.request)
    let text = try String(contentsOf: file, encoding: .utf8)
    #expect(!text.contains("tokR6har"), "written: \(text)")
  }
}

/// A suite whose instance property makes the client with `.stubbed`: the instance is made for
/// each test, inside the test's scope, so each test's client is its own test's.
@Suite(.timeLimit(.minutes(2))) struct RoundSixStubbedSuitePropertyHostileTests {
  let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, transport: .stubbed)

  @Test(.stubbed, arguments: 0..<4)
  func aClientInASuitePropertyIsTheTestsOwn(_ index: Int) async throws {
    await StubTransport.current.on(.get, "/v1/n", .status(200, body: Data("\(index)".utf8)))
    #expect(try await client.send(Endpoint<Data>(path: "n")) == Data("\(index)".utf8))
  }
}
