import Foundation

/// The chunks of an ``HTTPBody`` between the transport that writes them and the reader: in memory
/// up to ``HTTPBody/memoryBudget`` unread bytes, then in an unlinked temporary file, read back in
/// arrival order. One reader at a time.
///
/// `@unchecked Sendable` is safe: every stored property is read and written under `lock`, and
/// continuations and the cancel callback are resumed or called after the lock is released,
/// each exactly once (they are taken out of the state first).
final class BodyBuffer: @unchecked Sendable {
  private enum Segment {
    case memory(Data)
    case file(Int)
  }

  private let lock = NSLock()
  private var segments: [Segment] = []
  private var memoryBytes = 0
  private var spill: SpillFile?
  private var waiter: CheckedContinuation<Data?, any Error>?
  private var end: Result<Void, any Error>?
  private var cancelled = false
  private var onCancel: (@Sendable () -> Void)?
  /// Bytes written and not yet read, in memory or in the file.
  private var unread = 0
  /// Who waits for the reader to catch up (a transport that paused its transfer).
  private var drainHandlers: [@Sendable () -> Void] = []

  /// Below this many unread bytes a backed-up writer may go on.
  static let lowWater = HTTPBody.memoryBudget / 2

  init(onCancel: @escaping @Sendable () -> Void) {
    self.onCancel = onCancel
  }

  var isCancelled: Bool {
    lock.withLock { cancelled }
  }

  /// Bytes written and not yet read.
  var unreadBytes: Int {
    lock.withLock { unread }
  }

  /// Whether the reader is a memory budget or more behind: a writer that can pause should.
  var isBackedUp: Bool {
    lock.withLock { unread >= HTTPBody.memoryBudget }
  }

  /// Run `handler` once the reader is less than half a memory budget behind, or the body has
  /// ended or been cancelled; at once if it already is.
  func whenDrained(_ handler: @escaping @Sendable () -> Void) {
    lock.lock()
    guard !cancelled, end == nil, unread >= Self.lowWater else {
      lock.unlock()
      handler()
      return
    }
    drainHandlers.append(handler)
    lock.unlock()
  }

  /// The drain handlers to run now, if the reader has caught up. Called under `lock`.
  private func takeDrainHandlers() -> [@Sendable () -> Void] {
    guard !drainHandlers.isEmpty, cancelled || unread < Self.lowWater else { return [] }
    defer { drainHandlers = [] }
    return drainHandlers
  }

  func write(_ chunk: Data) {
    guard !chunk.isEmpty else { return }
    lock.lock()
    guard !cancelled, end == nil else {
      lock.unlock()
      return
    }
    if let waiting = waiter {
      waiter = nil
      lock.unlock()
      waiting.resume(returning: chunk)
      return
    }
    unread += chunk.count
    if memoryBytes + chunk.count <= HTTPBody.memoryBudget {
      segments.append(.memory(chunk))
      memoryBytes += chunk.count
      lock.unlock()
      return
    }
    do {
      let file = try spill ?? SpillFile()
      spill = file
      try file.append(chunk)
      if case .file(let count) = segments.last {
        segments[segments.count - 1] = .file(count + chunk.count)
      } else {
        segments.append(.file(chunk.count))
      }
      lock.unlock()
    } catch {
      // No room to buffer: end the body with the reason and stop the transfer.
      end = .failure(error)
      let stop = onCancel
      onCancel = nil
      lock.unlock()
      stop?()
    }
  }

  func finish(throwing error: (any Error)?) {
    lock.lock()
    guard !cancelled, end == nil else {
      lock.unlock()
      return
    }
    end = error.map { .failure($0) } ?? .success(())
    onCancel = nil
    let waiting = segments.isEmpty ? waiter : nil
    if waiting != nil {
      waiter = nil
    }
    lock.unlock()
    if let waiting {
      resume(waiting, at: error)
    }
  }

  func cancel() {
    lock.lock()
    guard !cancelled else {
      lock.unlock()
      return
    }
    cancelled = true
    let waiting = waiter
    waiter = nil
    let stop = onCancel
    onCancel = nil
    segments = []
    memoryBytes = 0
    unread = 0
    spill = nil
    let drained = takeDrainHandlers()
    lock.unlock()
    waiting?.resume(throwing: CancellationError())
    stop?()
    for handler in drained {
      handler()
    }
  }

  func next() async throws -> Data? {
    if Task.isCancelled {
      cancel()
      throw CancellationError()
    }
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Data?, any Error>) in
        lock.lock()
        if cancelled || waiter != nil {
          lock.unlock()
          continuation.resume(throwing: CancellationError())
          return
        }
        do {
          if let chunk = try takeFirst() {
            let drained = takeDrainHandlers()
            lock.unlock()
            continuation.resume(returning: chunk)
            for handler in drained {
              handler()
            }
            return
          }
        } catch {
          end = .failure(error)
          let stop = onCancel
          onCancel = nil
          lock.unlock()
          continuation.resume(throwing: error)
          stop?()
          return
        }
        if let end {
          lock.unlock()
          switch end {
          case .success: continuation.resume(returning: nil)
          case .failure(let error): continuation.resume(throwing: error)
          }
          return
        }
        waiter = continuation
        lock.unlock()
      }
    } onCancel: {
      cancel()
    }
  }

  /// The first buffered chunk, or `nil` when none is buffered. Called under `lock`.
  private func takeFirst() throws -> Data? {
    guard let first = segments.first else { return nil }
    switch first {
    case .memory(let chunk):
      segments.removeFirst()
      var taken = chunk
      if unread >= Self.lowWater {
        // A reader half a memory budget behind gets what is queued in fewer, larger chunks (up
        // to 256 KB), rather than paying its per-chunk cost for every piece the transport wrote.
        while case .memory(let next) = segments.first, taken.count + next.count <= 256 * 1024 {
          segments.removeFirst()
          taken.append(next)
        }
      }
      memoryBytes -= taken.count
      unread -= taken.count
      return taken
    case .file(let count):
      guard let spill else { return nil }
      let chunk = try spill.read(upTo: min(count, 256 * 1024))
      unread -= chunk.count
      if chunk.count < count {
        segments[0] = .file(count - chunk.count)
      } else {
        segments.removeFirst()
        if !segments.contains(where: { if case .file = $0 { true } else { false } }) {
          try spill.reset()
        }
      }
      return chunk
    }
  }

  private func resume(_ waiting: CheckedContinuation<Data?, any Error>, at error: (any Error)?) {
    if let error {
      waiting.resume(throwing: error)
    } else {
      waiting.resume(returning: nil)
    }
  }
}
