import Foundation

/// The state of one ``HTTPBody`` between the transport that writes it and its one reader: the
/// queue of unread chunks, the body's end, its size limit, the reader's wait and the writer's.
///
/// A value, changed only under ``BodyBuffer``'s lock. Each event is a mutating method that
/// returns what must happen once the lock is released (``Effects``: wake the reader, stop the
/// transfer, resume a paused writer), so no path can forget to unlock or call out while holding
/// the lock. A woken reader takes its ``answer`` under the lock, so what the writer's thread
/// made reaches it by an edge ThreadSanitizer sees. Generic over how a waiting reader is woken
/// (`Wake`), so tests drive it without threads or tasks.
struct BodyState<Wake> {
  /// Who waits for the body.
  enum Reader {
    /// A reader waiting for the next chunk; `wait` tells its idle timer which wait it was armed
    /// for.
    case next(Wake, wait: Int)
    /// A reader waiting for the whole body, appended to `collected`.
    case collect(Wake)
  }

  /// What to do once the lock is released, in this order.
  struct Effects {
    /// Disarm the reader's idle timer.
    var disarmIdleTimer: (@Sendable () -> Void)?
    /// Wake the reader: its answer is ready to take.
    var wake: Wake?
    /// Stop the transfer (the body's `onCancel`).
    var stopTransfer: (@Sendable () -> Void)?
    /// Resume the paused writer.
    var drained: [@Sendable () -> Void] = []
  }

  /// How a reader's attempt to wait ended.
  enum Waited: Equatable {
    /// Another reader waits, or the body was cancelled: this one gets `CancellationError`.
    case refused
    /// The answer was there at once: it is woken now (the wake is in the effects).
    case answered
    /// It waits; `wait` numbers the wait for its idle timer (`nil` for a collecting reader).
    case waiting(wait: Int?)
  }

  private(set) var queue = ChunkQueue()
  private var reader: Reader?
  /// What ended the reader's wait, for it to take once woken.
  private var answer: Result<Data?, any Error>?
  /// The body so far, once a reader collects it.
  private var collected: Data?
  private(set) var end: Result<Void, any Error>?
  private(set) var cancelled = false
  /// The whole transfer's metrics, as its transport reported them when the body ended normally.
  private var endMetrics: TransferMetrics?
  /// Whether the reader has been handed the body's normal end: it has had every byte.
  private var endRead = false
  private var onCancel: (@Sendable () -> Void)?
  /// Who waits for the reader to catch up (a transport that paused its transfer).
  private var drainHandlers: [@Sendable () -> Void] = []
  /// The most bytes the body may have, and how many it has had.
  private var limit: Int?
  private var received = 0
  /// Counts the reader's waits, so that an idle timer ends only the wait it was armed for.
  private var waits = 0
  private var disarmIdleTimer: (@Sendable () -> Void)?

  /// Below this many unread bytes a paused writer may go on.
  static var lowWater: Int { HTTPBody.memoryBudget / 2 }

  /// A body of `expectedLength` bytes (when announced) that may have at most `limit`; one
  /// announced longer has ended at once with the size error.
  init(expectedLength: Int?, limit: Int?, onCancel: @escaping @Sendable () -> Void) {
    self.onCancel = onCancel
    self.limit = limit
    if BodyBuffer.exceeds(expectedLength, limit) {
      end = .failure(URLError(.dataLengthExceedsMaximum))
      self.onCancel = nil
    }
  }

  /// Whether writing is over: the reader stopped, or the body ended.
  var isStopped: Bool { cancelled || end != nil }

  /// The whole transfer's metrics, once the reader has read to the body's normal end: `nil`
  /// before (a reader that stops early never had the whole body, whatever the transport
  /// finished), and for a body that ended with an error or was cancelled before its end.
  var metrics: TransferMetrics? {
    endRead ? endMetrics : nil
  }

  /// The body's end is handed to the reader: if it ended normally, the reader has had every
  /// byte, and the transfer's metrics are its from now on (a cancellation after, as the end of
  /// a loop makes, changes nothing).
  private mutating func handOverEnd() {
    if case .success = end, !cancelled {
      endRead = true
    }
  }

  // MARK: Writing

  /// Add a chunk, counting it against the limit; a body that crosses it ends with
  /// `URLError(.dataLengthExceedsMaximum)` and its transfer is stopped.
  mutating func write(_ chunk: Data) -> (HTTPBody.WriteOutcome, Effects) {
    guard !isStopped else { return (.stop, Effects()) }
    guard !chunk.isEmpty else { return (.proceed, Effects()) }
    received += chunk.count
    if BodyBuffer.exceeds(received, limit) {
      return (.stop, endAndStop(throwing: URLError(.dataLengthExceedsMaximum)))
    }
    if collected != nil {
      collected?.append(chunk)
      return (.proceed, Effects())
    }
    if case .next(let wake, _) = reader {
      return (.proceed, wakeReader(wake, with: .success(chunk)))
    }
    do {
      try queue.append(chunk)
    } catch {
      // No room to buffer: end the body with the reason and stop the transfer.
      return (.stop, endAndStop(throwing: error))
    }
    return (queue.unread >= HTTPBody.memoryBudget ? .pause : .proceed, Effects())
  }

  /// End the body: normally (with the whole transfer's `metrics`, when the transport reports
  /// them), or with the error that cut the transfer short. Ignored once the body has ended or
  /// been cancelled.
  mutating func finish(throwing error: (any Error)?, metrics: TransferMetrics? = nil) -> Effects {
    guard !isStopped else { return Effects() }
    end = error.map { .failure($0) } ?? .success(())
    if error == nil {
      endMetrics = metrics
    }
    onCancel = nil
    var effects = wakeReaderAtEnd()
    // A paused writer has nothing left to wait for.
    effects.drained = takeDrainHandlers(force: true)
    return effects
  }

  /// End the body with `error` and stop the transfer: the call's deadline passed. Ignored once
  /// the body has ended or been cancelled.
  mutating func stop(throwing error: any Error) -> Effects {
    guard !isStopped else { return Effects() }
    return endAndStop(throwing: error)
  }

  /// Lower the limit to `maximum` (never raise it). A body already longer, or announced longer,
  /// ends at once with `URLError(.dataLengthExceedsMaximum)`, even one that arrived whole: what
  /// is queued is dropped and the transfer stopped.
  mutating func limit(to maximum: Int, expectedLength: Int?) -> Effects {
    limit = min(limit ?? .max, maximum)
    let crossed =
      BodyBuffer.exceeds(received, maximum) || BodyBuffer.exceeds(expectedLength, maximum)
    var failed = false
    if case .failure = end { failed = true }
    guard !cancelled, crossed, !failed else { return Effects() }
    queue.removeAll()
    return endAndStop(throwing: URLError(.dataLengthExceedsMaximum))
  }

  /// Stop reading: drop what is queued, end the reader's wait with `CancellationError`, and
  /// stop the transfer.
  mutating func cancel() -> Effects {
    guard !cancelled else { return Effects() }
    cancelled = true
    var effects: Effects
    switch reader {
    case .next(let wake, _), .collect(let wake):
      effects = wakeReader(wake, with: .failure(CancellationError()))
    case nil:
      effects = Effects(disarmIdleTimer: takeIdleTimer())
    }
    collected = nil
    queue.removeAll()
    effects.stopTransfer = onCancel
    onCancel = nil
    effects.drained = takeDrainHandlers(force: true)
    return effects
  }

  /// End the body with `error`; wake the reader if it has nothing left to take first, stop the
  /// transfer and resume a paused writer.
  private mutating func endAndStop(throwing error: any Error) -> Effects {
    end = .failure(error)
    var effects = wakeReaderAtEnd()
    effects.stopTransfer = onCancel
    onCancel = nil
    effects.drained = takeDrainHandlers(force: true)
    return effects
  }

  // MARK: Backpressure

  /// Keep `handler` until the reader is less than half a memory budget behind, or collects the
  /// body, or the body has ended or been cancelled; run it at once if it already is.
  mutating func whenDrained(_ handler: @escaping @Sendable () -> Void) -> Effects {
    guard !isStopped, collected == nil, queue.unread >= Self.lowWater else {
      return Effects(drained: [handler])
    }
    drainHandlers.append(handler)
    return Effects()
  }

  /// The drain handlers to run now: all of them when `force`d (the body ended, or the reader
  /// collects it), else if the reader has caught up.
  private mutating func takeDrainHandlers(force: Bool = false) -> [@Sendable () -> Void] {
    guard !drainHandlers.isEmpty, force || queue.unread < Self.lowWater else { return [] }
    defer { drainHandlers = [] }
    return drainHandlers
  }

  // MARK: Reading

  /// The next chunk when one can be had without waiting (a queued chunk, or the body's end), or
  /// `nil` when the reader must wait.
  mutating func takeNext() -> (Result<Data?, any Error>?, Effects) {
    guard !cancelled, reader == nil, answer == nil else {
      return (.failure(CancellationError()), Effects())
    }
    do {
      if let taken = try queue.takeFirst(mergeAbove: Self.lowWater) {
        releaseSpillFileAtEnd()
        return (.success(taken), Effects(drained: takeDrainHandlers()))
      }
    } catch {
      return (.failure(error), stop(throwing: error))
    }
    if end != nil {
      handOverEnd()
    }
    return (end.map { $0.map { nil } }, Effects())
  }

  /// Wait for the next chunk, to be woken with `wake` once there is one (or the end); answered
  /// at once when there is one already.
  mutating func awaitNext(_ wake: Wake) -> (Waited, Effects) {
    guard !cancelled, reader == nil, answer == nil else { return (.refused, Effects()) }
    var (now, effects) = takeNext()
    if let now {
      answer = now
      effects.wake = wake
      return (.answered, effects)
    }
    waits += 1
    reader = .next(wake, wait: waits)
    return (.waiting(wait: waits), effects)
  }

  /// The whole body when it has already ended (a body built whole, a short answer); `nil`
  /// while it is still arriving.
  mutating func takeWholeIfEnded() -> Result<Data, any Error>? {
    guard let end, !cancelled, reader == nil, answer == nil else { return nil }
    do {
      let queued = try queue.takeAll()
      releaseSpillFileAtEnd()
      handOverEnd()
      return end.map { queued }
    } catch {
      return .failure(error)
    }
  }

  /// Wait for the whole body, to be woken with `wake` at its end; every later chunk is
  /// appended in place, with no wake-up until then.
  mutating func awaitWhole(_ wake: Wake) -> (Waited, Effects) {
    guard !cancelled, reader == nil, answer == nil else { return (.refused, Effects()) }
    let queued: Data
    do {
      queued = try queue.takeAll()
    } catch {
      answer = .failure(error)
      var effects = stop(throwing: error)
      effects.wake = wake
      return (.answered, effects)
    }
    if let end {
      answer = end.map { queued }
      releaseSpillFileAtEnd()
      handOverEnd()
      return (.answered, Effects(wake: wake))
    }
    collected = queued
    reader = .collect(wake)
    return (.waiting(wait: nil), Effects(drained: takeDrainHandlers(force: true)))
  }

  /// Close the spill file once the body has ended and nothing is left in it: a body read to its
  /// end and still held keeps no descriptor open.
  private mutating func releaseSpillFileAtEnd() {
    if end != nil, queue.isEmpty {
      queue.removeAll()
    }
  }

  /// What a woken reader was woken with; taken once.
  mutating func takeAnswer() -> Result<Data?, any Error> {
    defer { answer = nil }
    return answer ?? .failure(CancellationError())
  }

  /// Keep the disarm of the idle timer armed for `wait`, if that wait is still on.
  /// - Returns: Whether it was kept; if not, the caller disarms the timer itself.
  mutating func keepIdleTimer(_ disarm: @escaping @Sendable () -> Void, for wait: Int) -> Bool {
    guard case .next(_, wait) = reader else { return false }
    disarmIdleTimer = disarm
    return true
  }

  /// The idle timer armed for `wait` fired: end that wait with ``APIError/timedOut(_:)``, if it is
  /// still on.
  mutating func expire(_ wait: Int) -> Effects {
    guard case .next(let wake, wait) = reader else { return Effects() }
    disarmIdleTimer = nil
    return wakeReader(wake, with: .failure(APIError.timedOut))
  }

  /// Wake the reader with `answer`.
  private mutating func wakeReader(_ wake: Wake, with answer: Result<Data?, any Error>) -> Effects {
    reader = nil
    self.answer = answer
    return Effects(disarmIdleTimer: takeIdleTimer(), wake: wake)
  }

  /// Wake the reader now that the body has ended, if it has nothing queued left to take first.
  private mutating func wakeReaderAtEnd() -> Effects {
    guard let end else { return Effects() }
    switch reader {
    case .next(let wake, _) where queue.isEmpty:
      handOverEnd()
      return wakeReader(wake, with: end.map { nil })
    case .collect(let wake):
      let body = collected ?? Data()
      collected = nil
      handOverEnd()
      return wakeReader(wake, with: end.map { body })
    default:
      return Effects()
    }
  }

  /// The idle timer's disarm, taken out of the state.
  private mutating func takeIdleTimer() -> (@Sendable () -> Void)? {
    defer { disarmIdleTimer = nil }
    return disarmIdleTimer
  }
}
