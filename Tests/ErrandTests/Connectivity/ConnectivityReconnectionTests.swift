import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

/// A reconnecting event stream under a `ConnectivityPolicy`: while the source says offline it
/// counts no failed attempt and starts no backoff, and it reconnects as soon as the network is
/// back, without a wait. On a `TestClock` with a `ManualConnectivity`.
@Suite(.timeLimit(.minutes(3))) struct ConnectivityReconnectionTests {
  static let feed = Endpoint<Data>(path: "feed", decoding: .data)

  /// The states a stream tells, by case name.
  final class States: Sendable {
    private let told = Locked<[String]>([])

    var record: @Sendable (ConnectionState) -> Void {
      { [told] state in
        told.withLock { $0.append("\(state)".prefix { $0 != "(" }.description) }
      }
    }

    var names: [String] { told.withLock { $0 } }
  }

  /// An event stream that sends `data` and stays open.
  static func open(_ data: String) -> StubResponse {
    .stalledAfterHeaders(
      body: Data("data: \(data)\n\n".utf8), headers: ["Content-Type": "text/event-stream"])
  }

  /// The network goes away as the first connection ends, and again as the second fails to
  /// connect: with a policy that gives up at the first failed reconnection, the stream still
  /// reconnects once the network is back, at once, having counted nothing and waited for no
  /// backoff. Whether the failed connection is sent again by the client (`retriesWhenOnline`)
  /// or reconnected by the stream.
  @Test(arguments: [true, false])
  func anEventStreamCountsNoAttemptWhileOffline(retriesWhenOnline: Bool) async throws {
    let offline = await OfflineClient(.online, retriesWhenOnline: retriesWhenOnline) {
      _, call, network in
      switch call {
      case 1:
        network.state = .offline
        return .events([ServerSentEvent(data: "a")])
      case 2:
        network.state = .offline
        return .notConnected
      default:
        return Self.open("b")
      }
    }
    let states = States()
    let events = offline.client.events(
      Self.feed, reconnect: ReconnectPolicy(maximumAttempts: 0, jitter: false),
      onState: states.record)
    let reading = Task {
      var received: [String] = []
      for try await event in events {
        received.append(event.data)
        if received.count == 2 { break }
      }
      return received
    }
    _ = try await offline.stub.nextRequest()
    #expect(await eventually { offline.waiting == 1 }, "paused after the first connection")
    #expect(offline.clock.sleeperCount == 0, "no backoff while offline")
    offline.network.state = .online
    _ = try await offline.stub.nextRequest()
    #expect(await eventually { offline.waiting == 1 }, "the failed connection waits too")
    #expect(offline.clock.sleeperCount == 0)
    #expect(await offline.stub.requests.count == 2)
    offline.network.state = .online
    #expect(try await reading.cancellableValue == ["a", "b"])
    #expect(await offline.stub.requests.count == 3)
    #expect(states.names == ["connected", "connected"])
  }

  /// Without the policy the same stream gives up at the failed reconnection, after its backoff.
  @Test func withoutThePolicyAnOfflineReconnectionCounts() async throws {
    let offline = await OfflineClient(.online, policy: false) { _, call, _ in
      call == 1 ? .events([ServerSentEvent(data: "a")]) : .notConnected
    }
    let events = offline.client.events(
      Self.feed, reconnect: ReconnectPolicy(maximumAttempts: 0, jitter: false))
    let reading = Task {
      var received: [String] = []
      for try await event in events { received.append(event.data) }
      return received
    }
    try #require(await offline.clock.waitForSleeper(dueIn: .seconds(3)))
    await offline.clock.advance(by: .seconds(3))
    let error = try await #require(throws: APIError.self) { try await reading.cancellableValue }
    #expect(error.underlyingError is ReconnectionError)
    #expect(await offline.stub.requests.count == 2)
  }

  /// Offline when its backoff ends, the stream waits for the network instead of trying, and
  /// connects as soon as it is back.
  @Test func offlineWhenItsBackoffEndsTheStreamWaitsForTheNetwork() async throws {
    let offline = await OfflineClient(.online) { _, call, _ in
      call == 1 ? .events([ServerSentEvent(data: "a")]) : Self.open("b")
    }
    let events = offline.client.events(Self.feed, reconnect: ReconnectPolicy(jitter: false))
    let reading = Task {
      var received: [String] = []
      for try await event in events {
        received.append(event.data)
        if received.count == 2 { break }
      }
      return received
    }
    try #require(await offline.clock.waitForSleeper(dueIn: .seconds(3)))
    offline.network.state = .offline
    await offline.clock.advance(by: .seconds(3))
    #expect(await eventually { offline.waiting == 1 })
    #expect(await offline.stub.requests.count == 1)
    offline.network.state = .online
    #expect(try await reading.cancellableValue == ["a", "b"])
    #expect(await offline.stub.requests.count == 2)
  }

  enum Ending: String, CaseIterable {
    case restart
    case cancelAll
  }

  /// A stream waiting for the network is still the app's to end: `cancelAll()` ends it with
  /// `.cancelled`, sending nothing; `restart()` leaves it waiting (a request made offline would
  /// wait all the same), and it reconnects once the network is back.
  @Test(arguments: Ending.allCases)
  func aStreamWaitingForTheNetworkStillAnswersTheApp(ending: Ending) async throws {
    let offline = await OfflineClient(.online) { _, call, network in
      if call == 1 {
        network.state = .offline
        return .events([ServerSentEvent(data: "a")])
      }
      return Self.open("b")
    }
    let events = offline.client.events(Self.feed, reconnect: .default)
    let reading = Task {
      var received: [String] = []
      for try await event in events {
        received.append(event.data)
        if received.count == 2 { break }
      }
      return received
    }
    #expect(await eventually { offline.waiting == 1 })
    switch ending {
    case .restart:
      events.restart()
      #expect(await eventually { offline.waiting == 1 })
      #expect(await offline.stub.requests.count == 1)
      offline.network.state = .online
      #expect(try await reading.cancellableValue == ["a", "b"])
      #expect(await offline.stub.requests.count == 2)
    case .cancelAll:
      #expect(offline.client.cancelAll() == 1)
      let error = try await #require(throws: APIError.self) { try await reading.cancellableValue }
      #expect(error.kind == .cancelled)
      offline.network.state = .online
      #expect(await offline.stub.requests.count == 1)
    }
    #expect(offline.waiting == 0)
  }
}
