import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

/// Attacks on waiting for the network: make a wait outlast its deadline, make a cancelled call
/// still send, flap the network under waiting calls, give the client a source that never speaks
/// or one that speaks from inside its own report, and drop a client that a source still reports
/// to. Each attempt is kept as a test.
@Suite(.timeLimit(.minutes(3))) struct ConnectivityHostileTests {
  /// Spends the call's whole deadline before passing it on.
  struct SpendsTheDeadline: Middleware {
    let clock: TestClock

    func intercept(
      _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
      await clock.advance(by: .seconds(2))
      return try await next(request)
    }
  }

  /// A state set while another thread is still telling the clients an earlier change (here held
  /// inside an observer) is the one a client judges by at once: a stub that takes the network
  /// down and then fails a connection must see its failure judged as offline. Found by a
  /// reconnecting stream that counted an attempt under load.
  @Test func aStateSetWhileAnEarlierOneIsBeingToldCountsAtOnce() async throws {
    let network = ManualConnectivity(.online)
    let stub = StubTransport()
    await stub.on(.any, .json(["ok"]))
    var configuration = APIClient.Configuration(timeout: nil)
    configuration.connectivity = ConnectivityPolicy(source: network)
    let client = APIClient(baseURL: base, transport: stub, configuration: configuration)
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let observation = network.observe { state in
      guard state == .unknown else { return }
      entered.signal()
      release.wait()
    }
    defer { observation.cancel() }
    // The teller: tells `.unknown`, and is held in the observer above while telling it.
    Thread { network.state = .unknown }.start()
    await withCheckedContinuation { continuation in
      DispatchQueue.global().async {
        entered.wait()
        continuation.resume()
      }
    }
    // Queued behind the held teller: no client has been told it yet.
    network.state = .offline
    #expect(client.connectivityGate?.isOffline == true)
    let call = Task { try await client.send(Endpoint<[String]>(path: "dogs")) }
    #expect(await eventually { client.connectivityGate?.waiting == 1 }, "the call did not wait")
    release.signal()
    network.state = .online
    #expect(try await call.value == ["ok"])
  }

  /// A deadline that has passed when the wait would start (a middleware spent it): the call
  /// fails at once, unsent, without registering a wait.
  @Test func aCallWithNoTimeLeftFailsAtOnce() async throws {
    let clock = TestClock()
    let stub = StubTransport()
    var configuration = APIClient.Configuration(
      timeout: .seconds(1), middleware: [SpendsTheDeadline(clock: clock)], clock: clock)
    configuration.connectivity = ConnectivityPolicy(source: ManualConnectivity(.offline))
    let client = APIClient(baseURL: base, transport: stub, configuration: configuration)
    let error = try await #require(throws: APIError.self) {
      try await client.send(Endpoint<[String]>(path: "dogs"))
    }
    #expect(error.kind == .timedOut)
    #expect(error.context?.connectivityWait == .zero)
    #expect(await stub.requests.isEmpty)
    #expect(client.connectivityGate?.waiting == 0)
  }

  /// The wait before sending an attempt again is bounded by the call's deadline too, and the
  /// error counts that wait.
  @Test func theWaitToSendAgainEndsAtTheDeadline() async throws {
    let offline = await OfflineClient(.online) { _, _, network in
      network.state = .offline
      return .notConnected
    }
    let call = offline.call(timeout: .seconds(5))
    try #require(await offline.clock.waitForSleeper(dueIn: .seconds(5)))
    #expect(await eventually { offline.waiting == 1 })
    await offline.clock.advance(by: .seconds(5))
    let error = try await #require(throws: APIError.self) { try await call.cancellableValue }
    #expect(error.kind == .timedOut)
    #expect(error.context?.connectivityWait == .seconds(5))
    #expect(error.errorDescription?.contains("timed out waiting for the network") == true)
    #expect(await offline.sent == ["dogs"])
    #expect(offline.waiting == 0)
  }

  /// Many waiting calls time out together: none is sent, and none stays registered.
  @Test func waitsThatTimeOutLeaveNothingBehind() async throws {
    let offline = await OfflineClient()
    let calls = (0..<50).map { offline.call("dogs/\($0)", timeout: .seconds(1)) }
    #expect(await eventually { offline.waiting == 50 })
    try #require(await offline.clock.waitForSleepers(50))
    await offline.clock.advance(by: .seconds(1))
    for call in calls {
      let error = try await #require(throws: APIError.self) { try await call.cancellableValue }
      #expect(error.kind == .timedOut)
    }
    #expect(offline.waiting == 0)
    #expect(await offline.sent == [])
  }

  /// Cancelled, then the network comes back at once: no cancelled call is sent. A task cancelled
  /// before it starts waiting is not sent either.
  @Test func callsCancelledAsTheNetworkReturnsAreNeverSent() async throws {
    let offline = await OfflineClient()
    let calls = (0..<50).map { offline.call("dogs/\($0)") }
    #expect(await eventually { offline.waiting == 50 })
    for call in calls { call.cancel() }
    offline.network.state = .online
    for call in calls {
      let error = try await #require(throws: APIError.self) { try await call.cancellableValue }
      #expect(error.kind == .cancelled)
    }
    offline.network.state = .offline
    let client = offline.client
    let early = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return try await client.send(Endpoint<[String]>(path: "early"))
    }
    let error = try await #require(throws: APIError.self) { try await early.cancellableValue }
    #expect(error.kind == .cancelled)
    #expect(await offline.sent == [])
    #expect(offline.waiting == 0)
  }

  /// The network flaps a thousand times, from another thread, under twenty waiting calls: each
  /// is sent exactly once, once it is back, and nothing stays registered.
  @Test func flappingNetworkSendsEachCallOnce() async throws {
    let offline = await OfflineClient()
    let calls = (0..<20).map { offline.call("dogs/\($0)") }
    #expect(await eventually { offline.waiting == 20 })
    let network = offline.network
    await onThread {
      for index in 0..<1000 { network.state = index.isMultiple(of: 2) ? .online : .offline }
    }
    network.state = .online
    for call in calls { #expect(try await call.cancellableValue == ["ok"]) }
    #expect(await offline.sent.sorted() == (0..<20).map(String.init).sorted())
    #expect(offline.waiting == 0)
  }

  /// A source that never reports leaves the client as if it knew nothing: calls go at once, and
  /// a failure to connect is not held.
  @Test func aSourceThatNeverReportsHoldsNothing() async throws {
    struct Silent: ConnectivitySource {
      func observe(_ update: @escaping @Sendable (Connectivity) -> Void)
        -> ConnectivityObservation
      {
        ConnectivityObservation {}
      }
    }
    let stub = StubTransport()
    await stub.on(.any, .sequence([.json(["ok"]), .notConnected]))
    var configuration = APIClient.Configuration(timeout: nil)
    configuration.connectivity = ConnectivityPolicy(source: Silent())
    let client = APIClient(baseURL: base, transport: stub, configuration: configuration)
    #expect(try await client.send(Endpoint<[String]>(path: "dogs")) == ["ok"])
    let error = try await #require(throws: APIError.self) {
      try await client.send(Endpoint<[String]>(path: "dogs"))
    }
    #expect(error.urlError?.code == .notConnectedToInternet)
    #expect(await stub.requests.count == 2)
  }

  /// An observer that sets the state from inside its report neither deadlocks nor reorders:
  /// every observer hears each change once, in the order it was made.
  @Test func anObserverThatSetsTheStateInsideItsReport() {
    let source = ManualConnectivity()
    let first = InferredConnectivityTests.Heard()
    let second = InferredConnectivityTests.Heard()
    let bouncing = source.observe { [source] state in
      first.record(state)
      if state == .offline { source.state = .online }
    }
    let watching = source.observe(second.record)
    source.state = .offline
    #expect(first.all == [.unknown, .offline, .online])
    #expect(second.all == [.unknown, .offline, .online])
    #expect(source.state == .online)
    bouncing.cancel()
    watching.cancel()
    #expect(source.observerCount == 0)
  }

  /// Eight threads set the state at once: an observer hears changes only (never the same state
  /// twice in a row), and last the state the source ends in.
  @Test func concurrentChangesAreToldInOrder() async {
    let source = ManualConnectivity()
    let heard = InferredConnectivityTests.Heard()
    let observation = source.observe(heard.record)
    await withTaskGroup(of: Void.self) { group in
      for thread in 0..<8 {
        group.addTask {
          await onThread {
            for index in 0..<500 {
              source.state = Connectivity.allCases[(index + thread) % Connectivity.allCases.count]
            }
          }
        }
      }
    }
    let all = heard.all
    #expect(all.last == source.state)
    #expect(zip(all, all.dropFirst()).allSatisfy { $0 != $1 })
    observation.cancel()
  }

  /// A client that goes away stops observing its source: a long-lived source does not keep
  /// every client it ever served.
  @Test func aClientThatGoesAwayStopsObservingItsSource() async throws {
    let network = ManualConnectivity(.online)
    do {
      var configuration = APIClient.Configuration(timeout: nil)
      configuration.connectivity = ConnectivityPolicy(source: network)
      let client = APIClient(
        baseURL: base, transport: StubTransport { _ in .json(["ok"]) },
        configuration: configuration)
      #expect(try await client.send(Endpoint<[String]>(path: "dogs")) == ["ok"])
      #expect(network.observerCount == 1)
    }
    #expect(await eventually { network.observerCount == 0 })
  }
}
