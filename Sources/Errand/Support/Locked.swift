import Foundation

/// A value guarded by a lock, shared by the package's modules (`package` access, not public API).
///
/// It is `Sendable` only when its value is, as swift-nio's `NIOLockedValueBox`: the lock makes
/// access exclusive, but a non-`Sendable` value handed out of ``withLock(_:)`` could still be
/// shared.
package final class Locked<Value> {
  private let lock = NSLock()
  private var value: Value

  package init(_ value: Value) {
    self.value = value
  }

  /// Run `body` with exclusive access to the value.
  package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}

/// `@unchecked Sendable` is safe because every access to `value` goes through `withLock`, which
/// holds `lock` for the whole access, and the value itself is `Sendable`. The compiler cannot
/// check it: `value` is a stored `var`, and only the lock keeps its accesses apart.
extension Locked: @unchecked Sendable where Value: Sendable {}
