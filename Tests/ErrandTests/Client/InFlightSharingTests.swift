import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

/// Identical `GET`s in flight at once share one exchange when the client says so: one request
/// reaches the server, every caller gets the answer; different credentials, an endpoint that
/// opts out, a `POST` or a stream do not share; one caller leaving does not end it for the
/// others, and the last one to leave cancels it.
@Suite(.timeLimit(.minutes(3))) struct InFlightSharingTests {
  static let base = url("https://api.example.com/v1/")

  /// A stub whose `/v1/dogs` answers once the test opens the gate, and counts its exchanges.
  static func stub(_ gate: AsyncGate) async -> StubTransport {
    let stub = StubTransport()
    let answer = StubResponse.handler { _, _ in
      await gate.wait()
      return .json(["Rex"])
    }
    await stub.on(.get, "/v1/dogs", answer)
    await stub.on(.post, "/v1/dogs", answer)
    return stub
  }

  static func client(_ stub: StubTransport, shares: Bool = true, clock: TestClock? = nil)
    -> APIClient
  {
    var configuration = APIClient.Configuration(timeout: nil)
    if let clock { configuration.clock = clock }
    configuration.sharesInFlightRequests = shares
    return APIClient(baseURL: base, transport: stub, configuration: configuration)
  }

  static func dogs(
    _ client: APIClient, token: String = "a", timeout: Duration? = nil,
    change: (inout Endpoint<[String]>) -> Void = { _ in }
  ) -> Task<[String], any Error> {
    var endpoint = Endpoint<[String]>(path: "dogs", headers: ["Authorization": "Bearer \(token)"])
    endpoint.timeout = timeout
    change(&endpoint)
    return Task { [endpoint] in try await client.send(endpoint) }
  }

  @Test func tenIdenticalCallsSendOneRequest() async throws {
    let gate = AsyncGate()
    let stub = await Self.stub(gate)
    let client = Self.client(stub)
    let calls = (0..<10).map { _ in Self.dogs(client) }
    // Every call waits for the one exchange before the gate opens: counted in flight is not
    // enough (a call listed but not yet joined would send a second request once the first ends;
    // it did, once, under the sanitizer).
    #expect(await eventually { client.sharing?.waitingCount == 10 })
    await gate.open()
    for call in calls { #expect(try await call.value == ["Rex"]) }
    #expect(await stub.requests.count == 1)
  }

  /// What keeps calls apart: credentials, the endpoint's opt-out, the client's default, a
  /// `POST`.
  enum Apart: String, CaseIterable, CustomTestStringConvertible {
    case otherCredentials, endpointOptsOut, clientDoesNotShare, post
    var testDescription: String { rawValue }
  }

  @Test(arguments: Apart.allCases)
  func callsThatDifferSendARequestEach(_ apart: Apart) async throws {
    let gate = AsyncGate()
    let stub = await Self.stub(gate)
    let client = Self.client(stub, shares: apart != .clientDoesNotShare)
    let first = Self.dogs(client) { endpoint in
      if apart == .post { endpoint.method = .post }
    }
    let second = Self.dogs(client, token: apart == .otherCredentials ? "b" : "a") { endpoint in
      if apart == .endpointOptsOut { endpoint.sharesInFlight = false }
      if apart == .post { endpoint.method = .post }
    }
    #expect(await eventually { client.inFlight.count == 2 })
    await gate.open()
    #expect(try await first.value == ["Rex"])
    #expect(try await second.value == ["Rex"])
    #expect(await stub.requests.count == 2)
  }

  /// A caller that leaves (cancelled, or past its own deadline) leaves the others their answer,
  /// from the one exchange.
  @Test(arguments: [false, true])
  func oneCallerLeavingDoesNotEndItForTheOthers(byDeadline: Bool) async throws {
    let gate = AsyncGate()
    let clock = TestClock()
    let stub = await Self.stub(gate)
    let client = Self.client(stub, clock: clock)
    let leaving = Self.dogs(client, timeout: byDeadline ? .seconds(5) : nil)
    let staying = Self.dogs(client)
    #expect(await eventually { client.sharing?.waitingCount == 2 })
    _ = try await stub.nextRequest()
    if byDeadline {
      try #require(await clock.waitForSleeper(dueIn: .seconds(5)))
      await clock.advance(by: .seconds(5))
    } else {
      leaving.cancel()
    }
    let error = await #expect(throws: APIError.self) { try await leaving.value }
    #expect(error?.kind == (byDeadline ? .timedOut : .cancelled))
    await gate.open()
    #expect(try await staying.value == ["Rex"])
    #expect(await stub.requests.count == 1)
  }

  /// When every caller has left, the exchange is cancelled, and the next call sends anew.
  @Test func theLastCallerLeavingCancelsTheExchange() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs", .sequence([.hang, .json(["Rex"])]))
    let client = Self.client(stub)
    let calls = (0..<3).map { _ in Self.dogs(client) }
    #expect(await eventually { client.sharing?.waitingCount == 3 })
    _ = try await stub.nextRequest()
    for call in calls { call.cancel() }
    for call in calls {
      let error = await #expect(throws: APIError.self) { try await call.value }
      #expect(error?.kind == .cancelled)
    }
    #expect(await eventually { client.sharing?.sharedCount == 0 })
    #expect(try await Self.dogs(client).value == ["Rex"])
    #expect(await stub.requests.count == 2)
  }

  /// A call made after the shared exchange ended sends its own request: nothing is kept.
  @Test func aLaterCallSendsAgain() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs", .sequence([.json(["Rex"]), .json(["Fido"])]))
    let client = Self.client(stub)
    #expect(try await Self.dogs(client).value == ["Rex"])
    #expect(try await Self.dogs(client).value == ["Fido"])
  }

  /// Streamed calls never share.
  @Test func streamedCallsDoNotShare() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/feed", .chunks([Data("a".utf8)]))
    let client = Self.client(stub)
    let endpoint = Endpoint<Data>(path: "feed", decoding: .data)
    async let first = client.stream(endpoint).collect()
    async let second = client.stream(endpoint).collect()
    #expect(try await [first, second] == [Data("a".utf8), Data("a".utf8)])
    #expect(await stub.requests.count == 2)
  }
}
