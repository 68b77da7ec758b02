import Foundation
import Testing

/// A trait that runs each test it marks on a thread of its own rather than on one of Swift's
/// cooperative threads, for tests that compute for a long time without suspending (a 35,000-line
/// file parsed, a million entries inserted).
///
/// The cooperative pool has one thread per core: two on a 2-core machine. Swift Testing starts
/// every test at once, so a test that computes for seconds on the pool holds one of those two
/// threads the whole time, and every test waiting to resume (an answer arrived, a timer fired)
/// waits behind it; two such tests stop the rest of the run. On a thread of its own, the test
/// shares the cores with the pool through the system's scheduler instead.
///
/// Mark a suite or a test: `@Suite(.timeLimit(.minutes(3)), .ownThread)`.
package struct OwnThreadTrait: TestTrait, SuiteTrait, TestScoping {
  package var isRecursive: Bool { true }

  package func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
    testCase == nil ? nil : self
  }

  package func provideScope(
    for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
  ) async throws {
    if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) {
      try await withTaskExecutorPreference(OwnThreadExecutor()) { try await function() }
    } else {
      try await function()
    }
  }
}

extension Trait where Self == OwnThreadTrait {
  /// Run each test on a thread of its own, not on Swift's cooperative pool (see
  /// ``OwnThreadTrait``).
  package static var ownThread: Self { Self() }
}

/// A task executor whose jobs run one after another on a serial dispatch queue, which the system
/// gives a thread of its own (outside the cooperative pool).
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
package final class OwnThreadExecutor: TaskExecutor {
  /// Set on the executor's queue: `DispatchQueue.getSpecific(key: OwnThreadExecutor.key)` is
  /// `true` in a job it runs.
  package static let key = DispatchSpecificKey<Bool>()

  private let queue = DispatchQueue(label: "errand-tests.own-thread")

  package init() {
    queue.setSpecific(key: Self.key, value: true)
  }

  package func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let executor = asUnownedTaskExecutor()
    queue.async { job.runSynchronously(on: executor) }
  }
}
