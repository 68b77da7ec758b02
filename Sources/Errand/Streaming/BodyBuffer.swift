import Foundation

/// An ``HTTPBody`` between the transport that writes it and its one reader: the queue of unread
/// chunks, the body's end, and its size limit, the only place Errand counts a response body
/// against ``HTTPRequest/maximumResponseSize``.
///
/// A reader either takes chunks one by one (``next(idleTimeout:clock:)``) or collects the whole
/// body (``collect()``); a collecting reader gets every later chunk appended in place, with no
/// queue and no wake-up until the end.
///
/// Reading is in `BodyBuffer+Reading.swift`; the state is internal for that file's sake only.
///
/// `@unchecked Sendable` is safe: every stored property is read and written under `lock`, and
/// continuations, timers and callbacks are resumed or called after the lock is released, each
/// exactly once (they are taken out of the state first).
final class BodyBuffer: @unchecked Sendable {
  /// Who waits for the body.
  enum Reader {
    /// A reader waiting for the next chunk; `wait` tells its timer which wait it was armed for.
    case next(CheckedContinuation<Data?, any Error>, wait: Int)
    /// A reader waiting for the whole body, appended to `collected`.
    case collect(CheckedContinuation<Data, any Error>)
  }

  let lock = NSLock()
  var queue = ChunkQueue()
  var reader: Reader?
  /// The body so far, once a reader collects it.
  var collected: Data?
  var end: Result<Void, any Error>?
  var cancelled = false
  var onCancel: (@Sendable () -> Void)?
  /// Who waits for the reader to catch up (a transport that paused its transfer).
  var drainHandlers: [@Sendable () -> Void] = []
  /// The most bytes the body may have, and how many it has had.
  var limit: Int?
  var received = 0
  /// Counts the reader's waits, so that an idle timer ends only the wait it was armed for.
  var waits = 0
  var disarmIdleTimer: (@Sendable () -> Void)?

  /// Below this many unread bytes a paused writer may go on.
  static let lowWater = HTTPBody.memoryBudget / 2

  /// A buffer for a body of `expectedLength` bytes (when announced) that may have at most
  /// `limit`; one announced longer ends at once with the size error.
  init(expectedLength: Int?, limit: Int?, onCancel: @escaping @Sendable () -> Void) {
    self.onCancel = onCancel
    self.limit = limit
    if Self.exceeds(expectedLength, limit) {
      end = .failure(URLError(.dataLengthExceedsMaximum))
      self.onCancel = nil
    }
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
    lock.withLock { queue.unread }
  }

  /// Whether writing is over: the reader stopped, or the body ended.
  var isStopped: Bool {
    lock.withLock { cancelled || end != nil }
  }

  // MARK: Writing

  /// Add a chunk, counting it against the limit; a body that crosses it ends with
  /// `URLError(.dataLengthExceedsMaximum)` and its transfer is stopped.
  func write(_ chunk: Data) -> HTTPBody.WriteOutcome {
    lock.lock()
    guard !cancelled, end == nil else {
      lock.unlock()
      return .stop
    }
    guard !chunk.isEmpty else {
      lock.unlock()
      return .proceed
    }
    received += chunk.count
    if Self.exceeds(received, limit) {
      lock.unlock()
      stop(throwing: URLError(.dataLengthExceedsMaximum))
      return .stop
    }
    if collected != nil {
      collected?.append(chunk)
      lock.unlock()
      return .proceed
    }
    if case .next(let waiting, _) = reader {
      reader = nil
      let disarm = takeIdleTimer()
      lock.unlock()
      disarm?()
      waiting.resume(returning: chunk)
      return .proceed
    }
    do {
      try queue.append(chunk)
      let backedUp = queue.unread >= HTTPBody.memoryBudget
      lock.unlock()
      return backedUp ? .pause : .proceed
    } catch {
      // No room to buffer: end the body with the reason and stop the transfer.
      lock.unlock()
      stop(throwing: error)
      return .stop
    }
  }

  /// End the body: normally, or with the error that cut the transfer short. Ignored once the
  /// body has ended or been cancelled.
  func finish(throwing error: (any Error)?) {
    lock.lock()
    guard !cancelled, end == nil else {
      lock.unlock()
      return
    }
    let outcome: Result<Void, any Error> = error.map { .failure($0) } ?? .success(())
    end = outcome
    onCancel = nil
    let resume = takeReaderAtEnd()
    lock.unlock()
    resume?()
  }

  /// End the body with `error` and stop the transfer: the size limit crossed, the call's
  /// deadline passed, no room to buffer. Ignored once the body has ended or been cancelled.
  func stop(throwing error: any Error) {
    lock.lock()
    guard !cancelled, end == nil else {
      lock.unlock()
      return
    }
    endAndStop(throwing: error)
  }

  /// Lower the limit to `maximum` (never raise it). A body already longer, or announced longer,
  /// ends at once with `URLError(.dataLengthExceedsMaximum)`, even one that arrived whole: what
  /// is queued is dropped and the transfer stopped.
  func limit(to maximum: Int, expectedLength: Int?) {
    lock.lock()
    limit = min(limit ?? .max, maximum)
    let crossed = Self.exceeds(received, maximum) || Self.exceeds(expectedLength, maximum)
    var failed = false
    if case .failure = end { failed = true }
    guard !cancelled, crossed, !failed else {
      lock.unlock()
      return
    }
    queue.removeAll()
    endAndStop(throwing: URLError(.dataLengthExceedsMaximum))
  }

  /// End the body with `error`, then, after unlocking, resume the reader if it has nothing left
  /// to take, stop the transfer and resume a paused writer. Called under `lock`; releases it.
  private func endAndStop(throwing error: any Error) {
    end = .failure(error)
    let stopTransfer = onCancel
    onCancel = nil
    let resume = takeReaderAtEnd()
    let drained = takeDrainHandlers(force: true)
    lock.unlock()
    resume?()
    stopTransfer?()
    for handler in drained { handler() }
  }

  /// Stop reading: drop what is queued, end the reader's wait with `CancellationError`, and
  /// stop the transfer.
  func cancel() {
    lock.lock()
    guard !cancelled else {
      lock.unlock()
      return
    }
    cancelled = true
    let waiting = reader
    reader = nil
    collected = nil
    let disarm = takeIdleTimer()
    let stopTransfer = onCancel
    onCancel = nil
    queue.removeAll()
    let drained = takeDrainHandlers(force: true)
    lock.unlock()
    disarm?()
    switch waiting {
    case .next(let continuation, _): continuation.resume(throwing: CancellationError())
    case .collect(let continuation): continuation.resume(throwing: CancellationError())
    case nil: break
    }
    stopTransfer?()
    for handler in drained { handler() }
  }

  // MARK: Backpressure

  /// Run `handler` once the reader is less than half a memory budget behind, or collects the
  /// body, or the body has ended or been cancelled; at once if it already is.
  func whenDrained(_ handler: @escaping @Sendable () -> Void) {
    lock.lock()
    guard !cancelled, end == nil, collected == nil, queue.unread >= Self.lowWater else {
      lock.unlock()
      handler()
      return
    }
    drainHandlers.append(handler)
    lock.unlock()
  }

  /// The drain handlers to run now: all of them when `force`d (the body ended, or the reader
  /// collects it), else if the reader has caught up. Called under `lock`.
  func takeDrainHandlers(force: Bool = false) -> [@Sendable () -> Void] {
    guard !drainHandlers.isEmpty, force || queue.unread < Self.lowWater else { return [] }
    defer { drainHandlers = [] }
    return drainHandlers
  }

  // MARK: Reading

  /// What resumes the waiting reader now that the body has ended, if it has nothing queued left
  /// to take first. Called under `lock`, with `end` set; the result is run after unlocking.
  func takeReaderAtEnd() -> (() -> Void)? {
    guard let end else { return nil }
    switch reader {
    case .next(let continuation, _) where queue.isEmpty:
      reader = nil
      let disarm = takeIdleTimer()
      return {
        disarm?()
        continuation.resume(with: end.map { nil })
      }
    case .collect(let continuation):
      reader = nil
      let body = collected ?? Data()
      collected = nil
      return { continuation.resume(with: end.map { body }) }
    default:
      return nil
    }
  }

  /// The idle timer's disarm, taken out of the state. Called under `lock`.
  func takeIdleTimer() -> (@Sendable () -> Void)? {
    defer { disarmIdleTimer = nil }
    return disarmIdleTimer
  }
}
