import Foundation

/// The tasks a client's calls leave running once they have returned (a cache's revalidation in
/// the background), cancelled together when the client goes away: nothing a call starts outlives
/// its client. It holds the tasks, never the client.
final class BackgroundWork: Sendable {
  private struct State: Sendable {
    var tasks: [UUID: Task<Void, Never>] = [:]
    var cancelled = false
  }

  private let state = Locked(State())

  /// Run `operation` in a detached task of its own (it inherits nothing of the call that starts
  /// it) until it ends or the work is cancelled; `false` (and nothing runs) once the work is
  /// cancelled.
  @discardableResult
  func start(_ operation: @escaping @Sendable () async -> Void) -> Bool {
    let id = UUID()
    return state.withLock { state in
      guard !state.cancelled else { return false }
      // Registered under the lock the task takes to leave: it cannot leave first.
      state.tasks[id] = Task.detached { [weak self] in
        await operation()
        self?.state.withLock { _ = $0.tasks.removeValue(forKey: id) }
      }
      return true
    }
  }

  /// How many tasks are running.
  var count: Int {
    state.withLock { $0.tasks.count }
  }

  /// Cancel every task, and any started later.
  func cancelAll() {
    let tasks = state.withLock { state in
      state.cancelled = true
      defer { state.tasks = [:] }
      return Array(state.tasks.values)
    }
    for task in tasks {
      task.cancel()
    }
  }
}
