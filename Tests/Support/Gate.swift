import Dispatch

/// Holds every thread that passes it until a test opens it; open, it lets every thread through.
/// For a probe that holds a queue's work where it wants it (a delegate's queue, a server's
/// answer) until it has set up what it means to test.
package final class Gate: Sendable {
  private let semaphore = DispatchSemaphore(value: 0)

  package init() {}

  /// Wait until the gate is open.
  package func pass() {
    semaphore.wait()
    semaphore.signal()
  }

  /// Open the gate for good; opening it again does nothing more.
  package func open() {
    semaphore.signal()
  }
}

/// Holds every task that waits for it, suspended and ignoring cancellation, until a test opens
/// it; open, it lets every task through at once. The async counterpart of ``Gate``.
package actor AsyncGate {
  private var isOpen = false
  private var waiters: [CheckedContinuation<Void, Never>] = []

  package init() {}

  /// Wait until the gate is open.
  package func wait() async {
    if isOpen { return }
    await withCheckedContinuation { waiters.append($0) }
  }

  /// Open the gate for good.
  package func open() {
    isOpen = true
    for waiter in waiters { waiter.resume() }
    waiters = []
  }
}
