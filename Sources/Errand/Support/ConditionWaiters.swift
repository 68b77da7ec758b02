import Foundation

/// Tasks waiting for a condition on a value kept in a ``Locked``, shared by the test kit's waits
/// (`TestClock`, `LoopbackServer`): each is resumed with `true` by the change that makes its
/// condition hold (``Locked/change(_:waiters:_:)``), or with `false` by its timeout or by
/// cancellation (``Locked/wait(on:timeout:until:)``). Nothing polls, and the timeout is a Dispatch
/// timer, which fires even while every thread of the cooperative pool is busy.
package struct ConditionWaiters<Value>: Sendable {
  private struct Entry: Sendable {
    var condition: @Sendable (Value) -> Bool
    var continuation: CheckedContinuation<Bool, Never>
  }

  private var entries: [UUID: Entry] = [:]

  package init() {}

  fileprivate mutating func add(
    _ id: UUID, _ condition: @escaping @Sendable (Value) -> Bool,
    _ continuation: CheckedContinuation<Bool, Never>
  ) {
    entries[id] = Entry(condition: condition, continuation: continuation)
  }

  fileprivate mutating func remove(_ id: UUID) -> CheckedContinuation<Bool, Never>? {
    entries.removeValue(forKey: id)?.continuation
  }

  /// Take out the waiters whose condition holds of `value`.
  fileprivate mutating func satisfied(by value: Value) -> [CheckedContinuation<Bool, Never>] {
    let ready = entries.filter { $0.value.condition(value) }
    for id in ready.keys {
      entries[id] = nil
    }
    return ready.values.map(\.continuation)
  }
}

extension Locked where Value: Sendable {
  /// Change the value, then resume every waiter whose condition now holds.
  /// - Parameters:
  ///   - waiters: Where the value keeps its waiters.
  ///   - body: The change.
  /// - Returns: What `body` returns.
  package func change<Result>(
    _ waiters: WritableKeyPath<Value, ConditionWaiters<Value>>,
    _ body: (inout Value) throws -> Result
  ) rethrows -> Result {
    let (result, ready) = try withLock { value in
      let result = try body(&value)
      return (result, value[keyPath: waiters].satisfied(by: value))
    }
    for continuation in ready {
      continuation.resume(returning: true)
    }
    return result
  }

  /// Wait until `condition` holds of the value, changed through ``change(_:_:)``.
  /// - Parameters:
  ///   - waiters: Where the value keeps its waiters.
  ///   - timeout: The longest to wait, in real time.
  ///   - condition: What to wait for.
  /// - Returns: `true` once it holds; `false` when the timeout ran out or the task was cancelled
  ///   first.
  package func wait(
    on waiters: any WritableKeyPath<Value, ConditionWaiters<Value>> & Sendable, timeout: Duration,
    until condition: @escaping @Sendable (Value) -> Bool
  ) async -> Bool {
    let id = UUID()
    let end: @Sendable () -> Void = { [self] in
      withLock { $0[keyPath: waiters].remove(id) }?.resume(returning: false)
    }
    return await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        let ready = withLock { value -> Bool? in
          if condition(value) { return true }
          if Task.isCancelled { return false }
          value[keyPath: waiters].add(id, condition, continuation)
          return nil
        }
        if let ready {
          continuation.resume(returning: ready)
          return
        }
        let nanoseconds = Int(min(max(0, timeout / .nanoseconds(1)), 1e15))
        DispatchQueue.global().asyncAfter(
          deadline: .now() + .nanoseconds(nanoseconds), execute: end)
      }
    } onCancel: {
      end()
    }
  }
}
