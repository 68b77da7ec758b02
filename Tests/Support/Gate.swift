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
