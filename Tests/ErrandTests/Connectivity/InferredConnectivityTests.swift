import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

/// `InferredConnectivity`'s rule, edge by edge, on a `TestClock`: offline after a burst of
/// failures to connect (or one that says the device has no connection), back to trying after
/// its probe interval, online at the first answer.
@Suite(.timeLimit(.minutes(3))) struct InferredConnectivityTests {
  /// The states a source tells, in order.
  final class Heard: Sendable {
    private let states = Locked<[Connectivity]>([])
    var record: @Sendable (Connectivity) -> Void {
      { [states] state in states.withLock { $0.append(state) } }
    }
    var all: [Connectivity] { states.withLock { $0 } }
  }

  /// A burst: outcomes at times (milliseconds from the start) and the state after them, with 3
  /// failures in 10 s taking it offline and a probe interval long enough not to come.
  enum Burst: String, CaseIterable {
    case twoRefusalsAreAServerDown
    case threeRefusalsWithinTheWindowAreANetworkDown
    case threeRefusalsJustWithinTheWindow
    case threeRefusalsSpreadOverExactlyTheWindow
    case anAnswerBetweenFailuresStartsTheCountAgain
    case oneNotConnectedIsEnough
    case oneDataNotAllowedIsEnough
    case mixedFailuresToConnectCount
    case timeoutsAndLostConnectionsDoNotCount
    case anAnswerAfterABurstBringsItBack

    static let refused = ConnectionOutcome.couldNotConnect(.cannotConnectToHost)

    var steps: [(at: Int, outcome: ConnectionOutcome)] {
      switch self {
      case .twoRefusalsAreAServerDown: [(0, Self.refused), (100, Self.refused)]
      case .threeRefusalsWithinTheWindowAreANetworkDown:
        [(0, Self.refused), (100, Self.refused), (200, Self.refused)]
      case .threeRefusalsJustWithinTheWindow:
        [(0, Self.refused), (5000, Self.refused), (9999, Self.refused)]
      case .threeRefusalsSpreadOverExactlyTheWindow:
        [(0, Self.refused), (5000, Self.refused), (10_000, Self.refused)]
      case .anAnswerBetweenFailuresStartsTheCountAgain:
        [(0, Self.refused), (1, Self.refused), (2, .reachedServer), (3, Self.refused)]
      case .oneNotConnectedIsEnough: [(0, .couldNotConnect(.notConnectedToInternet))]
      case .oneDataNotAllowedIsEnough: [(0, .couldNotConnect(.dataNotAllowed))]
      case .mixedFailuresToConnectCount:
        [
          (0, .couldNotConnect(.cannotFindHost)), (1, Self.refused),
          (2, .couldNotConnect(.dnsLookupFailed)),
        ]
      case .timeoutsAndLostConnectionsDoNotCount:
        [
          (0, .couldNotConnect(.timedOut)), (1, .couldNotConnect(.networkConnectionLost)),
          (2, .couldNotConnect(.timedOut)), (3, Self.refused),
        ]
      case .anAnswerAfterABurstBringsItBack:
        [(0, Self.refused), (1, Self.refused), (2, Self.refused), (3, .reachedServer)]
      }
    }

    var expected: Connectivity {
      switch self {
      case .twoRefusalsAreAServerDown, .threeRefusalsSpreadOverExactlyTheWindow,
        .timeoutsAndLostConnectionsDoNotCount:
        .unknown
      case .anAnswerBetweenFailuresStartsTheCountAgain, .anAnswerAfterABurstBringsItBack: .online
      case .threeRefusalsWithinTheWindowAreANetworkDown, .threeRefusalsJustWithinTheWindow,
        .oneNotConnectedIsEnough, .oneDataNotAllowedIsEnough, .mixedFailuresToConnectCount:
        .offline
      }
    }
  }

  @Test(arguments: Burst.allCases)
  func theBurstRule(burst: Burst) async throws {
    let clock = TestClock()
    let source = InferredConnectivity(
      failures: 3, within: .seconds(10), probeInterval: .seconds(3600), clock: clock)
    var now = 0
    for step in burst.steps {
      await clock.advance(by: .milliseconds(step.at - now))
      now = step.at
      source.learn(from: step.outcome)
    }
    #expect(source.current == burst.expected)
  }

  /// Offline, then trying again after the probe interval; one failure while trying is enough to
  /// go offline again, for another interval; an answer brings it online. Observers hear each
  /// change once, in order.
  @Test func itTriesAgainAfterItsProbeIntervalAndOneFailureThenIsEnough() async throws {
    let clock = TestClock()
    let source = InferredConnectivity(probeInterval: .seconds(5), clock: clock)
    let heard = Heard()
    let observation = source.observe(heard.record)
    source.learn(from: .couldNotConnect(.notConnectedToInternet))
    #expect(source.current == .offline)
    try #require(await clock.waitForSleeper(dueIn: .seconds(5)))
    await clock.advance(by: .seconds(4))
    #expect(source.current == .offline)
    await clock.advance(by: .seconds(1))
    #expect(await eventually { source.current == .unknown })
    source.learn(from: .couldNotConnect(.cannotConnectToHost))
    #expect(source.current == .offline)
    try #require(await clock.waitForSleeper(dueIn: .seconds(5)))
    await clock.advance(by: .seconds(5))
    #expect(await eventually { source.current == .unknown })
    source.learn(from: .reachedServer)
    #expect(source.current == .online)
    #expect(heard.all == [.unknown, .offline, .unknown, .offline, .unknown, .online])
    observation.cancel()
  }

  /// An answer while offline (to another client sharing the source) brings it online at once,
  /// and the probe it had planned changes nothing later.
  @Test func anAnswerWhileOfflineCancelsTheProbe() async throws {
    let clock = TestClock()
    let source = InferredConnectivity(probeInterval: .seconds(5), clock: clock)
    source.learn(from: .couldNotConnect(.notConnectedToInternet))
    try #require(await clock.waitForSleeper(dueIn: .seconds(5)))
    source.learn(from: .reachedServer)
    #expect(source.current == .online)
    #expect(await eventually { clock.sleeperCount == 0 })
    await clock.advance(by: .seconds(10))
    #expect(source.current == .online)
  }

  /// A probe of an earlier time offline does not end a later one early.
  @Test func aProbeOfAnEarlierTimeOfflineDoesNotEndALaterOne() async throws {
    let clock = TestClock()
    let source = InferredConnectivity(probeInterval: .seconds(5), clock: clock)
    source.learn(from: .couldNotConnect(.notConnectedToInternet))
    try #require(await clock.waitForSleeper(dueIn: .seconds(5)))
    await clock.advance(by: .seconds(3))
    source.learn(from: .reachedServer)
    source.learn(from: .couldNotConnect(.notConnectedToInternet))
    try #require(await clock.waitForSleeper(dueIn: .seconds(5)))
    await clock.advance(by: .seconds(2))
    #expect(source.current == .offline, "the first probe was due now; the second is not")
    await clock.advance(by: .seconds(3))
    #expect(await eventually { source.current == .unknown })
  }

  /// Its limits are held to sense: at least one failure, a probe interval of at least a
  /// millisecond, no negative window.
  @Test func itsSettingsAreHeldToSense() {
    let source = InferredConnectivity(failures: 0, within: .seconds(-1), probeInterval: .zero)
    #expect(source.failures == 1)
    #expect(source.window == .zero)
    #expect(source.probeInterval == .milliseconds(1))
  }
}
