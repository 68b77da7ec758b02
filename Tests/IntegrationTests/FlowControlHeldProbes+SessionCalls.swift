#if os(Linux)
  import Foundation
  import FoundationNetworking
  import LoopbackServer
  import TestSupport
  import Testing

  @testable import Errand

  extension FlowControlHeldProbes {
    /// What a session delegate's callback may ask of URLSession while URLSession waits for that
    /// delegate: most of it waits for URLSession's work queue (`workQueue.sync`), the very queue
    /// that waits.
    enum SessionCall: String, CaseIterable, Sendable, CustomTestStringConvertible {
      case cancelAnotherTask
      case suspendAndResumeAnotherTask
      case createATask
      case getAllTasks
      case flush
      case finishTasksAndInvalidateAnotherSession
      case invalidateAndCancelAnotherSession

      var testDescription: String { rawValue }
    }

    /// A delegate that asks URLSession for something in its first chunk's callback, once
    /// URLSession waits for it, and keeps every byte it receives.
    final class AskingDelegate: NSObject, URLSessionDataDelegate, Sendable {
      let queue: DelegateQueue
      let ask: @Sendable (URLSession) -> Void
      let received = Locked(Data())
      /// Whether URLSession waited for this delegate when it asked.
      let askedWhileURLSessionWaited = Locked<Bool?>(nil)
      let completion = Locked<CheckedContinuation<(any Error)?, Never>?>(nil)

      init(queue: DelegateQueue, ask: @escaping @Sendable (URLSession) -> Void) {
        self.queue = queue
        self.ask = ask
      }

      func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let first = received.withLock { received in
          defer { received.append(data) }
          return received.isEmpty
        }
        guard first else { return }
        // URLSession fills the backlog while this callback runs; a queue that waits for a
        // stalled delegate for 2 s gives up before this does, and the probe then proves less.
        let deadline = Date(timeIntervalSinceNow: 30)
        while !queue.backlogState.callerWaits, Date() < deadline { usleep(1000) }
        askedWhileURLSessionWaited.withLock { $0 = queue.backlogState.callerWaits }
        ask(session)
      }

      func urlSession(
        _ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?
      ) {
        completion.withLock { $0 }?.resume(returning: error)
      }
    }

    /// While URLSession waits for a delegate, that delegate's callback cancels, suspends or
    /// creates a task, lists the tasks, flushes, or invalidates a session, each of which but the
    /// listing and the flush waits for URLSession's work queue: the queue stops waiting for a
    /// delegate that runs nothing for its allowance (2 s here), the callback goes on, and the
    /// body still arrives whole and in order.
    @Test(arguments: SessionCall.allCases)
    func aDelegateThatAsksURLSessionForSomethingWhileItWaitsGoesOn(_ call: SessionCall)
      async throws
    {
      let server = try Self.server()
      defer { server.stop() }
      let queue = DelegateQueue(backlogLimit: 64, resumeBelow: 4, stallAllowance: 2)
      let another = URLSession(configuration: .ephemeral)
      let anotherOutcome = Locked<(any Error)??>(nil)
      let anotherTask = another.dataTask(with: server.url("/slow")) { _, _, error in
        anotherOutcome.withLock { $0 = .some(error) }
      }
      anotherTask.resume()
      #expect(await server.waitForRequests(1))
      let effect = Locked(false)
      let delegate = AskingDelegate(queue: queue) { session in
        switch call {
        case .cancelAnotherTask:
          anotherTask.cancel()
          effect.withLock { $0 = true }
        case .suspendAndResumeAnotherTask:
          anotherTask.suspend()
          anotherTask.resume()
          effect.withLock { $0 = anotherTask.state == .running }
        case .createATask:
          let created = session.dataTask(with: server.url("/small"))
          effect.withLock { $0 = created.state == .suspended }
        case .getAllTasks:
          session.getAllTasks { _ in effect.withLock { $0 = true } }
        case .flush:
          session.flush { effect.withLock { $0 = true } }
        case .finishTasksAndInvalidateAnotherSession:
          another.finishTasksAndInvalidate()
          effect.withLock { $0 = true }
        case .invalidateAndCancelAnotherSession:
          another.invalidateAndCancel()
          effect.withLock { $0 = true }
        }
      }
      let session = URLSession(
        configuration: URLSessionTransport.defaultConfiguration(), delegate: delegate,
        delegateQueue: queue)
      let finished = await returnsInTime(seconds: 60) {
        let error = await withCheckedContinuation { continuation in
          delegate.completion.withLock { $0 = continuation }
          session.dataTask(with: server.url("/big")).resume()
        }
        return error == nil
      }
      defer { anotherTask.cancel() }
      #expect(finished, "the transfer did not end: \(queue.backlogState)")
      #expect(delegate.askedWhileURLSessionWaited.withLock { $0 } == true)
      #expect(await eventually { effect.withLock { $0 } })
      #expect(delegate.received.withLock { $0 } == Self.bytes)
      if call == .cancelAnotherTask || call == .invalidateAndCancelAnotherSession {
        #expect(await eventually { anotherOutcome.withLock { $0 } != nil })
        let error = anotherOutcome.withLock { $0 }.flatMap { $0 }
        #expect((error as? URLError)?.code == .cancelled, "\(String(describing: error))")
      }
      session.finishTasksAndInvalidate()
    }
  }
#endif
