import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

/// `ConnectivityPolicy`: a call made while the source says offline waits, within its deadline on
/// the client's clock, and goes when the network comes back; a cancelled one is never sent; an
/// attempt that could not connect is sent once more when the network comes back. All on a
/// `TestClock` with a `ManualConnectivity`.
@Suite(.timeLimit(.minutes(3))) struct ConnectivityWaitTests {
  /// A call made offline is not sent until the source says the network is back (or only trying:
  /// ``Connectivity/unknown`` lets calls go too), then completes.
  @Test(arguments: [Connectivity.online, .unknown])
  func aCallMadeOfflineIsSentWhenTheNetworkComesBack(back: Connectivity) async throws {
    let offline = await OfflineClient()
    let call = offline.call()
    #expect(await eventually { offline.waiting == 1 })
    #expect(await offline.sent == [], "not sent while offline")
    offline.network.state = back
    #expect(try await call.cancellableValue == ["ok"])
    #expect(await offline.sent == ["dogs"])
    #expect(offline.waiting == 0)
  }

  /// A call made online goes at once, and learns nothing is wrong.
  @Test(arguments: [Connectivity.online, .unknown])
  func aCallMadeOnlineGoesAtOnce(state: Connectivity) async throws {
    let online = await OfflineClient(state)
    #expect(try await online.call().cancellableValue == ["ok"])
    #expect(await online.sent == ["dogs"])
  }

  /// The deadline counts while a call waits: when it passes first, the call fails with a timeout
  /// that says it waited for the network, and was never sent. Buffered and streamed calls alike.
  @Test(arguments: [false, true])
  func aCallWhoseDeadlinePassesOfflineFailsUnsent(streamed: Bool) async throws {
    let offline = await OfflineClient()
    let endpoint = Endpoint<Data>(path: "dogs", timeout: .seconds(5), decoding: .data)
    let client = offline.client
    let call = Task {
      if streamed {
        _ = try await client.stream(endpoint)
      } else {
        _ = try await client.send(endpoint)
      }
    }
    try #require(await offline.clock.waitForSleeper(dueIn: .seconds(5)))
    #expect(await eventually { offline.waiting == 1 })
    await offline.clock.advance(by: .seconds(5))
    let error = try await #require(throws: APIError.self) { try await call.cancellableValue }
    #expect(error.kind == .timedOut)
    #expect(error.context?.connectivityWait == .seconds(5))
    #expect(error.context?.request?.url == url("https://api.example.com/v1/dogs"))
    #expect(
      error.errorDescription
        == "The request GET https://api.example.com/v1/dogs timed out waiting for the network "
        + "(still down at the call's deadline, after 5 s of waiting).")
    #expect(await offline.sent == [])
    #expect(offline.waiting == 0)
  }

  /// A waiting call that is cancelled, by its task or by `cancelAll`, is never sent, even once
  /// the network is back; the next call is.
  @Test(arguments: [false, true])
  func aCancelledWaitingCallIsNeverSent(byCancelAll: Bool) async throws {
    let offline = await OfflineClient()
    let cancelled = offline.call("cancelled", tags: ["screen"])
    #expect(await eventually { offline.waiting == 1 })
    if byCancelAll {
      #expect(offline.client.cancelAll(tagged: "screen") == 1)
    } else {
      cancelled.cancel()
    }
    let error = try await #require(throws: APIError.self) { try await cancelled.cancellableValue }
    #expect(error.kind == .cancelled)
    #expect(offline.waiting == 0)
    offline.network.state = .online
    #expect(try await offline.call("next").cancellableValue == ["ok"])
    #expect(await offline.sent == ["next"])
  }

  /// `cancelAll()` ends every call waiting for the network.
  @Test func cancelAllEndsEveryWaitingCall() async throws {
    let offline = await OfflineClient()
    let calls = (0..<10).map { offline.call("dogs/\($0)") }
    #expect(await eventually { offline.waiting == 10 })
    #expect(offline.client.cancelAll() == 10)
    for call in calls {
      let error = try await #require(throws: APIError.self) { try await call.cancellableValue }
      #expect(error.kind == .cancelled)
    }
    #expect(offline.waiting == 0)
    offline.network.state = .online
    #expect(await offline.sent == [])
  }

  enum Setting: String, CaseIterable {
    /// The policy, sending again.
    case retries
    /// The policy, with `retriesWhenOnline: false`.
    case waitsOnly
    /// No policy.
    case off
  }

  /// An attempt that could not connect, after which the source says offline (as a path monitor
  /// notices), waits and is sent once more when the network comes back; not without the policy,
  /// nor with `retriesWhenOnline` off. A `POST` too: nothing of it reached a server.
  @Test(arguments: Setting.allCases, [HTTPMethod.get, .post])
  func aFailureToConnectIsSentAgainWhenTheNetworkComesBack(
    setting: Setting, method: HTTPMethod
  ) async throws {
    let offline = await OfflineClient(
      .online, policy: setting != .off, retriesWhenOnline: setting == .retries
    ) { _, call, network in
      guard call == 1 else { return .json(["ok"]) }
      network.state = .offline
      return .notConnected
    }
    let call = offline.call(method: method)
    guard setting == .retries else {
      let error = try await #require(throws: APIError.self) { try await call.cancellableValue }
      #expect(error.urlError?.code == .notConnectedToInternet)
      #expect(await offline.sent == ["dogs"])
      return
    }
    #expect(await eventually { offline.waiting == 1 })
    #expect(await offline.sent == ["dogs"])
    offline.network.state = .online
    #expect(try await call.cancellableValue == ["ok"])
    #expect(await offline.sent == ["dogs", "dogs"])
  }

  /// Only failures that prove nothing reached a server are sent again; a connection lost midway
  /// or a timeout is not (it is `RetryMiddleware`'s to retry), even while offline.
  @Test(arguments: [
    (URLError.Code.notConnectedToInternet, true), (.cannotConnectToHost, true),
    (.cannotFindHost, true), (.dnsLookupFailed, true), (.dataNotAllowed, true),
    (.networkConnectionLost, false), (.timedOut, false), (.secureConnectionFailed, false),
  ])
  func onlyAttemptsThatNeverReachedAServerAreSentAgain(code: URLError.Code, resent: Bool)
    async throws
  {
    let offline = await OfflineClient(.online) { _, call, network in
      guard call == 1 else { return .json(["ok"]) }
      network.state = .offline
      return .error(URLError(code))
    }
    let call = offline.call()
    if resent {
      #expect(await eventually { offline.waiting == 1 })
      offline.network.state = .online
      #expect(try await call.cancellableValue == ["ok"])
      #expect(await offline.sent == ["dogs", "dogs"])
    } else {
      let error = try await #require(throws: APIError.self) { try await call.cancellableValue }
      #expect(error.kind == (code == .timedOut ? .timedOut : .transport))
      #expect(await offline.sent == ["dogs"])
    }
  }

  /// A failure to connect while the source still says online (a server that is down) fails at
  /// once, as without the policy: nothing waits for a network that is up.
  @Test func aFailureToConnectWhileOnlineFailsAtOnce() async throws {
    let offline = await OfflineClient(.online) { _, _, _ in .connectionRefused }
    let error = try await #require(throws: APIError.self) {
      try await offline.call().cancellableValue
    }
    #expect(error.urlError?.code == .cannotConnectToHost)
    #expect(await offline.sent == ["dogs"])
  }

  /// An attempt is sent once more at most: one that cannot connect again fails with its error.
  @Test func aCallIsSentAgainOnceAtMost() async throws {
    let offline = await OfflineClient(.online) { _, _, network in
      network.state = .offline
      return .notConnected
    }
    let call = offline.call()
    #expect(await eventually { offline.waiting == 1 })
    offline.network.state = .online
    let error = try await #require(throws: APIError.self) { try await call.cancellableValue }
    #expect(error.urlError?.code == .notConnectedToInternet)
    #expect(await offline.sent == ["dogs", "dogs"])
  }

  /// Each attempt of `RetryMiddleware` waits for the network too: a retry due while offline is
  /// not sent until the network is back.
  @Test func aRetryDueWhileOfflineWaitsForTheNetwork() async throws {
    let retry = RetryMiddleware(policy: RetryPolicy(maxAttempts: 2, jitter: .none))
    let offline = await OfflineClient(.online, middleware: [retry]) { _, call, network in
      guard call == 1 else { return .json(["ok"]) }
      network.state = .offline
      return .status(503)
    }
    let call = offline.call()
    try #require(await offline.clock.waitForSleeper(dueIn: .milliseconds(500)))
    await offline.clock.advance(by: .milliseconds(500))
    #expect(await eventually { offline.waiting == 1 })
    #expect(await offline.sent == ["dogs"])
    offline.network.state = .online
    #expect(try await call.cancellableValue == ["ok"])
    #expect(await offline.sent == ["dogs", "dogs"])
  }

  /// The wait comes just before the transport: an answer a cache holds is given offline at
  /// once, without waiting or sending.
  @Test func aCachedAnswerIsGivenOfflineWithoutWaiting() async throws {
    let offline = await OfflineClient(
      .online, middleware: [CachingMiddleware(cache: HTTPCache())]
    ) { _, _, _ in
      .status(
        200, body: Data(#"["ok"]"#.utf8),
        headers: ["Content-Type": "application/json", "Cache-Control": "max-age=60"])
    }
    #expect(try await offline.call().cancellableValue == ["ok"])
    offline.network.state = .offline
    #expect(try await offline.call().cancellableValue == ["ok"])
    #expect(await offline.sent == ["dogs"])
    #expect(offline.waiting == 0)
  }

  /// README's lines for waiting for the network ("Controlling calls"), run as written over a
  /// stub.
  @Test func theReadmeExampleWaitsThenGoes() async throws {
    var configuration = APIClient.Configuration()
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs", .json([Dog(name: "Rex")]))
    let network = ManualConnectivity(.offline)
    // ConnectivityPolicy() for the platform's source
    configuration.connectivity = ConnectivityPolicy(source: network)
    let client = APIClient(baseURL: base, transport: stub, configuration: configuration)
    let dogs = Task { try await client.send(Endpoint<[Dog]>(path: "dogs")) }  // waits, unsent
    #expect(await eventually { client.connectivityGate?.waiting == 1 })
    #expect(await stub.requests.isEmpty)
    network.state = .online  // … and goes
    #expect(try await dogs.cancellableValue == [Dog(name: "Rex")])
  }

  /// With `InferredConnectivity`, the default off Apple platforms: the device's "not connected"
  /// takes it offline, the call waits, the probe lets it go, and the server's answer brings the
  /// source back online.
  @Test func theInferredSourceHoldsACallUntilItsProbeGetsAnAnswer() async throws {
    let clock = TestClock()
    let inferred = InferredConnectivity(probeInterval: .seconds(5), clock: clock)
    let stub = StubTransport()
    await stub.on(.any, .sequence([.notConnected, .json(["ok"])]))
    var configuration = APIClient.Configuration(timeout: nil, clock: clock)
    configuration.connectivity = ConnectivityPolicy(source: inferred)
    let client = APIClient(baseURL: base, transport: stub, configuration: configuration)
    let call = Task { try await client.send(Endpoint<[String]>(path: "dogs")) }
    try #require(await clock.waitForSleeper(dueIn: .seconds(5)))
    #expect(await eventually { client.connectivityGate?.waiting == 1 })
    #expect(inferred.current == .offline)
    #expect(await stub.requests.count == 1)
    await clock.advance(by: .seconds(5))
    #expect(try await call.cancellableValue == ["ok"])
    #expect(await stub.requests.count == 2)
    #expect(inferred.current == .online)
  }
}
