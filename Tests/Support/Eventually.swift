import Foundation

/// Whether `condition` holds within 30 s, checked every millisecond: for a state no event
/// announces (a count inside a queue). Not a bound on how fast anything is: the 30 s only turn
/// a condition that never comes into a failure.
package func eventually(_ condition: @Sendable () -> Bool) async -> Bool {
  for _ in 0..<30_000 {
    if condition() { return true }
    try? await Task.sleep(for: .milliseconds(1))
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
