#if canImport(FoundationNetworking)
  import Foundation
  import FoundationNetworking
  import TestSupport
  import Testing

  @testable import Errand

  /// Attacks on `SessionDelegate` where it meets URLSession's flow control on Linux: while
  /// URLSession waits for the delegate's backlog (`DelegateQueue`), nothing the delegate does may
  /// wait for URLSession in turn, and a stopped transfer must not queue one cancellation per
  /// chunk still on its way. A plain Dispatch queue stands in for URLSession's work queue.
  @Suite(.timeLimit(.minutes(3))) struct SessionDelegateHostileTests {
    /// FoundationNetworking cancels the task in the completion handler of an authentication
    /// challenge answered `.cancelAuthenticationChallenge`, and `URLSessionTask.cancel()` waits
    /// for URLSession's work queue: called on the delegate's queue while that work queue waits
    /// for the delegate (a full backlog behind the challenge), each waits for the other. Errand
    /// answers a `401` challenge so (to return the 401 as a response), so it must answer it
    /// elsewhere.
    @Test func aChallengeAnsweredWhileURLSessionWaitsForTheDelegateDoesNotDeadlock() async throws {
      let queue = DelegateQueue(backlogLimit: 2, resumeBelow: 0, stallAllowance: 600)
      let work = DispatchQueue(label: "stands for URLSession's work queue")
      let delegate = SessionDelegate()
      let session = URLSession(configuration: .ephemeral)
      let url = try #require(URL(string: "http://127.0.0.1:9/private"))
      let task = session.dataTask(with: url)
      let failure = try #require(
        HTTPURLResponse(
          url: url, statusCode: 401, httpVersion: "HTTP/1.1",
          headerFields: ["WWW-Authenticate": #"Basic realm="private""#]))
      let challenge = URLAuthenticationChallenge(
        protectionSpace: URLProtectionSpace(
          host: "127.0.0.1", port: 9, protocol: "http", realm: "private",
          authenticationMethod: NSURLAuthenticationMethodHTTPBasic),
        proposedCredential: nil, previousFailureCount: 0, failureResponse: failure, error: nil,
        sender: IgnoredChallengeSender())
      let answered = Locked<URLSession.AuthChallengeDisposition?>(nil)
      let finished = await returnsInTime(seconds: 60) {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
          work.async {
            queue.addOperation {
              delegate.urlSession(session, task: task, didReceive: challenge) { disposition, _ in
                // What FoundationNetworking's handler does for this answer: `task.cancel()`,
                // which starts with `workQueue.sync`.
                work.sync { answered.withLock { $0 = disposition } }
              }
            }
            // A body's chunks behind the challenge: the third waits until none is left.
            for _ in 1...3 { queue.addOperation {} }
            queue.addOperation { continuation.resume() }
          }
        }
        return true
      }
      #expect(finished, "the delegate and URLSession's work queue wait for each other")
      try #require(await eventually { answered.withLock { $0 } != nil })
      #expect(answered.withLock { $0 } == .cancelAuthenticationChallenge)
    }

    /// A body that crosses its limit while chunks are still on their way (URLSession's backlog
    /// holds hundreds): its task is cancelled once, not once more for every chunk that follows.
    /// Each cancellation waits its turn for URLSession's work queue on the one queue where every
    /// transport cancels, so a cancellation per chunk would hold up every other call's.
    @Test func aStoppedTransferIsCancelledOnceWhateverFollows() async throws {
      let stops = Locked(0)
      let delegate = SessionDelegate(stop: { _ in stops.withLock { $0 += 1 } })
      let session = URLSession(configuration: .ephemeral)
      let url = try #require(URL(string: "http://127.0.0.1:9/video"))
      let task = session.dataTask(with: url)
      let head = try #require(
        HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:]))
      let response = try await Waiting.wait { waiting in
        delegate.register(task, waiting: waiting, exchange: Exchange(streams: true), limit: 1000)
        delegate.urlSession(session, dataTask: task, didReceive: head) { _ in }
      }
      let body = try #require(response.bodyStream)
      for _ in 1...2 {
        delegate.urlSession(session, dataTask: task, didReceive: Data(count: 600))
      }
      let atTheLimit = stops.withLock { $0 }
      #expect((1...2).contains(atTheLimit))
      for _ in 1...100 {
        delegate.urlSession(session, dataTask: task, didReceive: Data(count: 600))
      }
      #expect(stops.withLock { $0 } == atTheLimit)
      let error = await #expect(throws: URLError.self) { for try await _ in body {} }
      #expect(error?.code == .dataLengthExceedsMaximum)
    }
  }
#endif
