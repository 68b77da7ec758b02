import Errand
import Foundation

/// Whether `operation` returned `true` within `seconds` of real time: a guard for probes whose
/// finding would be a hang, so that a hang fails the test instead of holding the run until its
/// time limit. Not a bound on how fast anything is: give it a margin a loaded machine never
/// needs (60 s for work that takes milliseconds: a test run on a busy 2-core machine queues a
/// resumed task behind hundreds of others for seconds).
///
/// Not a task group: a group waits for every child, and an operation stuck in a wait that
/// ignores cancellation (the very hang a probe looks for) would hold it for ever.
public func returnsInTime(
  seconds: Int, _ operation: @escaping @Sendable () async -> Bool
) async -> Bool {
  let waiting = Locked<CheckedContinuation<Bool, Never>?>(nil)
  let decide: @Sendable (Bool) -> Void = { value in
    waiting.withLock { held -> CheckedContinuation<Bool, Never>? in
      defer { held = nil }
      return held
    }?.resume(returning: value)
  }
  return await withCheckedContinuation { continuation in
    waiting.withLock { $0 = continuation }
    Task { decide(await operation()) }
    Task {
      try? await Task.sleep(for: .seconds(seconds))
      decide(false)
    }
  }
}
