import Foundation

/// Run `operation`, failing with ``APIError/timedOut(_:)`` when it takes longer than `timeout` on
/// `clock`.
///
/// URLSession's resource timeout does not fire on Linux, so Errand enforces the whole exchange's
/// deadline itself. When the deadline passes, or the calling task is cancelled, the call returns
/// at once and the operation is cancelled; it finishes in the background without holding the
/// caller, even if a transport is slow to notice. So does the call's client cancelling it
/// (`cancellation`), with `CancellationError`.
func withDeadline<Value: Sendable>(
  _ timeout: Duration?, on clock: any Clock<Duration>,
  endedBy cancellation: CallCancellation? = nil,
  _ operation: @escaping @Sendable () async throws -> Value
) async throws -> Value {
  guard timeout != nil || cancellation != nil else { return try await operation() }
  // The timeout counts from here: the operation may run (and, on a test clock, register its own
  // sleeps, which a test may then advance past) before the timer is armed.
  let deadline = timeout.map { (Stopwatch(clock), $0) }
  return try await typed(
    race({ try await operation() }, deadline: deadline, endedBy: cancellation))
}

/// ``withDeadline(_:on:endedBy:_:)`` with a deadline `timeout` after `stopwatch` started (a
/// call's, shared by its exchanges): fixed before the operation starts, however long the caller
/// took to get here.
func withDeadline<Value: Sendable>(
  _ timeout: Duration, after stopwatch: Stopwatch, endedBy cancellation: CallCancellation? = nil,
  _ operation: @escaping @Sendable () async throws -> Value
) async throws -> Value {
  try await typed(
    race({ try await operation() }, deadline: (stopwatch, timeout), endedBy: cancellation))
}

/// Run `operation` until it finishes or the calling task is cancelled (or the call's client
/// cancels the call, `cancellation`), returning at once on cancellation even if the operation is
/// slow to notice (it goes on in the background).
package func withCancellation<Value: Sendable>(
  endedBy cancellation: CallCancellation? = nil,
  _ operation: @escaping @Sendable () async throws -> Value
) async throws -> Value {
  try await typed(
    race({ try await operation() }, deadline: nil, endedBy: cancellation))
}

/// The value a race returned, as the type its operation returns.
private func typed<Value>(_ value: any Sendable) -> Value {
  guard let value = value as? Value else {
    preconditionFailure("A race returned \(type(of: value)), not \(Value.self).")
  }
  return value
}

/// The race itself, not generic: generic code that is not specialized looks up the metadata of
/// every generic type it touches on each call, which cost more than the rest of the race.
///
/// `deadline` is an instant, as a stopwatch and the time after its start: read from the
/// stopwatch's start, never from when the timer is armed, so that a test clock advanced while
/// this function runs cannot push it later.
private func race(
  _ operation: @escaping @Sendable () async throws -> any Sendable,
  deadline: (stopwatch: Stopwatch, timeout: Duration)?, endedBy cancellation: CallCancellation?
) async throws -> any Sendable {
  // As if the cancellation handler below (or the client's cancelling the call) had fired
  // first: a call cancelled already never starts the operation (a token provider, a stub's
  // handler, a shared exchange).
  if Task.isCancelled || cancellation?.isCancelled == true {
    throw CancellationError()
  }
  let race = Race()
  // `Task.immediate` (which would let an operation with nothing to wait for finish before the
  // caller suspends) left tasks suspended for good under load with Swift 6.3 on Linux: not used.
  let work = Task {
    do {
      race.finish(.success(try await operation()))
    } catch {
      race.finish(.failure(error))
    }
  }
  race.onFinish { work.cancel() }
  if let cancellation {
    race.onFinish(cancellation.onCancel { race.finish(.failure(CancellationError())) })
  }
  if let early = race.takeEarly() {
    return try early.get()
  }
  if let deadline {
    race.onFinish(
      deadline.stopwatch.whenElapsed(deadline.timeout) {
        race.finish(.failure(APIError.timedOut))
      })
  }
  return try await withTaskCancellationHandler {
    try await withCheckedThrowingContinuation { continuation in
      race.start(continuation)
    }
  } onCancel: {
    race.finish(.failure(CancellationError()))
  }
}

/// Run `handler` after `delay` on `clock`, from now, returning what cancels it.
///
/// On the continuous clock every deadline in the process shares one Dispatch timer: a busy
/// cooperative pool cannot delay it, and registering one is a heap insert under a lock instead of
/// a task. Any other clock (a test clock, say) gets a task that sleeps on it until the instant
/// read here, before the task starts.
func schedule(
  after delay: Duration, on clock: any Clock<Duration>, _ handler: @escaping @Sendable () -> Void
) -> @Sendable () -> Void {
  Stopwatch(clock).whenElapsed(delay, handler)
}

/// The first of several outcomes to arrive resumes the continuation; the rest are dropped.
///
/// All state lives in a `Locked`, and the continuation and clean-up closures run outside the
/// lock, exactly once. An outcome is stored only when it arrives before the continuation, so a
/// decided race keeps no response alive.
private final class Race: Sendable {
  typealias Value = any Sendable

  private struct State {
    var continuation: CheckedContinuation<Value, any Error>?
    var decided = false
    var early: Result<Value, any Error>?
    var cleanups: [@Sendable () -> Void] = []
  }

  private let state = Locked(State())

  func start(_ continuation: CheckedContinuation<Value, any Error>) {
    let early = state.withLock { state -> Result<Value, any Error>? in
      if !state.decided {
        state.continuation = continuation
      }
      defer { state.early = nil }
      return state.early
    }
    if let early {
      continuation.resume(with: early)
    }
  }

  /// The outcome, if it arrived before anyone waited for it.
  func takeEarly() -> Result<Value, any Error>? {
    state.withLock { state in
      defer { state.early = nil }
      return state.early
    }
  }

  /// Run `cleanup` when the race is decided (at once if it already is).
  func onFinish(_ cleanup: @escaping @Sendable () -> Void) {
    let decided = state.withLock { state -> Bool in
      if !state.decided {
        state.cleanups.append(cleanup)
      }
      return state.decided
    }
    if decided {
      cleanup()
    }
  }

  func finish(_ outcome: Result<Value, any Error>) {
    typealias Winner = (CheckedContinuation<Value, any Error>?, [@Sendable () -> Void])
    let (continuation, cleanups) = state.withLock { state -> Winner in
      guard !state.decided else { return (nil, []) }
      state.decided = true
      if state.continuation == nil {
        state.early = outcome
      }
      defer {
        state.continuation = nil
        state.cleanups = []
      }
      return (state.continuation, state.cleanups)
    }
    continuation?.resume(with: outcome)
    for cleanup in cleanups {
      cleanup()
    }
  }
}
