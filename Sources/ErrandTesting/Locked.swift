import Foundation

/// A value guarded by a lock.
///
/// `@unchecked Sendable` is safe because every access to `value` goes through `withLock`, which
/// holds `lock` for the whole access, and the value never escapes the closure by reference.
final class Locked<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) {
    self.value = value
  }

  func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}
