import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

/// Probes of how `cancelAll()` ends a call that runs in its caller's task (it meets only
/// Errand's own middleware and transport), each of its waits ended through the client's list of
/// calls, beside the same call in a task of its own (it meets a middleware of the app's): it must
/// end at once with `.cancelled`, never be sent once counted, leave other callers' and other
/// clients' calls alone, and be counted exactly when it ends as cancelled.
@Suite(.timeLimit(.minutes(3))) struct CallCancellationHostileTests {
  typealias Chain = CallControlTests.Chain

  static func client(
    _ transport: any Transport, chain: Chain, middleware: [any Middleware] = [],
    timeout: Duration? = nil, clock: any Clock<Duration> = ContinuousClock(),
    configure: (inout APIClient.Configuration) -> Void = { _ in }
  ) -> APIClient {
    var configuration = APIClient.Configuration(
      timeout: timeout, middleware: middleware + chain.middleware, clock: clock)
    configure(&configuration)
    let client = APIClient(baseURL: base, transport: transport, configuration: configuration)
    #expect(
      client.endsItsOwnWaits(for: Endpoint<Data>(path: "x")) == (chain == .errandsOwn),
      "the call does not run where this case means it to")
    return client
  }

  /// A call its client cancels between two of its waits (here while a middleware of Errand's
  /// asks the app for the trace context, as a sign-out on another thread could) is never sent:
  /// it throws `.cancelled`, counted once, and the transport gets nothing, wherever it runs.
  @Test(arguments: Chain.allCases, [false, true])
  func aCallCancelledBetweenItsWaitsIsNeverSent(_ chain: Chain, streams: Bool) async throws {
    let stub = StubTransport()
    await stub.on(.any, .status(200, body: Data("ok".utf8)))
    let late = LateClient()
    let trace = TraceContextMiddleware {
      late.cancelAll()
      return nil
    }
    let client = Self.client(stub, chain: chain, middleware: [trace], timeout: .seconds(30))
    late.client = client
    let endpoint = Endpoint<Data>(path: "dogs", decoding: .data)
    let error = await #expect(throws: APIError.self) {
      if streams {
        _ = try await client.stream(endpoint).collect()
      } else {
        _ = try await client.send(endpoint)
      }
    }
    #expect(error?.kind == .cancelled)
    #expect(late.cancelled == [1])
    #expect(await stub.requests.isEmpty, "sent after cancelAll() counted it")
    #expect(client.inFlight.isEmpty)
  }

  /// A call cancelled while its request is built, whose request then turns out invalid, throws
  /// `.cancelled` as `cancelAll()` counted it, not the invalid request.
  @Test(arguments: Chain.allCases)
  func aCallCountedWhileItsInvalidRequestIsBuiltThrowsCancelled(_ chain: Chain) async throws {
    let stub = StubTransport()
    await stub.on(.any, .status(200))
    let late = LateClient()
    let client = Self.client(stub, chain: chain)
    late.client = client
    var endpoint = Endpoint<Data>(
      method: .post, path: "dogs", body: .json(RunsWhenEncoded { late.cancelAll() }),
      decoding: .data)
    endpoint.maximumResponseSize = -1
    let error = await #expect(throws: APIError.self) { try await client.send(endpoint) }
    #expect(late.cancelled == [1])
    #expect(
      error?.kind == .cancelled,
      "cancelAll() counted a call that threw \(String(describing: error))")
    #expect(await stub.requests.isEmpty)
    #expect(client.inFlight.isEmpty)
  }

  /// Calls that fail at once (the transport throws), with `cancelAll()` made among them from
  /// another task, round after round: the counts add up to the calls that threw `.cancelled`,
  /// every other call throws the transport's error, and none is left listed.
  @Test(arguments: Chain.allCases)
  func theCountsAreTheFailingCallsThatEndCancelled(_ chain: Chain) async throws {
    let stub = StubTransport()
    await stub.on(.any, .error(URLError(.badServerResponse)))
    let client = Self.client(stub, chain: chain)
    let endpoint = Endpoint<Data>(path: "dogs", decoding: .data)
    for round in 0..<TestSize.count(small: 40, full: 400) {
      let outcomes = Locked((cancelled: 0, failed: 0, other: [String]()))
      let counted = Locked(0)
      await withTaskGroup(of: Void.self) { group in
        for _ in 0..<40 {
          group.addTask {
            do {
              _ = try await client.send(endpoint)
              outcomes.withLock { $0.other.append("succeeded") }
            } catch let error as APIError where error.kind == .cancelled {
              outcomes.withLock { $0.cancelled += 1 }
            } catch let error as APIError where error.kind == .transport {
              outcomes.withLock { $0.failed += 1 }
            } catch {
              outcomes.withLock { $0.other.append("\(error)") }
            }
          }
        }
        group.addTask {
          for _ in 0..<8 {
            await Task.yield()
            let count = client.cancelAll()
            counted.withLock { $0 += count }
          }
        }
      }
      let ended = outcomes.withLock { $0 }
      #expect(ended.other.isEmpty, "round \(round)")
      #expect(ended.cancelled + ended.failed == 40, "round \(round)")
      #expect(counted.withLock { $0 } == ended.cancelled, "round \(round)")
      #expect(client.inFlight.isEmpty, "round \(round)")
    }
  }

  /// Which of two callers sharing one exchange its client cancels.
  enum Leaver: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case theOneThatStartedIt, theOneThatJoinedIt
    var testDescription: String { rawValue }
  }

  /// Two callers share one exchange in flight; cancelling one (by its tag) ends that one only:
  /// the other gets the whole answer, and one request reached the server.
  @Test(arguments: Leaver.allCases, Chain.allCases)
  func cancellingOneCallerOfASharedExchangeLeavesTheOthersAnswer(
    _ leaver: Leaver, chain: Chain
  ) async throws {
    let stub = StubTransport()
    let gate = AsyncGate()
    await stub.on(
      .get, "/v1/dogs",
      .handler { _, _ in
        await gate.wait()
        return .status(200, body: Data("rex".utf8))
      })
    let client = Self.client(stub, chain: chain) { $0.sharesInFlightRequests = true }
    let sharing = try #require(client.sharing)
    let first = Task {
      try await client.send(Endpoint<Data>(path: "dogs", decoding: .data).tagged("first"))
    }
    _ = try await stub.nextRequest()
    let second = Task {
      try await client.send(Endpoint<Data>(path: "dogs", decoding: .data).tagged("second"))
    }
    defer {
      first.cancel()
      second.cancel()
    }
    #expect(await eventually { sharing.waitingCount == 2 })
    let (cancelled, kept) = leaver == .theOneThatStartedIt ? (first, second) : (second, first)
    #expect(client.cancelAll(tagged: leaver == .theOneThatStartedIt ? "first" : "second") == 1)
    let error = await #expect(throws: APIError.self) { try await cancelled.cancellableValue }
    #expect(error?.kind == .cancelled)
    await gate.open()
    #expect(try await kept.cancellableValue == Data("rex".utf8))
    #expect(await stub.requests.count == 1)
    #expect(client.inFlight.isEmpty)
  }

  /// Two clients share one authentication middleware (one token, one refresh): one client's
  /// `cancelAll()` ends its own call waiting for the refresh, and the other client's call, waiting
  /// for the same refresh, gets the new token and its answer.
  @Test func oneClientsCancelAllLeavesAnotherClientsWaitForTheSharedRefresh() async throws {
    let stub = StubTransport { request in
      request.headers["Authorization"] == "Bearer new" ? .status(200) : .status(401)
    }
    let provider = GatedTokens(current: "old")
    let auth = BearerAuthenticationMiddleware(provider: provider)
    let one = Self.client(stub, chain: .errandsOwn, middleware: [auth])
    let other = Self.client(stub, chain: .errandsOwn, middleware: [auth])
    let endpoint = Endpoint<Data>(path: "me", requiresAuthentication: true, decoding: .data)
    let a = Task { _ = try await one.send(endpoint) }
    let b = Task { _ = try await other.send(endpoint) }
    defer {
      a.cancel()
      b.cancel()
    }
    // Both were refused with the old token: both wait for the one refresh.
    #expect(await eventually { provider.refreshing })
    _ = try await stub.nextRequest()
    _ = try await stub.nextRequest()
    #expect(one.cancelAll() == 1)
    await expectCancelled(a)
    #expect(other.inFlight.count == 1)
    await provider.gate.open()
    try await b.cancellableValue
    let sent = await stub.requests.map { $0.headers["Authorization"] }
    #expect(sent.filter { $0 == "Bearer new" }.count == 1, "\(sent)")
    #expect(other.inFlight.isEmpty)
  }
}
