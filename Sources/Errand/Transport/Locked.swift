import Foundation

/// A value guarded by a lock, shared by the package's modules (`package` access, not public API).
///
/// `@unchecked Sendable` is safe because every access to `value` goes through `withLock`, which
/// holds `lock` for the whole access, and the value never escapes the closure by reference.
package final class Locked<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Value

  package init(_ value: Value) {
    self.value = value
  }

  package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}
