import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

/// Probes of each wait a call can be in when its client cancels it, with the call in its
/// caller's task (every wait ended through the client's list of calls) and in a task of its own
/// (ended by cancelling that task): the body's collection, the stub's delay and handler, a
/// passthrough to a transport of the app's, call limits, the network, a shared exchange; and a
/// deadline that passes as the client cancels.
@Suite(.timeLimit(.minutes(3))) struct CallCancellationWaitsHostileTests {
  typealias Chain = CallControlTests.Chain

  /// Where the probed call waits.
  enum Wait: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case bodyCollection, stubDelay, stubHandler, appTransportBehindAStub, callLimit, network
    case sharedExchange
    var testDescription: String { rawValue }
  }

  /// A transport of the app's that answers after an hour on a test clock, unless its task is
  /// cancelled first. (One that does not look at cancellation holds a call in a task of its own
  /// until it answers, as it would without a stub before it.)
  struct AnswersInAnHour: Transport {
    let clock: TestClock

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
      try await clock.sleep(for: .seconds(3600))
      return HTTPResponse(status: 200, body: Data("late".utf8))
    }
  }

  /// A call waiting in each place ends at once with `.cancelled` when its client cancels it
  /// (by its tag), counted once; another call waiting beside it (where there is one) is not
  /// ended; and nothing more is sent for it afterwards.
  @Test(arguments: Wait.allCases, Chain.allCases)
  func cancelAllEndsTheCallWhereverItWaits(_ wait: Wait, chain: Chain) async throws {
    let clock = TestClock()
    let gate = AsyncGate()
    let network = ManualConnectivity(wait == .network ? .offline : .online)
    let stub: StubTransport
    switch wait {
    case .appTransportBehindAStub:
      stub = StubTransport(passthrough: AnswersInAnHour(clock: clock), clock: clock)
    default:
      stub = StubTransport(clock: clock)
    }
    switch wait {
    case .bodyCollection:
      await stub.on(.any, .stalledAfterHeaders(body: Data("a".utf8)))
    case .stubDelay:
      await stub.on(.any, StubResponse.status(200).delayed(by: .seconds(30)))
    case .stubHandler, .callLimit, .sharedExchange:
      await stub.on(
        .any,
        .handler { _, _ in
          await gate.wait()
          return .status(200)
        })
    case .appTransportBehindAStub, .network:
      break
    }
    var configuration = APIClient.Configuration(
      timeout: nil, middleware: chain.middleware, clock: clock)
    configuration.connectivity = ConnectivityPolicy(source: network)
    configuration.callLimits = wait == .callLimit ? CallLimits(maximumCalls: 1) : nil
    configuration.sharesInFlightRequests = wait == .sharedExchange
    let client = APIClient(baseURL: base, transport: stub, configuration: configuration)
    #expect(client.endsItsOwnWaits(for: Endpoint<Data>(path: "x")) == (chain == .errandsOwn))
    // Beside it, where it can wait behind or with another call: one that is not cancelled.
    let hasOther = wait == .callLimit || wait == .sharedExchange
    let other: Task<Void, any Error>? =
      hasOther
      ? Task { _ = try await client.send(Endpoint<Data>(path: "dogs", decoding: .data)) } : nil
    if hasOther { _ = try await stub.nextRequest() }
    let call = Task {
      _ = try await client.send(Endpoint<Data>(path: "dogs", decoding: .data).tagged("probe"))
    }
    defer {
      call.cancel()
      other?.cancel()
    }
    switch wait {
    case .stubDelay:
      try #require(await clock.waitForSleeper(dueIn: .seconds(30)))
    case .sharedExchange:
      let sharing = try #require(client.sharing)
      #expect(await eventually { sharing.waitingCount == 2 })
    case .callLimit, .network:
      #expect(await eventually { client.inFlight.count == (hasOther ? 2 : 1) })
    default:
      _ = try await stub.nextRequest()
    }
    #expect(client.cancelAll(tagged: "probe") == 1)
    await expectCancelled(call)
    let sentBefore = await stub.requests.count
    await gate.open()
    network.state = .online
    await clock.advance(by: .seconds(60))
    if let other {
      try await other.cancellableValue
    }
    #expect(await stub.requests.count == sentBefore, "sent after it was cancelled")
    #expect(client.inFlight.isEmpty)
  }

  /// A call that waits again and again (eight attempts, each answered `503` after a delay on
  /// the stub's clock, with a backoff between them) holds one registered wait at a time: each
  /// wait forgets what would end it once it is over, so a long call does not grow its entry.
  @Test func aCallThatWaitsOftenKeepsOneWaitRegisteredAtATime() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.any, StubResponse.status(503).delayed(by: .seconds(1)))
    let policy = RetryPolicy(
      maxAttempts: 8, baseDelay: .seconds(1), maxDelay: .seconds(4), jitter: .none, budget: nil)
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        timeout: nil, middleware: [RetryMiddleware(policy: policy, clock: clock)], clock: clock))
    #expect(client.endsItsOwnWaits(for: Endpoint<Data>(path: "x")))
    let call = Task { try await client.send(Endpoint<Data>(path: "dogs", decoding: .data)) }
    defer { call.cancel() }
    // The wait registers as its sleep starts, on another thread: waited for, not read once.
    let registers = client.calls
    for retry in 1..<8 {
      // The stub's delay, then the backoff: one wait each, the one before forgotten.
      try #require(await clock.waitForSleeper(dueIn: .seconds(1)))
      #expect(await eventually { registers.waitCount == 1 }, "attempt \(retry)")
      await clock.advance(by: .seconds(1))
      try #require(await clock.waitForSleeper(dueIn: policy.backoff(beforeRetry: retry)))
      #expect(await eventually { registers.waitCount == 1 }, "backoff \(retry)")
      await clock.advance(by: policy.backoff(beforeRetry: retry))
    }
    try #require(await clock.waitForSleeper(dueIn: .seconds(1)))
    #expect(client.cancelAll() == 1)
    let error = await #expect(throws: APIError.self) { try await call.cancellableValue }
    #expect(error?.kind == .cancelled)
    #expect(client.calls.waitCount == 0)
    #expect(await stub.requests.count == 8)
  }

  /// A deadline that passes as the client cancels the call: the call ends as `cancelAll()`
  /// says, `.cancelled` when it counted the call, else `.timedOut`, round after round.
  @Test(arguments: Chain.allCases)
  func aDeadlineAndACancelAllAtOnceAgreeWithTheCount(_ chain: Chain) async throws {
    for round in 0..<TestSize.count(small: 20, full: 200) {
      let clock = TestClock()
      let stub = StubTransport(clock: clock)
      await stub.on(.any, .hang)
      let client = APIClient(
        baseURL: base, transport: stub,
        configuration: APIClient.Configuration(
          timeout: .seconds(10), middleware: chain.middleware, clock: clock))
      let call = Task { _ = try await client.send(Endpoint<Data>(path: "dogs", decoding: .data)) }
      defer { call.cancel() }
      try #require(await clock.waitForSleeper(dueIn: .seconds(10)))
      async let advanced: Void = clock.advance(by: .seconds(10))
      let counted = client.cancelAll()
      await advanced
      let error = await #expect(throws: APIError.self) { try await call.cancellableValue }
      #expect(
        error?.kind == (counted == 1 ? .cancelled : .timedOut),
        "round \(round): counted \(counted), threw \(String(describing: error))")
      #expect(client.inFlight.isEmpty)
    }
  }

  /// A task executor preference set around a call that meets only Errand's own parts reaches
  /// them (the call runs in its caller's task), as the documentation says.
  @Test func theCallersExecutorPreferenceReachesErrandsOwnMiddleware() async throws {
    guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else { return }
    let executor = CallTaskHostileTests.QueueExecutor()
    let onIt = Locked<[Bool]>([])
    let preferred = executor.asUnownedTaskExecutor()
    let trace = TraceContextMiddleware {
      onIt.withLock { $0.append(withUnsafeCurrentTask { $0?.unownedTaskExecutor } == preferred) }
      return nil
    }
    let stub = StubTransport()
    await stub.on(.any, .status(200))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(timeout: nil, middleware: [trace]))
    try await withTaskExecutorPreference(executor) {
      _ = try await client.send(Endpoint<Data>(path: "dogs", decoding: .data))
    }
    #expect(onIt.withLock { $0 } == [true])
  }
}
