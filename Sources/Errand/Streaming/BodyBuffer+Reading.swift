import Foundation

/// Reading: chunk by chunk within an idle timeout, or the whole body at once.
extension BodyBuffer {
  /// The next chunk, or `nil` at the end of the body; ``APIError/timedOut`` when none arrives
  /// within `idleTimeout` on `clock`.
  func next(idleTimeout: Duration? = nil, clock: any Clock<Duration> = ContinuousClock())
    async throws -> Data?
  {
    if Task.isCancelled {
      cancel()
      throw CancellationError()
    }
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Data?, any Error>) in
        lock.lock()
        if cancelled || reader != nil {
          lock.unlock()
          continuation.resume(throwing: CancellationError())
          return
        }
        let taken: Data?
        do {
          taken = try queue.takeFirst(mergeAbove: Self.lowWater)
        } catch {
          lock.unlock()
          continuation.resume(throwing: error)
          stop(throwing: error)
          return
        }
        if let taken {
          let drained = takeDrainHandlers()
          lock.unlock()
          continuation.resume(returning: taken)
          for handler in drained { handler() }
          return
        }
        if let end {
          lock.unlock()
          continuation.resume(with: end.map { nil })
          return
        }
        waits += 1
        let wait = waits
        reader = .next(continuation, wait: wait)
        lock.unlock()
        if let idleTimeout {
          armIdleTimer(idleTimeout, on: clock, for: wait)
        }
      }
    } onCancel: {
      cancel()
    }
  }

  /// End the reader's `wait` with ``APIError/timedOut`` after `timeout`, unless a chunk, the end
  /// or a cancellation ends it first.
  private func armIdleTimer(_ timeout: Duration, on clock: any Clock<Duration>, for wait: Int) {
    let disarm = schedule(after: timeout, on: clock) { [weak self] in
      self?.expire(wait)
    }
    let stillWaiting = lock.withLock {
      guard case .next(_, wait) = reader else { return false }
      disarmIdleTimer = disarm
      return true
    }
    if !stillWaiting {
      disarm()
    }
  }

  private func expire(_ wait: Int) {
    lock.lock()
    guard case .next(let continuation, wait) = reader else {
      lock.unlock()
      return
    }
    reader = nil
    disarmIdleTimer = nil
    lock.unlock()
    continuation.resume(throwing: APIError.timedOut)
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
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Data, any Error>) in
        lock.lock()
        if cancelled || reader != nil {
          lock.unlock()
          continuation.resume(throwing: CancellationError())
          return
        }
        let queued: Data
        do {
          queued = try queue.takeAll()
        } catch {
          lock.unlock()
          continuation.resume(throwing: error)
          stop(throwing: error)
          return
        }
        if let end {
          lock.unlock()
          continuation.resume(with: end.map { queued })
          return
        }
        collected = queued
        reader = .collect(continuation)
        let drained = takeDrainHandlers(force: true)
        lock.unlock()
        for handler in drained { handler() }
      }
    } onCancel: {
      cancel()
    }
  }

  /// The whole body when it has already ended (a body built whole, a short answer), without
  /// suspending; `nil` while it is still arriving.
  func takeWholeIfEnded() throws -> Data? {
    lock.lock()
    defer { lock.unlock() }
    guard let end, !cancelled, reader == nil else { return nil }
    let queued = try queue.takeAll()
    return try end.map { queued }.get()
  }
}
