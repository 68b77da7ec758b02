import Foundation

/// The calls one client is running, each with what ends it: for ``APIClient/cancelAll()``,
/// ``APIClient/cancelAll(tagged:)`` and ``APIClient/inFlight``. A call registers when it starts
/// and leaves when it ends; a cancellation that comes before the call has said how to end it is
/// kept, and the call ends as soon as it does.
final class CallRegistry: Sendable {
  private struct Entry: Sendable {
    var call: InFlightCall
    /// What ends the call, once it has said; `nil` before.
    var cancel: (@Sendable () -> Void)?
    /// Whether it was cancelled (before it could be ended, or since).
    var cancelled = false
    /// What ends each of the call's waits that Errand runs in the caller's task (the
    /// transport's, a limit's, a backoff's), by number: see ``onCancel(_:_:)``.
    var waits: [(number: UInt64, end: @Sendable () -> Void)] = []
  }

  private struct State: Sendable {
    var next: UInt64 = 1
    var entries: [UInt64: Entry] = [:]
    var nextWait: UInt64 = 0
  }

  private let state = Locked(State())

  /// Register a call that starts now.
  /// - Returns: Its number, to pass to the other methods.
  func register(endpoint: String, tags: Set<String>, kind: InFlightCall.Kind) -> UInt64 {
    state.withLock { state in
      let id = state.next
      state.next += 1
      state.entries[id] = Entry(
        call: InFlightCall(id: id, endpoint: endpoint, tags: tags, kind: kind, started: Date()))
      return id
    }
  }

  /// Say how call `id` ends now (its task, then its body); runs `cancel` at once when the call
  /// was cancelled already.
  func setCancel(_ id: UInt64, _ cancel: @escaping @Sendable () -> Void) {
    let now = state.withLock { state -> Bool in
      guard state.entries[id] != nil else { return false }
      state.entries[id]?.cancel = cancel
      return state.entries[id]?.cancelled == true
    }
    if now { cancel() }
  }

  /// Run `end` when call `id` is cancelled through the registry: at once when it was already,
  /// never when it has left the list.
  /// - Returns: What forgets `end`; call it once the wait is over.
  func onCancel(_ id: UInt64, _ end: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
    enum Outcome {
      case armed(UInt64)
      case now, gone
    }
    let outcome = state.withLock { state -> Outcome in
      guard let entry = state.entries[id] else { return .gone }
      if entry.cancelled { return .now }
      let number = state.nextWait
      state.nextWait += 1
      state.entries[id]?.waits.append((number, end))
      return .armed(number)
    }
    switch outcome {
    case .armed(let number):
      return { [self] in
        state.withLock { $0.entries[id]?.waits.removeAll { $0.number == number } }
      }
    case .now:
      end()
      return {}
    case .gone:
      return {}
    }
  }

  /// Whether call `id` was cancelled through the registry.
  func isCancelled(_ id: UInt64) -> Bool {
    state.withLock { $0.entries[id]?.cancelled ?? false }
  }

  /// Call `id` ended: it is no longer listed.
  func remove(_ id: UInt64) {
    _ = state.withLock { $0.entries.removeValue(forKey: id) }
  }

  /// Call `id` ended: it is no longer listed.
  /// - Returns: Whether it was cancelled through the registry before it left, in the same step,
  ///   so that a call ``cancel(where:)`` counted always learns it was cancelled.
  func finish(_ id: UInt64) -> Bool {
    state.withLock { $0.entries.removeValue(forKey: id) }?.cancelled ?? false
  }

  /// Call `id` is now known by `endpoint` and `tags` (a reconnecting event stream, listed before
  /// its first endpoint was made). A cancellation by a tag that came before is not repeated.
  func describe(_ id: UInt64, endpoint: String, tags: Set<String>) {
    state.withLock { state in
      guard let call = state.entries[id]?.call else { return }
      state.entries[id]?.call = InFlightCall(
        id: id, endpoint: endpoint, tags: tags, kind: call.kind, started: call.started)
    }
  }

  /// End every listed call for which `matches` holds.
  /// - Returns: How many calls were cancelled.
  func cancel(where matches: (InFlightCall) -> Bool) -> Int {
    let (count, cancels) = state.withLock { state -> (Int, [@Sendable () -> Void]) in
      var cancels: [@Sendable () -> Void] = []
      var count = 0
      for (id, entry) in state.entries where !entry.cancelled && matches(entry.call) {
        state.entries[id]?.cancelled = true
        state.entries[id]?.waits = []
        count += 1
        cancels += entry.waits.map(\.end)
        if let cancel = entry.cancel { cancels.append(cancel) }
      }
      return (count, cancels)
    }
    for cancel in cancels { cancel() }
    return count
  }

  /// How many waits the listed calls have registered (``onCancel(_:_:)``) and not forgotten yet:
  /// for tests, since a wait that never forgets its handler grows its call's entry for ever.
  var waitCount: Int {
    state.withLock { $0.entries.values.reduce(0) { $0 + $1.waits.count } }
  }

  /// The calls running now, oldest first.
  var calls: [InFlightCall] {
    state.withLock { $0.entries.values.map(\.call) }.sorted { $0.id < $1.id }
  }
}
