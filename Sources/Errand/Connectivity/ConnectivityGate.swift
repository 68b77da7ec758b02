import Foundation

/// Holds a client's calls while its ``ConnectivitySource`` says the network is down
/// (``ConnectivityPolicy``), and sends once more an attempt that could not connect when the
/// network comes back.
///
/// The source's reports arrive through ``ConnectivitySource/observe(_:)``, which it holds only
/// weakly: a client that goes away stops observing. One lock guards the state; the waits it
/// ends are resumed after releasing it. Each wait goes through three phases (starting, waiting
/// with its continuation, ended early by its deadline or its cancellation), so that a deadline
/// or a cancellation that comes before the wait has registered still ends it.
final class ConnectivityGate: Sendable {
  let source: any ConnectivitySource
  /// Whether an attempt that could not connect while offline is sent once more (the policy's).
  let retriesWhenOnline: Bool
  private let clock: any Clock<Duration>
  private let state = Locked(State())
  private let observation = Locked<ConnectivityObservation?>(nil)

  private typealias Continuation = CheckedContinuation<Connectivity, any Error>

  private enum Wait {
    case starting
    case waiting(Continuation)
    /// Its deadline passed, or it was cancelled, before it had registered.
    case ended(any Error)
  }

  private struct State {
    /// What the source said last; ``Connectivity/unknown`` until it says anything.
    var current = Connectivity.unknown
    var waits: [UInt64: Wait] = [:]
    var nextID: UInt64 = 0
  }

  init(policy: ConnectivityPolicy, clock: any Clock<Duration>) {
    source = policy.source ?? ConnectivityPolicy.platformSource(clock: clock)
    retriesWhenOnline = policy.retriesWhenOnline
    self.clock = clock
    let observation = source.observe { [weak self] connectivity in
      self?.update(connectivity)
    }
    self.observation.withLock { $0 = observation }
  }

  deinit {
    observation.withLock { $0 }?.cancel()
  }

  /// Whether the source says the network is down.
  var isOffline: Bool {
    state.withLock { now($0) == .offline }
  }

  /// What the source says now: its state as it is, for a source of Errand's own (whose last
  /// change may not have been told yet, another thread telling an earlier one), else what it
  /// told last. Read under the gate's lock, so that a wait queued on `.offline` is released by
  /// the report of any later change, which comes after it.
  private func now(_ state: State) -> Connectivity {
    (source as? any ConnectivityNow)?.connectivityNow ?? state.current
  }

  /// How many calls wait for the network now.
  var waiting: Int {
    state.withLock { state in
      state.waits.values.filter {
        if case .waiting = $0 { return true }
        return false
      }.count
    }
  }

  /// The source said `connectivity`: unless it is offline, every waiting call goes.
  private func update(_ connectivity: Connectivity) {
    let released = state.withLock { state -> [Continuation] in
      state.current = connectivity
      guard connectivity != .offline else { return [] }
      var released: [Continuation] = []
      for (id, wait) in state.waits {
        if case .waiting(let continuation) = wait {
          released.append(continuation)
          state.waits[id] = nil
        }
      }
      return released
    }
    for continuation in released { continuation.resume(returning: connectivity) }
  }

  /// Wait while the source says the network is down, within `deadline`.
  /// - Parameters:
  ///   - deadline: The call's deadline; `nil` to wait as long as it takes.
  ///   - waitedBefore: How long the call waited for the network already (an earlier wait of the
  ///     same call), for the error.
  ///   - cancellation: How the call's client cancels it, when it runs in its caller's task.
  /// - Returns: What the source said when it let the call go; `nil` when it did not wait.
  /// - Throws: ``APIError/timedOut(_:)`` with ``APIError/Context/connectivityWait`` when the
  ///   deadline passes first, or `CancellationError` when the task or the call is cancelled.
  @discardableResult
  func waitWhileOffline(
    by deadline: RequestDeadline?, waitedBefore: Duration = .zero,
    endedBy cancellation: CallCancellation? = nil
  ) async throws -> (released: Connectivity, waited: Duration)? {
    guard isOffline else { return nil }
    let stopwatch = Stopwatch(clock)
    let timedOut: @Sendable () -> APIError = {
      var context = APIError.Context()
      context.connectivityWait = waitedBefore + stopwatch.elapsed
      return .timedOut(context)
    }
    if let remaining = deadline?.remaining, remaining <= .zero { throw timedOut() }
    let id = state.withLock { state in
      defer { state.nextID += 1 }
      state.waits[state.nextID] = .starting
      return state.nextID
    }
    let disarm = deadline?.whenExpired { [self] in end(id, with: timedOut()) }
    let disarmCancel = cancellation?.onCancel { [self] in end(id, with: CancellationError()) }
    defer {
      disarm?()
      disarmCancel?()
      _ = state.withLock { $0.waits.removeValue(forKey: id) }
    }
    let released = try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: Continuation) in
        let now = state.withLock { state -> Result<Connectivity, any Error>? in
          if case .ended(let error) = state.waits[id] { return .failure(error) }
          if Task.isCancelled { return .failure(CancellationError()) }
          let connectivity = self.now(state)
          guard connectivity == .offline else { return .success(connectivity) }
          state.waits[id] = .waiting(continuation)
          return nil
        }
        if let now { continuation.resume(with: now) }
      }
    } onCancel: {
      end(id, with: CancellationError())
    }
    return (released, stopwatch.elapsed)
  }

  /// End wait `id` with `error`, if it has not ended.
  private func end(_ id: UInt64, with error: any Error) {
    let continuation = state.withLock { state -> Continuation? in
      switch state.waits[id] {
      case .starting:
        state.waits[id] = .ended(error)
        return nil
      case .waiting(let continuation):
        state.waits[id] = nil
        return continuation
      case .ended, nil:
        return nil
      }
    }
    continuation?.resume(throwing: error)
  }

  /// Send an attempt (`attempt`) once the network is up, telling the source what became of it;
  /// when it could not connect and the source then says offline, wait for the network and send
  /// it once more (more than once only when it was let go by a source that was only trying,
  /// ``Connectivity/unknown``).
  /// - Parameters:
  ///   - request: The request, for the errors.
  ///   - deadline: The call's deadline.
  ///   - cancellation: How the call's client cancels it, when it runs in its caller's task.
  ///   - attempt: Sends the request once.
  /// - Returns: The response.
  /// - Throws: ``APIError``: the attempt's, or a timeout or a cancellation while waiting.
  func send(
    _ request: HTTPRequest, by deadline: RequestDeadline?,
    endedBy cancellation: CallCancellation? = nil,
    _ attempt: () async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    do {
      var waited =
        try await waitWhileOffline(by: deadline, endedBy: cancellation)?.waited ?? .zero
      var retried = false
      while true {
        // Cancelled as the network came back: not sent.
        try Task.checkCancellation()
        if cancellation?.isCancelled == true { throw CancellationError() }
        do {
          let response = try await attempt()
          source.learn(from: .reachedServer)
          return response
        } catch {
          guard let outcome = ConnectionOutcome.failure(error) else { throw error }
          source.learn(from: outcome)
          guard retriesWhenOnline, !retried, isOffline else { throw error }
          let wait = try await waitWhileOffline(
            by: deadline, waitedBefore: waited, endedBy: cancellation)
          waited += wait?.waited ?? .zero
          // A source that is only trying lets calls go to find out; one that cannot connect
          // then has not used up its retry.
          retried = wait?.released != .unknown
        }
      }
    } catch {
      throw APIError(transportError: error, request: request)
    }
  }
}
