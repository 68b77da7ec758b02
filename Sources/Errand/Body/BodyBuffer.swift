import Foundation

/// An ``HTTPBody`` between the transport that writes it and its one reader, on whatever threads
/// they run: the lock around its ``BodyState``, and the effects each event returns, performed
/// after unlocking. The body's size limit is counted here, the only place Errand counts a
/// response body against ``HTTPRequest/maximumResponseSize``.
///
/// A reader either takes chunks one by one (``next(idleTimeout:clock:)``) or collects the whole
/// body (``collect()``); a collecting reader gets every later chunk appended in place, with no
/// queue and no wake-up until the end. Reading is in `BodyBuffer+Reading.swift`.
///
/// `@unchecked Sendable` is safe: its one mutable value, `state`, is read and changed only
/// inside `Locked.withLock`, and what an event hands out of it (a reader's continuation, the
/// transfer's stop, a writer's drain handlers) is called after the lock is released, once (it is
/// taken out of the state first). It is not checked by the compiler only because the state's
/// queue holds a spill file, a class the lock alone guards.
final class BodyBuffer: @unchecked Sendable {
  typealias State = BodyState<CheckedContinuation<Bool, Never>>

  let state: Locked<State>

  /// A buffer for a body of `expectedLength` bytes (when announced) that may have at most
  /// `limit`; one announced longer ends at once with the size error.
  init(expectedLength: Int?, limit: Int?, onCancel: @escaping @Sendable () -> Void) {
    state = Locked(State(expectedLength: expectedLength, limit: limit, onCancel: onCancel))
  }

  /// The size rule itself: whether `length` bytes are more than `limit` allows.
  static func exceeds(_ length: Int?, _ limit: Int?) -> Bool {
    guard let length, let limit else { return false }
    return length > limit
  }

  /// Hold a body that arrived whole to `limit` without buffering it: the same rule, for the
  /// answers a transport has whole at once.
  /// - Throws: `URLError(.dataLengthExceedsMaximum)` when it is longer.
  static func admit(wholeBodyOf length: Int, limit: Int?) throws {
    if exceeds(length, limit) {
      throw URLError(.dataLengthExceedsMaximum)
    }
  }

  /// Bytes written and not yet read.
  var unreadBytes: Int {
    state.withLock { $0.queue.unread }
  }

  /// Whether writing is over: the reader stopped, or the body ended.
  var isStopped: Bool {
    state.withLock { $0.isStopped }
  }

  /// Add a chunk, counting it against the limit; a body that crosses it ends with
  /// `URLError(.dataLengthExceedsMaximum)` and its transfer is stopped.
  func write(_ chunk: Data) -> HTTPBody.WriteOutcome {
    let (outcome, effects) = state.withLock { $0.write(chunk) }
    effects.perform()
    return outcome
  }

  /// End the body: normally (with the whole transfer's `metrics`, when the transport reports
  /// them), or with the error that cut the transfer short. Ignored once the body has ended or
  /// been cancelled.
  func finish(throwing error: (any Error)?, metrics: TransferMetrics? = nil) {
    state.withLock { $0.finish(throwing: error, metrics: metrics) }.perform()
  }

  /// The whole transfer's metrics, once the reader has read to the body's normal end and its
  /// transport reported them.
  var metrics: TransferMetrics? {
    state.withLock { $0.metrics }
  }

  /// End the body with `error` and stop the transfer (the call's deadline passed). Ignored once
  /// the body has ended or been cancelled.
  func stop(throwing error: any Error) {
    state.withLock { $0.stop(throwing: error) }.perform()
  }

  /// Lower the limit to `maximum` (never raise it). A body already longer, or announced longer,
  /// ends at once with `URLError(.dataLengthExceedsMaximum)`, even one that arrived whole.
  func limit(to maximum: Int, expectedLength: Int?) {
    state.withLock { $0.limit(to: maximum, expectedLength: expectedLength) }.perform()
  }

  /// Stop reading: drop what is queued, end the reader's wait with `CancellationError`, and
  /// stop the transfer.
  func cancel() {
    state.withLock { $0.cancel() }.perform()
  }

  /// Run `handler` once the reader is less than half a memory budget behind, or collects the
  /// body, or the body has ended or been cancelled; at once if it already is.
  func whenDrained(_ handler: @escaping @Sendable () -> Void) {
    state.withLock { $0.whenDrained(handler) }.perform()
  }
}

extension BodyState<CheckedContinuation<Bool, Never>>.Effects {
  /// Do what the event asked for, outside the lock: disarm the idle timer, stop the transfer,
  /// wake the reader (which then takes its answer under the lock), resume a paused writer. The
  /// transfer is stopped before the reader wakes, so that a call that ends because its body was
  /// stopped (its deadline, a limit) has stopped its transfer by the time it returns.
  func perform() {
    disarmIdleTimer?()
    stopTransfer?()
    wake?.resume(returning: true)
    for handler in drained { handler() }
  }
}
