import Foundation

/// Whether `condition` holds before the test ends: for a state no event announces (a count
/// inside a queue). Checked every millisecond for the first 100 checks, then every 10 ms, so
/// many waits at once leave the processor to the work they wait for. Not a bound on how fast
/// anything is: the wait ends when the condition holds, when the test's task is cancelled (its
/// time limit), or after 60,100 checks (ten minutes of sleeping at the least), which only turns a
/// process with no time limit that would hang into a failure.
package func eventually(_ condition: @Sendable () -> Bool) async -> Bool {
  for check in 0..<60_100 {
    if Task.isCancelled { break }
    if condition() { return true }
    try? await Task.sleep(for: .milliseconds(check < 100 ? 1 : 10))
  }
  return condition()
}

/// Run `work` on a thread of its own (not one of Swift's cooperative pool, whose threads every
/// task of the process waits for), and wait for it without holding a thread.
package func onThread(_ work: @escaping @Sendable () -> Void) async {
  await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
    Thread.detachNewThread {
      work()
      continuation.resume()
    }
  }
}
