#if canImport(FoundationNetworking)
  import Foundation
  import FoundationNetworking
  import TestSupport
  import Testing

  @testable import Errand

  /// Attacks on the flow control of `DelegateQueue` (URLSession's delegate queue on Linux), with
  /// threads standing in for URLSession's work queue: a caller that waits must always go on once
  /// the delegate has worked the backlog off, whoever else waits, and no callback is lost or runs
  /// out of order.
  @Suite(.timeLimit(.minutes(3))) struct DelegateQueueHostileTests {
    /// URLSession's work queue and a thread that calls `flush(completionHandler:)` or
    /// `reset(completionHandler:)` on a session (from a Dispatch queue, not a Swift task) may
    /// both wait for the backlog at once: both must go on once it is worked off, not only the
    /// one that happened to be woken.
    @Test func twoCallersThatWaitAtOnceBothGoOn() async throws {
      let queue = DelegateQueue(backlogLimit: 2, resumeBelow: 0, stallAllowance: 600)
      let gate = Gate()
      queue.addOperation { gate.pass() }
      queue.addOperation {}
      let ran = Locked(0)
      let callers = (1...2).map { _ in
        Task.detached {
          await onThread {
            queue.addOperation { ran.withLock { $0 += 1 } }
          }
        }
      }
      try #require(await eventually { queue.backlogState.waitingCallers == 2 })
      gate.open()
      let wentOn = await returnsInTime(seconds: 60) {
        for caller in callers { await caller.value }
        return true
      }
      #expect(wentOn, "a caller still waits: \(queue.backlogState)")
      try #require(await eventually { queue.backlogState.pending == 0 })
      #expect(ran.withLock { $0 } == 2)
    }

    /// Every block runs once, and the blocks one thread adds run in the order it added them,
    /// while that thread keeps being held and let go (URLSession's work queue), another adds
    /// from a Swift task (never held) and the delegate's own blocks add more (never held).
    @Test func noCallbackIsLostOrReorderedWhileCallersAreHeld() async throws {
      let queue = DelegateQueue(backlogLimit: 8, resumeBelow: 2, stallAllowance: 600)
      let count = 2_000
      let log = Locked<[String: [Int]]>([:])
      let record: @Sendable (String, Int) -> Void = { source, index in
        log.withLock { $0[source, default: []].append(index) }
      }
      let held = Task.detached {
        await onThread {
          for index in 0..<count {
            queue.addOperation {
              record("held", index)
              if index.isMultiple(of: 10) {
                queue.addOperation { record("nested", index / 10) }
              }
            }
          }
        }
      }
      let unheld = Task.detached {
        for index in 0..<count {
          queue.addOperation { record("task", index) }
          if index.isMultiple(of: 100) { await Task.yield() }
        }
      }
      let added = await returnsInTime(seconds: 60) {
        await held.value
        await unheld.value
        return true
      }
      try #require(added, "a caller was never let go: \(queue.backlogState)")
      try #require(await eventually { queue.backlogState.pending == 0 })
      let runs = log.withLock { $0 }
      #expect(runs["held"] == Array(0..<count))
      #expect(runs["task"] == Array(0..<count))
      #expect(runs["nested"] == Array(0..<(count / 10)))
    }
  }
#endif
