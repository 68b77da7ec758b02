#if canImport(Darwin)
  import os
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A value guarded by a lock, shared by the package's modules (`package` access, not public API).
///
/// It is `Sendable` only when its value is, as swift-nio's `NIOLockedValueBox`: the lock makes
/// access exclusive, but a non-`Sendable` value handed out of ``withLock(_:)`` could still be
/// shared. Copies share one value and one lock: a `Locked` is a reference to both, made in one
/// allocation (the value and an `os_unfair_lock` or a `pthread_mutex_t` side by side), where a
/// class holding an `NSLock` took five on Linux, for every call.
package struct Locked<Value> {
  private let storage: LockedStorage<Value>

  package init(_ value: Value) {
    storage = LockedStorage.make(value)
  }

  /// Run `body` with exclusive access to the value. The lock is not recursive (no more than the
  /// `NSLock` before it): `body` must not call `withLock` on this `Locked` or a copy of it, which
  /// would deadlock.
  package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    try storage.withLock(body)
  }
}

/// `@unchecked Sendable` is safe because every access to the value goes through `withLock`,
/// which holds the lock for the whole access, and the value itself is `Sendable`. The compiler
/// cannot check it: the value lives in a `ManagedBuffer`'s header (not `Sendable`), and only the
/// lock keeps its accesses apart.
extension Locked: @unchecked Sendable where Value: Sendable {}

/// The value, with the lock as the buffer's one element: `ManagedBuffer` gives the lock a stable
/// address for as long as the object lives, which a lock that must not move needs.
private final class LockedStorage<Value>: ManagedBuffer<Value, LockedStorage.Primitive> {
  #if canImport(Darwin)
    typealias Primitive = os_unfair_lock
  #else
    typealias Primitive = pthread_mutex_t
  #endif

  static func make(_ value: Value) -> LockedStorage<Value> {
    let buffer = create(minimumCapacity: 1) { _ in value }
    let storage = unsafeDowncast(buffer, to: LockedStorage<Value>.self)
    storage.withUnsafeMutablePointerToElements { lock in
      #if canImport(Darwin)
        lock.initialize(to: os_unfair_lock())
      #else
        lock.initialize(to: pthread_mutex_t())
        pthread_mutex_init(lock, nil)
      #endif
    }
    return storage
  }

  deinit {
    withUnsafeMutablePointerToElements { lock in
      #if !canImport(Darwin)
        pthread_mutex_destroy(lock)
      #endif
      lock.deinitialize(count: 1)
    }
  }

  func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    try withUnsafeMutablePointers { value, lock in
      #if canImport(Darwin)
        os_unfair_lock_lock(lock)
        defer { os_unfair_lock_unlock(lock) }
      #else
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
      #endif
      return try body(&value.pointee)
    }
  }
}
