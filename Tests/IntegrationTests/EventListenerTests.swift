import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// A call's events in the same order, whether a stub or a real server over each transport
/// answers it: one table of scenarios.
@Suite(.timeLimit(.minutes(3))) struct EventListenerTests {
  /// A scenario: the answers, how the client is set up, and the events it must produce.
  struct Scenario: Sendable, CustomTestStringConvertible {
    var name: String
    /// The answer to a request, given how many came before it.
    var answer: @Sendable (_ path: String, _ authorization: String?, _ index: Int) -> Answer
    var middleware: @Sendable () -> [any Middleware] = { [] }
    var endpoint = Endpoint<Data>(path: "dogs")
    var timeout: Duration? = .seconds(30)
    /// Whether the test cancels the call once its first attempt has started.
    var cancels = false
    var expected: [String]
    var testDescription: String { name }
  }

  /// What a server answers, for a stub and a loopback server alike.
  enum Answer: Sendable {
    case status(Int, location: String? = nil)
    case never

    var stub: StubResponse {
      switch self {
      case .status(let status, let location):
        .status(status, headers: location.map { ["Location": $0] } ?? [:])
      case .never: .hang
      }
    }

    var scripted: ScriptedResponse {
      switch self {
      case .status(let status, let location):
        ScriptedResponse(status: status, headers: location.map { [("Location", $0)] } ?? [])
      case .never: ScriptedResponse(delayBeforeHeaders: .seconds(60))
      }
    }
  }

  static let scenarios: [Scenario] = [
    Scenario(
      name: "success", answer: { _, _, _ in .status(200) },
      expected: ["callStarted", "requestBuilt", "attemptStarted", "responseHead", "callEnded"]),
    Scenario(
      name: "401 then refresh",
      answer: { _, authorization, _ in .status(authorization == "Bearer fresh" ? 200 : 401) },
      middleware: { [BearerAuthenticationMiddleware(provider: Tokens())] },
      endpoint: Endpoint<Data>(path: "dogs", requiresAuthentication: true),
      expected: [
        "callStarted", "requestBuilt", "attemptStarted", "responseHead", "tokenRefreshStarted",
        "tokenRefreshFinished", "attemptStarted", "responseHead", "callEnded",
      ]),
    Scenario(
      name: "503 then retry", answer: { _, _, index in .status(index == 0 ? 503 : 200) },
      middleware: {
        [
          RetryMiddleware(
            policy: RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(1), jitter: .none))
        ]
      },
      expected: [
        "callStarted", "requestBuilt", "attemptStarted", "responseHead", "retryScheduled",
        "attemptStarted", "responseHead", "callEnded",
      ]),
    Scenario(
      name: "redirect",
      answer: { path, _, _ in
        path == "/v1/dogs" ? .status(302, location: "/v1/moved") : .status(200)
      },
      expected: [
        "callStarted", "requestBuilt", "attemptStarted", "redirectFollowed", "responseHead",
        "callEnded",
      ]),
    Scenario(
      name: "cancel", answer: { _, _, _ in .never }, cancels: true,
      expected: ["callStarted", "requestBuilt", "attemptStarted", "callCancelled"]),
    Scenario(
      name: "timeout", answer: { _, _, _ in .never }, timeout: .milliseconds(300),
      expected: ["callStarted", "requestBuilt", "attemptStarted", "callFailed"]),
  ]

  /// Who answers: a stub, or a loopback server through a transport.
  enum Answerer: Sendable, CustomTestStringConvertible {
    case stub
    case live(TransportKind)
    var testDescription: String {
      switch self {
      case .stub: "stub"
      case .live(let kind): kind.rawValue
      }
    }
    static let all: [Answerer] = [.stub] + TransportKind.allCases.map(Answerer.live)
  }

  @Test(arguments: scenarios, Answerer.all)
  func aCallTellsTheSameEventsWhoeverAnswers(_ scenario: Scenario, _ answerer: Answerer)
    async throws
  {
    let listener = RecordingListener()
    let configuration = APIClient.Configuration(
      timeout: scenario.timeout, middleware: scenario.middleware(), eventListeners: [listener])
    let count = Locked(0)
    let next: @Sendable (String, String?) -> Answer = { path, authorization in
      let index = count.withLock {
        $0 += 1
        return $0 - 1
      }
      return scenario.answer(path, authorization, index)
    }
    let client: APIClient
    var server: LoopbackServer?
    switch answerer {
    case .stub:
      let stub = StubTransport(followsRedirects: true)
      await stub.on(
        .any,
        .handler { request, _ in
          next(request.url.path, request.headers["Authorization"]).stub
        })
      client = APIClient(
        baseURL: url("http://127.0.0.1/v1/"), transport: stub, configuration: configuration)
    case .live(let kind):
      let live = try LoopbackServer { request in
        next(String(request.target.prefix { $0 != "?" }), request.headers["Authorization"]).scripted
      }
      server = live
      client = kind.client(live.baseURL.appendingPathComponent("v1/"), configuration: configuration)
    }
    defer { server?.stop() }
    let call = Task { try await client.send(scenario.endpoint) }
    var events: [CallEvent] = []
    if scenario.cancels {
      events = await listener.events(through: "attemptStarted")
      call.cancel()
    }
    _ = try? await call.value
    events += await listener.eventsOfOneCall()
    #expect(events.map(\.kind.name) == scenario.expected)
    #expect(Set(events.map(\.callID)).count == 1)
    #expect(events.map(\.elapsed) == events.map(\.elapsed).sorted())
  }
}

/// Hands out a stale token first, then a fresh one.
private actor Tokens: TokenProvider {
  func currentToken() async throws -> String? { "stale" }
  func refreshToken() async throws -> String { "fresh" }
}
