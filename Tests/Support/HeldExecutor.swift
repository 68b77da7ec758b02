import Errand
import Foundation

/// A task executor that holds the jobs of the tasks preferring it until the test lets them run
/// (on a queue of their own), so that a test can act between a task being resumed and the task
/// running on: the moment a call is given its slot, say.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
package final class HeldExecutor: TaskExecutor {
  private struct State {
    var holding = false
    var held: [UnownedJob] = []
  }

  private let state = Locked(State())
  private let queue = DispatchQueue(label: "held-executor")

  package init() {}

  package func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let runs = state.withLock { state -> Bool in
      if state.holding {
        state.held.append(job)
        return false
      }
      return true
    }
    if runs { run(job) }
  }

  /// Hold every job from now on.
  package func hold() {
    state.withLock { $0.holding = true }
  }

  /// How many jobs are held.
  package var heldCount: Int {
    state.withLock { $0.held.count }
  }

  /// Run the held jobs, and every job from now on.
  package func release() {
    let held = state.withLock { state -> [UnownedJob] in
      state.holding = false
      defer { state.held = [] }
      return state.held
    }
    for job in held { run(job) }
  }

  private func run(_ job: UnownedJob) {
    let executor = asUnownedTaskExecutor()
    queue.async { job.runSynchronously(on: executor) }
  }
}
