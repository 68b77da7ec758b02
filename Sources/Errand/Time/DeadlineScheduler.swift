import Foundation

/// One timer for every request deadline on the continuous clock: registering a deadline is a heap
/// insert under a lock and cancelling it drops its handler, instead of a Dispatch source per request
/// (which also piled up 60-second timers under load).
///
/// Cancelled entries leave the heap when they come due, or sooner: once fewer than a quarter of
/// a large heap's entries are still wanted, the heap is rebuilt from those, so a stream of answered
/// requests with 60-second timeouts does not keep a minute of dead entries.
///
/// `@unchecked Sendable` is safe: all mutable state is guarded by `lock`; handlers run on `queue`
/// outside the lock.
final class DeadlineScheduler: @unchecked Sendable {
  static let shared = DeadlineScheduler()

  private struct Entry {
    var deadline: UInt64
    var id: UInt64
  }

  private let lock = NSLock()
  private let queue = DispatchQueue(label: "errand.deadlines")
  private let timer: any DispatchSourceTimer
  private var heap: [Entry] = []
  private var handlers: [UInt64: @Sendable () -> Void] = [:]
  private var nextID: UInt64 = 0
  private var armedFor: UInt64 = .max

  init() {
    timer = DispatchSource.makeTimerSource(queue: queue)
    timer.setEventHandler { [unowned self] in fire() }
    timer.schedule(deadline: .distantFuture)
    timer.resume()
  }

  deinit {
    timer.cancel()
  }

  /// Run `handler` after `delay`, unless cancelled first.
  /// - Returns: An identifier for ``cancel(_:)``.
  func schedule(after delay: Duration, _ handler: @escaping @Sendable () -> Void) -> UInt64 {
    // Saturates: a delay of centuries (`.seconds(Int64.max)`, say) means "never", not a crash.
    let nanoseconds = UInt64(min(max(0, delay / .nanoseconds(1)), 9.0e18))
    let (sum, overflow) = DispatchTime.now().uptimeNanoseconds.addingReportingOverflow(nanoseconds)
    let deadline = overflow ? UInt64.max - 1 : min(sum, UInt64.max - 1)
    return lock.withLock {
      nextID &+= 1
      handlers[nextID] = handler
      push(Entry(deadline: deadline, id: nextID))
      if deadline < armedFor {
        armedFor = deadline
        timer.schedule(deadline: DispatchTime(uptimeNanoseconds: deadline))
      }
      return nextID
    }
  }

  /// Forget a deadline; its handler will not run.
  func cancel(_ id: UInt64) {
    lock.withLock {
      _ = handlers.removeValue(forKey: id)
      if heap.count >= 1024, handlers.count < heap.count / 4 {
        compact()
      }
    }
  }

  /// How many entries the heap holds, cancelled ones included (for tests).
  var pendingEntries: Int {
    lock.withLock { heap.count }
  }

  /// Drop cancelled entries and restore the heap order. Called with the lock held.
  private func compact() {
    heap.removeAll { handlers[$0.id] == nil }
    for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) {
      siftDown(from: index)
    }
  }

  private func fire() {
    let due = lock.withLock { () -> [@Sendable () -> Void] in
      let now = DispatchTime.now().uptimeNanoseconds
      var due: [@Sendable () -> Void] = []
      while let first = heap.first, first.deadline <= now {
        pop()
        if let handler = handlers.removeValue(forKey: first.id) {
          due.append(handler)
        }
      }
      armedFor = heap.first?.deadline ?? .max
      timer.schedule(
        deadline: armedFor == .max ? .distantFuture : DispatchTime(uptimeNanoseconds: armedFor))
      return due
    }
    for handler in due {
      handler()
    }
  }

  private func push(_ entry: Entry) {
    heap.append(entry)
    var child = heap.count - 1
    while child > 0 {
      let parent = (child - 1) / 2
      guard heap[child].deadline < heap[parent].deadline else { break }
      heap.swapAt(child, parent)
      child = parent
    }
  }

  private func pop() {
    heap.swapAt(0, heap.count - 1)
    heap.removeLast()
    siftDown(from: 0)
  }

  private func siftDown(from index: Int) {
    var parent = index
    while true {
      let left = 2 * parent + 1
      let right = left + 1
      var smallest = parent
      if left < heap.count && heap[left].deadline < heap[smallest].deadline { smallest = left }
      if right < heap.count && heap[right].deadline < heap[smallest].deadline { smallest = right }
      guard smallest != parent else { return }
      heap.swapAt(parent, smallest)
      parent = smallest
    }
  }
}
