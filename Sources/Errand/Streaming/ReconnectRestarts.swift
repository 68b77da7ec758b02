import Foundation

/// What ``ReconnectingServerSentEvents/restart()`` reaches: the connection each loop reading the
/// stream has open, and the waits between connections. Each restart starts a new generation;
/// a connection or a wait of an older one ends. A loop its client cancelled is stopped alone
/// (``stop(reader:)``): a loop that starts later on the same stream runs.
final class ReconnectRestarts: Sendable {
  private struct State {
    var generation = 0
    var nextReader = 0
    /// The open connection of each loop, by reader.
    var open: [Int: ResponseStream] = [:]
    /// The waits that a restart ends, by a number of their own, with the loop that waits.
    var waiters: [Int: (reader: Int, continuation: CheckedContinuation<Void, Never>)] = [:]
    var nextWaiter = 0
    /// The loops the stream's client cancelled (``stop(reader:)``), until they go away.
    var stopped: Set<Int> = []
  }

  private let state = Locked(State())

  /// The current generation.
  var generation: Int {
    state.withLock { $0.generation }
  }

  /// How many open connections and waits are registered: none once no loop is reading.
  var registered: (connections: Int, waits: Int) {
    state.withLock { ($0.open.count, $0.waiters.count) }
  }

  /// A loop reading the stream, by number. When the last copy of its iterator goes away (the
  /// loop ended, or was left with `break` or a throw), its connection is forgotten: a stream
  /// read by many loops over its life registers none of theirs for ever.
  final class Reader: Sendable {
    let number: Int
    private let restarts: ReconnectRestarts

    fileprivate init(number: Int, restarts: ReconnectRestarts) {
      self.number = number
      self.restarts = restarts
    }

    deinit {
      restarts.forget(reader: number)
    }
  }

  /// A new loop reading the stream.
  func newReader() -> Reader {
    let number = state.withLock { state in
      defer { state.nextReader += 1 }
      return state.nextReader
    }
    return Reader(number: number, restarts: self)
  }

  /// Record `stream` as `reader`'s open connection, unless a restart came after `generation`
  /// or the loop was stopped.
  /// - Returns: Whether it was recorded; `false` when a restart or a stop came since.
  func adopt(_ stream: ResponseStream, reader: Int, generation: Int) -> Bool {
    state.withLock { state in
      guard state.generation == generation, !state.stopped.contains(reader) else { return false }
      state.open[reader] = stream
      return true
    }
  }

  /// `reader` has no open connection any more.
  func leave(reader: Int) {
    _ = state.withLock { $0.open.removeValue(forKey: reader) }
  }

  /// `reader` has gone: nothing of it is kept.
  fileprivate func forget(reader: Int) {
    let open = state.withLock { state in
      state.stopped.remove(reader)
      return state.open.removeValue(forKey: reader)
    }
    _ = open
  }

  /// Whether the stream's client cancelled loop `reader`: it ends instead of connecting again.
  func isStopped(reader: Int) -> Bool {
    state.withLock { $0.stopped.contains(reader) }
  }

  /// End loop `reader` for good (its client cancelled it): its open connection is cancelled and
  /// its wait ends, and it then ends with ``APIError/cancelled(_:)`` instead of connecting again.
  /// The stream's other loops, and the loops that start later, go on.
  func stop(reader: Int) {
    let (stream, waiters) = state.withLock { state in
      state.stopped.insert(reader)
      let waiters = state.waiters.filter { $0.value.reader == reader }
      for number in waiters.keys { state.waiters.removeValue(forKey: number) }
      return (state.open.removeValue(forKey: reader), waiters.values.map(\.continuation))
    }
    stream?.cancel()
    for waiter in waiters { waiter.resume() }
  }

  /// Start a new generation: cancel every open connection and end every wait.
  func restart() {
    let (streams, waiters) = state.withLock { state in
      state.generation += 1
      defer {
        state.open = [:]
        state.waiters = [:]
      }
      return (Array(state.open.values), state.waiters.values.map(\.continuation))
    }
    for stream in streams { stream.cancel() }
    for waiter in waiters { waiter.resume() }
  }

  /// Sleep for `delay` on `clock`, or until a restart after `generation` or a stop of loop
  /// `reader`, whichever comes first.
  /// - Throws: `CancellationError` when the task is cancelled.
  func wait(
    for delay: Duration, on clock: any Clock<Duration>, unlessPast generation: Int, reader: Int
  ) async throws {
    try await wait(unlessPast: generation, reader: reader) { try await clock.sleep(for: delay) }
  }

  /// Wait for `event` to return, or until a restart after `generation` or a stop of loop
  /// `reader`, whichever comes first.
  /// - Throws: What `event` throws; `CancellationError` when the task is cancelled.
  func wait(
    unlessPast generation: Int, reader: Int,
    for event: @escaping @Sendable () async throws -> Void
  ) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { try await event() }
      group.addTask { await self.restarted(after: generation, reader: reader) }
      defer { group.cancelAll() }
      try await group.next()
      try Task.checkCancellation()
    }
  }

  /// Return once a restart comes after `generation`, loop `reader` is stopped, or the task is
  /// cancelled.
  private func restarted(after generation: Int, reader: Int) async {
    let waiter = state.withLock { state in
      defer { state.nextWaiter += 1 }
      return state.nextWaiter
    }
    await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        // Checked under the lock the cancellation handler takes, so a wait that starts in a
        // cancelled task, or after the restart, never stays registered.
        let now = state.withLock { state in
          guard state.generation == generation, !state.stopped.contains(reader), !Task.isCancelled
          else { return true }
          state.waiters[waiter] = (reader, continuation)
          return false
        }
        if now { continuation.resume() }
      }
    } onCancel: {
      state.withLock { $0.waiters.removeValue(forKey: waiter) }?.continuation.resume()
    }
  }
}
