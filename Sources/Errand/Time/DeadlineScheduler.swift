import Foundation

/// One timer for every request deadline on the continuous clock: registering a deadline is a heap
/// insert under a lock and cancelling it drops its handler, instead of a Dispatch source per request
/// (which also piled up 60-second timers under load).
///
/// Cancelled entries leave the heap when they come due, or sooner: once fewer than a quarter of
/// a large heap's entries are still wanted, the heap is rebuilt from those, so a stream of answered
/// requests with 60-second timeouts does not keep a minute of dead entries.
///
/// All mutable state (the heap, the handlers, the instant the timer is armed for) is one value in
/// a `Locked`; handlers run on `queue` outside the lock.
final class DeadlineScheduler: Sendable {
  static let shared = DeadlineScheduler()

  private struct Entry {
    var deadline: UInt64
    var id: UInt64
  }

  /// The deadlines, in a binary min-heap by `deadline`, and what runs at each.
  private struct State {
    var heap: [Entry] = []
    var handlers: [UInt64: @Sendable () -> Void] = [:]
    var nextID: UInt64 = 0
    var armedFor: UInt64 = .max

    /// Drop cancelled entries and restore the heap order.
    mutating func compact() {
      heap.removeAll { handlers[$0.id] == nil }
      for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) {
        siftDown(from: index)
      }
    }

    mutating func push(_ entry: Entry) {
      heap.append(entry)
      var child = heap.count - 1
      while child > 0 {
        let parent = (child - 1) / 2
        guard heap[child].deadline < heap[parent].deadline else { break }
        heap.swapAt(child, parent)
        child = parent
      }
    }

    mutating func pop() {
      heap.swapAt(0, heap.count - 1)
      heap.removeLast()
      siftDown(from: 0)
    }

    mutating func siftDown(from index: Int) {
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

  private let state = Locked(State())
  private let queue = DispatchQueue(label: "errand.deadlines")
  /// Armed under the lock, so that the instant it is armed for is always `armedFor`. Dispatch
  /// sources may be used from any thread, but their Swift protocol is not declared `Sendable`:
  /// hence `nonisolated(unsafe)`, on this property alone.
  nonisolated(unsafe) private let timer: any DispatchSourceTimer

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
    schedule(after: delay, from: DispatchTime.now(), handler)
  }

  /// Run `handler` `delay` after `start`, unless cancelled first.
  /// - Returns: An identifier for ``cancel(_:)``.
  func schedule(
    after delay: Duration, from start: DispatchTime, _ handler: @escaping @Sendable () -> Void
  ) -> UInt64 {
    // Saturates: a delay of centuries (`.seconds(Int64.max)`, say) means "never", not a crash.
    let nanoseconds = UInt64(min(max(0, delay / .nanoseconds(1)), 9.0e18))
    let (sum, overflow) = start.uptimeNanoseconds.addingReportingOverflow(nanoseconds)
    let deadline = overflow ? UInt64.max - 1 : min(sum, UInt64.max - 1)
    return state.withLock { state in
      state.nextID &+= 1
      state.handlers[state.nextID] = handler
      state.push(Entry(deadline: deadline, id: state.nextID))
      if deadline < state.armedFor {
        state.armedFor = deadline
        timer.schedule(deadline: DispatchTime(uptimeNanoseconds: deadline))
      }
      return state.nextID
    }
  }

  /// Forget a deadline; its handler will not run.
  func cancel(_ id: UInt64) {
    state.withLock { state in
      _ = state.handlers.removeValue(forKey: id)
      if state.heap.count >= 1024, state.handlers.count < state.heap.count / 4 {
        state.compact()
      }
    }
  }

  /// How many entries the heap holds, cancelled ones included (for tests).
  var pendingEntries: Int {
    state.withLock { $0.heap.count }
  }

  private func fire() {
    let due = state.withLock { state -> [@Sendable () -> Void] in
      let now = DispatchTime.now().uptimeNanoseconds
      var due: [@Sendable () -> Void] = []
      while let first = state.heap.first, first.deadline <= now {
        state.pop()
        if let handler = state.handlers.removeValue(forKey: first.id) {
          due.append(handler)
        }
      }
      state.armedFor = state.heap.first?.deadline ?? .max
      timer.schedule(
        deadline: state.armedFor == .max
          ? .distantFuture : DispatchTime(uptimeNanoseconds: state.armedFor))
      return due
    }
    for handler in due {
      handler()
    }
  }
}
