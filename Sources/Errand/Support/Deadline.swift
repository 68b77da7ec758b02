import Foundation

/// Run `operation`, failing with ``APIError/timedOut`` when it takes longer than `timeout`.
///
/// URLSession's resource timeout does not fire on Linux, so Errand enforces the whole exchange's
/// deadline itself. When the deadline passes, or the calling task is cancelled, the call returns
/// at once and the operation is cancelled; it finishes in the background without holding the
/// caller, even if a transport is slow to notice.
func withDeadline<Value: Sendable>(
  _ timeout: Duration?, _ operation: @escaping @Sendable () async throws -> Value
) async throws -> Value {
  guard let timeout else { return try await operation() }
  return try await withDeadline(timeout: timeout, cancellable: operation)
}

/// Run `operation` until it finishes or the calling task is cancelled, returning at once on
/// cancellation even if the operation is slow to notice (it goes on in the background).
func withCancellation<Value: Sendable>(
  _ operation: @escaping @Sendable () async throws -> Value
) async throws -> Value {
  try await withDeadline(timeout: nil, cancellable: operation)
}

private func withDeadline<Value: Sendable>(
  timeout: Duration?, cancellable operation: @escaping @Sendable () async throws -> Value
) async throws -> Value {
  let race = Race<Value>()
  return try await withTaskCancellationHandler {
    try await withCheckedThrowingContinuation { continuation in
      race.start(continuation)
      let work = Task {
        do {
          race.finish(.success(try await operation()))
        } catch {
          race.finish(.failure(error))
        }
      }
      race.onFinish { work.cancel() }
      if let timeout {
        // A Dispatch timer, not a sleeping task, so that a busy cooperative pool cannot delay it;
        // one shared timer for all deadlines, and a decided race drops its handler.
        let scheduler = DeadlineScheduler.shared
        let id = scheduler.schedule(after: timeout) { race.finish(.failure(APIError.timedOut)) }
        race.onFinish { scheduler.cancel(id) }
      }
    }
  } onCancel: {
    race.finish(.failure(CancellationError()))
  }
}

/// The first of several outcomes to arrive resumes the continuation; the rest are dropped.
///
/// `@unchecked Sendable` is safe: all state lives in a `Locked`, and the continuation and clean-up
/// closures run outside the lock, exactly once. An outcome is stored only when it arrives before
/// the continuation, so a decided race keeps no response alive.
private final class Race<Value: Sendable>: @unchecked Sendable {
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
