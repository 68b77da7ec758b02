#if canImport(FoundationNetworking)
  import Foundation
  import TestSupport
  import Testing

  @testable import Errand

  /// The delegate queue of `URLSessionTransport` on Linux: the flow control that keeps
  /// FoundationNetworking from queueing a body in memory ahead of the session delegate. A caller
  /// that would add one callback too many waits until the backlog is almost worked off, except
  /// where waiting could hold up the delegate or Swift concurrency.
  @Suite(.timeLimit(.minutes(3))) struct DelegateQueueTests {
    @Test func aCallerWaitsWhileTheBacklogIsFullUntilItIsAlmostEmpty() async throws {
      let queue = DelegateQueue(backlogLimit: 4, resumeBelow: 1, stallAllowance: 600)
      let gate = Gate()
      let log = Locked<[String]>([])
      for index in 1...4 {
        queue.addOperation {
          gate.pass()
          log.withLock { $0.append("ran \(index)") }
        }
      }
      #expect(queue.backlogState.pending == 4)
      let caller = Task.detached {
        await onThread {
          queue.addOperation { log.withLock { $0.append("ran 5") } }
          log.withLock { $0.append("added 5") }
        }
      }
      try #require(await eventually { queue.backlogState.callerWaits })
      #expect(log.withLock { $0 }.isEmpty)
      gate.open()
      await caller.value
      try #require(await eventually { queue.backlogState.pending == 0 })
      let events = log.withLock { $0 }
      #expect(events.filter { $0.hasPrefix("ran") } == (1...5).map { "ran \($0)" })
      // The caller went on once the backlog was down to one: three of the four had run.
      let added = try #require(events.firstIndex(of: "added 5"))
      #expect(added >= 3, "\(events)")
      #expect(!queue.backlogState.callerWaits)
    }

    /// A callback that adds callbacks (URLSession on the delegate's queue) is never held: the
    /// backlog could not shrink while it waits.
    @Test func blocksThatAddBlocksNeverWait() async {
      let queue = DelegateQueue(backlogLimit: 2, resumeBelow: 1, stallAllowance: 600)
      let finished = await returnsInTime(seconds: 30) {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
          queue.addOperation {
            for index in 1...10 {
              queue.addOperation {
                if index == 10 { continuation.resume() }
              }
            }
          }
        }
        return true
      }
      #expect(finished)
    }

    /// A caller on a thread of Swift's cooperative pool is never held: the pool has as many
    /// threads as cores, and every task of the process waits for them.
    @Test func aCallerInATaskNeverWaits() async throws {
      let queue = DelegateQueue(backlogLimit: 2, resumeBelow: 1, stallAllowance: 600)
      let gate = Gate()
      let added = await returnsInTime(seconds: 30) {
        for _ in 1...10 {
          queue.addOperation { gate.pass() }
        }
        return true
      }
      #expect(added)
      #expect(queue.backlogState.pending == 10)
      gate.open()
      try #require(await eventually { queue.backlogState.pending == 0 })
    }

    /// A delegate that runs nothing (its callback waits for URLSession's work queue, which waits
    /// here) holds the caller for the allowance once, then no more while it runs nothing.
    @Test func aDelegateThatRunsNothingHoldsTheCallerForTheAllowanceOnly() async throws {
      let queue = DelegateQueue(backlogLimit: 2, resumeBelow: 1, stallAllowance: 0.05)
      let gate = Gate()
      queue.addOperation { gate.pass() }
      queue.addOperation {}
      let added = await returnsInTime(seconds: 30) {
        await onThread {
          for _ in 1...5 { queue.addOperation {} }
        }
        return true
      }
      #expect(added)
      #expect(queue.backlogState.pending == 7)
      gate.open()
      try #require(await eventually { queue.backlogState.pending == 0 })
    }
  }
#endif
