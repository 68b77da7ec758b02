import Foundation

/// Reading: chunk by chunk within an idle timeout, or the whole body at once. A reader that has
/// to wait suspends until an event wakes it, then takes its answer under the lock.
extension BodyBuffer {
  /// The next chunk, or `nil` at the end of the body; ``APIError/timedOut(_:)`` when none arrives
  /// within `idleTimeout` on `clock`.
  func next(idleTimeout: Duration? = nil, clock: any Clock<Duration> = ContinuousClock())
    async throws -> Data?
  {
    if Task.isCancelled {
      cancel()
      throw CancellationError()
    }
    let (now, effects) = state.withLock { $0.takeNext() }
    effects.perform()
    if let now {
      return try now.get()
    }
    return try await wait { state, wake in
      let (waited, effects) = state.withLock { $0.awaitNext(wake) }
      effects.perform()
      if case .waiting(let wait?) = waited, let idleTimeout {
        armIdleTimer(idleTimeout, on: clock, for: wait)
      }
      return waited
    }
  }

  /// The whole body: what is queued, then every later chunk, appended in place.
  func collect() async throws -> Data {
    if Task.isCancelled {
      cancel()
      throw CancellationError()
    }
    if let whole = try takeWholeIfEnded() {
      return whole
    }
    return try await wait { state, wake in
      let (waited, effects) = state.withLock { $0.awaitWhole(wake) }
      effects.perform()
      return waited
    } ?? Data()
  }

  /// The whole body when it has already ended (a body built whole, a short answer), without
  /// suspending; `nil` while it is still arriving.
  func takeWholeIfEnded() throws -> Data? {
    try state.withLock { $0.takeWholeIfEnded() }?.get()
  }

  /// Suspend until woken, then take the answer: `register` shares the wake with the state (or
  /// is answered at once, or refused); a cancellation of the calling task cancels the body.
  private func wait(
    _ register: (Locked<State>, CheckedContinuation<Bool, Never>) -> State.Waited
  ) async throws -> Data? {
    let answered = await withTaskCancellationHandler {
      await withCheckedContinuation { (wake: CheckedContinuation<Bool, Never>) in
        if register(state, wake) == .refused {
          wake.resume(returning: false)
        }
      }
    } onCancel: {
      cancel()
    }
    guard answered else { throw CancellationError() }
    return try state.withLock { $0.takeAnswer() }.get()
  }

  /// End the reader's `wait` with ``APIError/timedOut(_:)`` after `timeout`, unless a chunk, the
  /// end or a cancellation ends it first.
  private func armIdleTimer(_ timeout: Duration, on clock: any Clock<Duration>, for wait: Int) {
    let disarm = schedule(after: timeout, on: clock) { [weak self] in
      self?.state.withLock { $0.expire(wait) }.perform()
    }
    if !state.withLock({ $0.keepIdleTimer(disarm, for: wait) }) {
      disarm()
    }
  }
}
