import Foundation

/// A ``ConnectivitySource`` that judges the network by the client's own calls: offline once they
/// cannot connect, online again once a server answers. The default source off Apple platforms,
/// where no system service tells an app that its network went away.
///
/// The rule:
/// - **Offline** when the device says it has no connection (`notConnectedToInternet`,
///   `dataNotAllowed`, `internationalRoamingOff`: one is enough), or when ``failures`` attempts in
///   a row fail to connect (`cannotConnectToHost`, `cannotFindHost`, `dnsLookupFailed`) within
///   ``window``, with no answer between them. One refused connection is a server that is down;
///   three in ten seconds, by default, are a network that is.
/// - **Trying again** (``Connectivity/unknown``) ``probeInterval`` after it went offline: the
///   waiting calls go, and tell. A call that cannot connect then takes it offline again at once,
///   for another ``probeInterval``; such a call waits again without using up its retry
///   (``ConnectivityPolicy/retriesWhenOnline``).
/// - **Online** as soon as any attempt gets an answer from a server, whatever its status.
///
/// It starts ``Connectivity/unknown``, which lets calls go. Any other failure (a timeout, a
/// connection lost midway, a TLS failure: none of ``ConnectionOutcome/noConnectionCodes``)
/// changes nothing. All of it runs on its clock, so a
/// `TestClock` drives it in tests. One source can serve many clients: each tells it what became
/// of its calls, and an answer to any of them brings all of them back.
///
/// ```swift
/// var configuration = APIClient.Configuration()
/// configuration.connectivity = ConnectivityPolicy(
///   source: InferredConnectivity(failures: 5, within: .seconds(30), probeInterval: .seconds(10)))
/// ```
public final class InferredConnectivity: ConnectivitySource {
  /// How many attempts in a row that fail to connect, within ``window``, mean the network is
  /// down; at least 1.
  public let failures: Int
  /// How close together those failures must come.
  public let window: Duration
  /// How long it stays offline before it lets calls go to find out whether the network is back;
  /// at least a millisecond.
  public let probeInterval: Duration

  private let clock: any Clock<Duration>
  private let epoch: Stopwatch
  private let broadcast = ConnectivityBroadcast(.unknown)

  private struct State {
    /// When the failures since the last answer came, oldest first (within ``window``).
    var recent: [Duration] = []
    var offline = false
    /// Whether it is trying again after ``probeInterval``: one failure then is enough.
    var probing = false
    /// The wait before it tries again, while offline.
    var probe: Task<Void, Never>?
    /// Which time offline this is, so that a wait of an earlier one changes nothing.
    var episode = 0
  }

  private let state = Locked(State())

  /// The failures that mean the device itself has no connection: offline at once.
  static let deviceCodes: Set<URLError.Code> = [
    .notConnectedToInternet, .dataNotAllowed, .internationalRoamingOff,
  ]

  /// A source judged from calls.
  /// - Parameters:
  ///   - failures: How many attempts in a row that fail to connect mean the network is down.
  ///   - window: How close together those failures must come.
  ///   - probeInterval: How long it stays offline before it lets calls try again.
  ///   - clock: The clock its window and waits run on; a client's default source uses the
  ///     client's ``APIClient/Configuration/clock``.
  public init(
    failures: Int = 3, within window: Duration = .seconds(10),
    probeInterval: Duration = .seconds(5), clock: any Clock<Duration> = ContinuousClock()
  ) {
    self.failures = max(1, failures)
    self.window = max(.zero, window)
    self.probeInterval = max(.milliseconds(1), probeInterval)
    self.clock = clock
    epoch = Stopwatch(clock)
  }

  deinit {
    state.withLock { $0.probe }?.cancel()
  }

  /// The state it judges the network to be in now.
  public var current: Connectivity {
    broadcast.current
  }

  /// Report the state to `update`: now, then each change.
  /// - Parameter update: Told each state.
  /// - Returns: What ends the reports.
  public func observe(_ update: @escaping @Sendable (Connectivity) -> Void)
    -> ConnectivityObservation
  {
    broadcast.observe(update)
  }

  /// Learn from an attempt: an answer brings it online; a failure to connect counts towards
  /// taking it offline, as the rule says.
  /// - Parameter outcome: What became of the attempt.
  public func learn(from outcome: ConnectionOutcome) {
    let now = epoch.elapsed
    let (tells, cancelled) = state.withLock { state -> (Bool, Task<Void, Never>?) in
      switch outcome {
      case .reachedServer:
        let probe = state.probe
        state = State(episode: state.episode)
        return (broadcast.queue(.online), probe)
      case .couldNotConnect(let code):
        guard !state.offline, ConnectionOutcome.noConnectionCodes.contains(code) else {
          return (false, nil)
        }
        state.recent = state.recent.filter { now - $0 < window } + [now]
        guard Self.deviceCodes.contains(code) || state.probing || state.recent.count >= failures
        else { return (false, nil) }
        state.offline = true
        state.probing = false
        state.recent = []
        state.episode += 1
        state.probe = probeLater(episode: state.episode)
        return (broadcast.queue(.offline), nil)
      }
    }
    cancelled?.cancel()
    if tells { broadcast.tellUntold() }
  }

  /// A task that, ``probeInterval`` from now, lets calls try again, unless an answer came first.
  private func probeLater(episode: Int) -> Task<Void, Never> {
    let (clock, interval) = (clock, probeInterval)
    return Task { [weak self] in
      try? await clock.sleep(for: interval.sleepable)
      guard !Task.isCancelled, let self else { return }
      let tells = self.state.withLock { state -> Bool in
        guard state.offline, state.episode == episode else { return false }
        state.offline = false
        state.probing = true
        state.probe = nil
        return self.broadcast.queue(.unknown)
      }
      if tells { self.broadcast.tellUntold() }
    }
  }
}
