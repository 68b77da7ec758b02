import Foundation

#if canImport(FoundationNetworking)

  /// The queue that runs ``URLSessionTransport``'s session delegate callbacks, and the flow
  /// control that FoundationNetworking lacks.
  ///
  /// On Linux, URLSession hands every delegate callback (each chunk of every body, each response,
  /// each completion) to its delegate queue with `addOperation(_:)`, from its internal work queue
  /// (one serial queue that every session in the process shares, on which libcurl reads the
  /// sockets), and reads on at once: it cannot pause a transfer, and nothing there waits for the
  /// delegate. Whenever the delegate falls behind the network (it writes a stalled reader's body
  /// to disk, slower than loopback delivers it, and slower still on a machine busy with other
  /// work), the chunks not yet delivered pile up in memory: a stalled reader of a 256 MB body
  /// over loopback had 100–150 MB of them queued at once, and 1 GB made the process grow by
  /// 500–790 MB.
  ///
  /// So the call that would add a callback while ``backlogLimit`` wait to run waits, on
  /// URLSession's work queue, until the delegate has worked the backlog down to
  /// ``resumeBelow``. While it waits libcurl reads nothing, the socket's buffers fill and TCP
  /// slows the server down: the transfer goes at the delegate's pace, with at most
  /// ``backlogLimit`` chunks of at most 16 KiB (libcurl's `CURL_MAX_WRITE_SIZE`, the most it hands
  /// FoundationNetworking at once) waiting in memory.
  ///
  /// The price: while URLSession waits here, every session of the process waits for its work
  /// queue, and Dispatch runs that queue's work session by session, each until it has none left.
  /// So the backlog goes down almost to nothing before URLSession reads on, and may then grow to
  /// the limit again (by default 256 KiB and 8 MiB): in between, libcurl reads at its own pace,
  /// which on a network slower than it empties the socket and lets the other sessions' work run.
  /// Measured on 2 cores, a call on another session beside a stalled reader of a body sent at
  /// about 250 MB/s waited up to 0.15–0.5 s, as without any wait (0.07–0.7 s); with waits at
  /// 1 MiB and half of it, up to 2–3 s, as long as the body took. A server that sends faster than
  /// FoundationNetworking reads holds the other sessions up either way: up to 1–4.6 s without the
  /// waits, 2–2.8 s with them, over loopback. It holds up the calls that wait for the work queue
  /// of its own session longer, until its socket has nothing left to read: over loopback, the
  /// cancellation of a task (`URLSessionTask.cancel()`) may land only when the body ends or the
  /// server pauses, with these waits or without them.
  ///
  /// The wait lasts as long as the delegate takes to work the backlog off, however slow it is,
  /// as long as it keeps running callbacks: so nothing that runs here may take its time. Errand's
  /// delegate writes the body and answers at once; what could wait (an upload progress observer,
  /// the answer to an authentication challenge, which cancels the task and so waits for
  /// URLSession's work queue) runs on queues of its own.
  ///
  /// The wait is never made where it could hold up the delegate or Swift concurrency: not on the
  /// delegate's own queue, and not on a thread that runs a Swift task (a caller in async code
  /// that adds a block itself, such as `URLSession.flush(completionHandler:)`). Every caller that
  /// waits (URLSession's work queue, and a thread that calls `flush(completionHandler:)` or
  /// `reset(completionHandler:)`) goes on together. And the wait ends when the delegate has run
  /// nothing for ``stallAllowance``: a callback that waits for URLSession's work queue itself
  /// (cancelling, suspending or creating a task, invalidating a session) would otherwise never
  /// see it free again. The backlog may then grow until the delegate runs a callback, and is
  /// held again from then on.
  ///
  /// The blocks run on one serial Dispatch queue, in the order they were added, as a serial
  /// operation queue would run them, without an operation per block (tens of microseconds of
  /// processor time per request). Operations added as `Operation` objects still go through
  /// `OperationQueue`, uncounted (FoundationNetworking adds none).
  ///
  /// Linux only: on Apple platforms the session keeps its own delegate queue.
  ///
  /// `@unchecked Sendable` is safe: the state added to `OperationQueue` (itself thread-safe) is
  /// constants and the backlog's counts, which are read and changed only with `backlog`'s lock
  /// held. The compiler cannot check it: a subclass restates the `@unchecked Sendable`
  /// conformance it inherits from `OperationQueue`, since only classes without a superclass (or
  /// with `NSObject`) are checked.
  final class DelegateQueue: OperationQueue, @unchecked Sendable {
    /// How many callbacks may wait to run before adding one more waits; by default 512, chunks
    /// of at most 16 KiB each (8 MiB).
    let backlogLimit: Int
    /// How many callbacks may still wait to run when a caller that waited goes on; by default
    /// 16 (256 KiB).
    let resumeBelow: Int
    /// How long the delegate may run nothing before a full backlog stops holding up the caller.
    let stallAllowance: TimeInterval

    private let serial = DispatchQueue(label: "errand.url-session.delegate")
    /// Marks `serial`, so that a block it runs is never held for the backlog.
    private static let ownQueue = DispatchSpecificKey<Bool>()
    /// Guards the counts below; signalled once the backlog is down to `resumeBelow`.
    private let backlog = NSCondition()
    /// Callbacks added that have not finished running.
    private var pending = 0
    /// Callbacks that have finished running, to tell a stalled delegate from a slow one.
    private var completed = 0
    /// How many callers of `addOperation(_:)` wait for the backlog to shrink: URLSession's work
    /// queue, and a thread that calls `flush(completionHandler:)` or `reset(completionHandler:)`
    /// (which add a block from the caller's thread) may wait at once.
    private var waitingCallers = 0
    /// `completed` when the delegate was last found stalled: nothing waits for it again until it
    /// has run another callback.
    private var stalledAt: Int?

    /// A queue that holds at most `backlogLimit` callbacks, letting a caller that waited go on
    /// at `resumeBelow`, and waiting at most `stallAllowance` seconds for a delegate that runs
    /// none.
    init(backlogLimit: Int = 512, resumeBelow: Int = 16, stallAllowance: TimeInterval = 1) {
      self.backlogLimit = max(1, backlogLimit)
      self.resumeBelow = min(max(0, resumeBelow), self.backlogLimit - 1)
      self.stallAllowance = stallAllowance
      super.init()
      maxConcurrentOperationCount = 1
      serial.setSpecific(key: Self.ownQueue, value: true)
    }

    override func addOperation(_ block: @escaping @Sendable () -> Void) {
      admit()
      serial.async { [self] in
        block()
        finished()
      }
    }

    /// Callbacks added that have not finished running, whether a caller waits to add one, and
    /// how many do.
    var backlogState: (pending: Int, callerWaits: Bool, waitingCallers: Int) {
      backlog.lock()
      defer { backlog.unlock() }
      return (pending, waitingCallers > 0, waitingCallers)
    }

    /// Count one more callback, first waiting while the backlog is full: on URLSession's work
    /// queue, not on the delegate's own queue nor on a thread that runs a Swift task, and not for
    /// a delegate that has stalled.
    private func admit() {
      let mayWait =
        DispatchQueue.getSpecific(key: Self.ownQueue) == nil
        && !withUnsafeCurrentTask { $0 != nil }
      backlog.lock()
      defer { backlog.unlock() }
      if mayWait, pending >= backlogLimit, stalledAt != completed {
        var seen = completed
        waitingCallers += 1
        while pending > resumeBelow, stalledAt != completed {
          if !backlog.wait(until: Date(timeIntervalSinceNow: stallAllowance)) {
            if completed == seen {
              // Stalled: every caller that waits goes on.
              stalledAt = completed
              backlog.broadcast()
              break
            }
            seen = completed
          }
        }
        waitingCallers -= 1
      }
      pending += 1
    }

    /// One callback has run: wake every waiting caller once the backlog is down to
    /// `resumeBelow`.
    private func finished() {
      backlog.lock()
      defer { backlog.unlock() }
      pending -= 1
      completed += 1
      if waitingCallers > 0, pending <= resumeBelow {
        backlog.broadcast()
      }
    }
  }
#endif
