import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

/// Attacks on shared in-flight `GET`s: credentials a middleware adds after the endpoint was
/// built, headers that change the answer, one caller's timeout reaching the exchange the others
/// wait for, a shared call on a host the server has paused, and priorities across a shared
/// exchange (the exchange waits at its highest caller's priority), and what each caller's
/// listeners hear of the exchange. All on a `TestClock`.
@Suite(.timeLimit(.minutes(3))) struct InFlightSharingHostileTests {
  static let base = url("https://api.example.com/v1/")

  static func client(
    _ stub: StubTransport, clock: TestClock = TestClock(), limits: CallLimits? = nil
  ) -> APIClient {
    var configuration = APIClient.Configuration(timeout: nil, clock: clock)
    configuration.sharesInFlightRequests = true
    configuration.callLimits = limits
    return APIClient(baseURL: base, transport: stub, configuration: configuration)
  }

  static func dogs(
    _ client: APIClient, change: (inout Endpoint<[String]>) -> Void = { _ in }
  ) -> Task<[String], any Error> {
    var endpoint = Endpoint<[String]>(path: "dogs")
    change(&endpoint)
    return Task { [endpoint] in try await client.send(endpoint) }
  }

  /// What two otherwise identical calls differ in, each of which changes the answer: credentials
  /// a middleware adds (after the endpoint was built), the representation asked for, a range,
  /// cookies, the language.
  enum Apart: String, CaseIterable, CustomTestStringConvertible {
    case authorizationFromMiddleware, accept, range, cookie, acceptLanguage
    var testDescription: String { rawValue }

    func change(_ endpoint: inout Endpoint<[String]>, _ side: String) {
      switch self {
      case .authorizationFromMiddleware:
        endpoint.middleware = [SetsHeader(name: "Authorization", value: "Bearer \(side)")]
      case .accept: endpoint.headers["Accept"] = "application/\(side)+json"
      case .range: endpoint.headers["Range"] = side == "a" ? "bytes=0-9" : "bytes=10-19"
      case .cookie: endpoint.headers["Cookie"] = "session=\(side)"
      case .acceptLanguage: endpoint.headers["Accept-Language"] = side == "a" ? "en" : "fr"
      }
    }
  }

  @Test(arguments: Apart.allCases)
  func callsThatDifferInWhatChangesTheAnswerDoNotShare(_ apart: Apart) async throws {
    let gate = AsyncGate()
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/dogs",
      .handler { request, _ in
        await gate.wait()
        return .json([request.headers.fields.map(\.value).joined(separator: " ")])
      })
    let client = Self.client(stub)
    let first = Self.dogs(client) { apart.change(&$0, "a") }
    let second = Self.dogs(client) { apart.change(&$0, "b") }
    #expect(await eventually { client.inFlight.count == 2 })
    _ = try await stub.nextRequest()
    _ = try await stub.nextRequest()
    await gate.open()
    let answers = [try await first.value, try await second.value]
    #expect(answers[0] != answers[1], "each caller got the answer for its own request")
  }

  /// The shared exchange runs without the first caller's timeout: each caller waits within its
  /// own deadline, and a short one must not become the transport's timeout for the others
  /// (URLSession and libcurl give up on an idle exchange after the request's timeout).
  @Test func theSharedExchangeCarriesNoCallersTimeout() async throws {
    let gate = AsyncGate()
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/dogs",
      .handler { _, _ in
        await gate.wait()
        return .json(["Rex"])
      })
    let clock = TestClock()
    let client = Self.client(stub, clock: clock)
    let short = Self.dogs(client) { $0.timeout = .seconds(5) }
    let sent = try await stub.nextRequest()
    let long = Self.dogs(client) { $0.timeout = .seconds(600) }
    #expect(await eventually { client.sharing?.waitingCount == 2 }, "both callers wait")
    #expect(sent.timeout == nil, "the first caller's timeout went to the shared exchange")
    try #require(await clock.waitForSleeper(dueIn: .seconds(5)))
    await clock.advance(by: .seconds(5))
    let error = await #expect(throws: APIError.self) { try await short.value }
    #expect(error?.kind == .timedOut)
    await gate.open()
    #expect(try await long.value == ["Rex"])
    #expect(await stub.requests.count == 1)
  }

  /// A shared call to a host the server has paused past the call's deadline fails at once,
  /// saying how long the pause would have held it, as an unshared call does; nothing is sent.
  @Test(arguments: [false, true])
  func aSharedCallOnAHeldHostFailsAtOnceSayingWhy(shares: Bool) async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.get, "/v1/first", .status(429, headers: ["Retry-After": "30"]))
    await stub.on(.get, "/v1/dogs", .json(["Rex"]))
    let client = Self.client(stub, clock: clock, limits: CallLimits())
    _ = try? await client.send(Endpoint<Data>(path: "first", decoding: .data))
    let call = Self.dogs(client) {
      $0.timeout = .seconds(10)
      $0.sharesInFlight = shares
    }
    // Before the fix a shared call waited out its deadline on the test clock: it would hang.
    let ended = Locked(false)
    let watcher = Task {
      _ = await call.result
      ended.withLock { $0 = true }
    }
    #expect(await eventually { ended.withLock { $0 } }, "failed at once")
    call.cancel()
    await watcher.value
    let error = await #expect(throws: APIError.self) { _ = try await call.value }
    #expect(error?.kind == .timedOut)
    #expect(error?.context?.rateLimitWait == .seconds(30))
    #expect(await stub.requests.count == 1)
  }

  /// With one slot: every caller of a shared exchange cancelled while it waits for the slot,
  /// and nothing is sent; the slot goes to the next call.
  @Test func sharedCallersCancelledWhileQueuedSendNothing() async throws {
    let server = CallLimitsTests.Server()
    let stub = await CallLimitsTests.stub(server)
    let client = Self.client(stub, limits: CallLimits(maximumCalls: 1))
    let holder = Self.dogs(client) { $0.path = "holder" }
    #expect(await eventually { server.waiting == 1 })
    let shared = (0..<3).map { _ in Self.dogs(client) }
    #expect(await eventually { client.limiter?.waitingCount == 1 })
    for call in shared { call.cancel() }
    for call in shared {
      let error = await #expect(throws: APIError.self) { try await call.value }
      #expect(error?.kind == .cancelled)
    }
    #expect(await eventually { client.limiter?.waitingCount == 0 })
    let next = Self.dogs(client) { $0.path = "next" }
    server.releaseOne()
    #expect(try await holder.value == ["ok"])
    #expect(await eventually { server.waiting == 1 })
    server.releaseOne()
    #expect(try await next.value == ["ok"])
    #expect(server.order == ["holder", "next"])
  }

  /// A shared exchange waits for its slot at the highest priority among its callers: a
  /// background call that a user-initiated one joins starts before a normal call that came
  /// first. (Before the fix it waited at its first caller's, background, and went last.)
  @Test func aSharedExchangeWaitsAtItsHighestCallersPriority() async throws {
    let server = CallLimitsTests.Server()
    let stub = await CallLimitsTests.stub(server)
    let client = Self.client(stub, limits: CallLimits(maximumCalls: 1))
    let limiter = try #require(client.limiter)
    let holder = Self.dogs(client) { $0.path = "holder" }
    #expect(await eventually { server.waiting == 1 })
    let normal = Self.dogs(client) { $0.path = "normal" }
    #expect(await eventually { limiter.waitingCount == 1 })
    let background = Self.dogs(client) { $0.priority = .background }
    #expect(await eventually { limiter.waitingCount == 2 })
    let urgent = Self.dogs(client) { $0.priority = .userInitiated }
    // The holder's, the normal call's and the two sharing `dogs`.
    #expect(await eventually { client.sharing?.waitingCount == 4 })
    for _ in 0..<3 {
      #expect(await eventually { server.waiting == 1 })
      server.releaseOne()
    }
    for call in [holder, normal, background, urgent] { #expect(try await call.value == ["ok"]) }
    #expect(server.order == ["holder", "dogs", "normal"])
  }

  /// Every caller of a shared exchange hears its events as its own: the wait for a slot, the
  /// attempt, the head, then its own end (before the fix, a caller that joined heard only its
  /// start, its request and its end).
  @Test func everyCallerOfASharedExchangeHearsItsEvents() async throws {
    let server = CallLimitsTests.Server()
    let stub = await CallLimitsTests.stub(server)
    let recorder = RecordingListener()
    var configuration = APIClient.Configuration(timeout: nil, clock: TestClock())
    configuration.sharesInFlightRequests = true
    configuration.callLimits = CallLimits(maximumCalls: 1)
    configuration.eventListeners = [recorder]
    let client = APIClient(baseURL: Self.base, transport: stub, configuration: configuration)
    let holder = Self.dogs(client) { $0.path = "holder" }
    #expect(await eventually { server.waiting == 1 })
    let first = Self.dogs(client)
    #expect(await eventually { client.limiter?.waitingCount == 1 })
    let joiner = Self.dogs(client)
    // The holder's and the two sharing `dogs`.
    #expect(await eventually { client.sharing?.waitingCount == 3 })
    server.releaseOne()
    #expect(await eventually { server.waiting == 1 })
    server.releaseOne()
    for call in [holder, first, joiner] { #expect(try await call.value == ["ok"]) }
    let names = await recorder.eventNames(ofCalls: 3)
    let expected = [
      "callStarted", "requestBuilt", "callQueued", "callDequeued", "attemptStarted",
      "responseHead", "callEnded",
    ]
    // Calls are numbered as they begin: the holder's first, then the two sharing.
    let sharing = names.keys.sorted().dropFirst()
    #expect(names.count == 3)
    for call in sharing { #expect(names[call] == expected, "call \(call)") }
  }
}
