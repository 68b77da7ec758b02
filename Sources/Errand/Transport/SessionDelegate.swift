import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The session-level delegate of ``URLSessionTransport``: collects each task's response, applies
/// ``RedirectPolicy``, and answers authentication challenges so that a `401` comes back as a
/// response. Session-level, because Linux ignores per-task delegates.
///
/// `@unchecked Sendable` is safe: its only mutable state is inside a `Locked`, and each
/// continuation is removed from it before it is resumed, so it is resumed exactly once.
final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  /// One task's exchange in progress.
  private struct Exchange {
    var continuation: CheckedContinuation<HTTPResponse, any Error>
    var body = Data()
  }

  private let exchanges = Locked<[Int: Exchange]>([:])
  private let refused = Locked<[Int: InsecureRedirectError]>([:])

  /// Start collecting a task's response; `continuation` is resumed when the task ends.
  func register(_ task: URLSessionTask, continuation: CheckedContinuation<HTTPResponse, any Error>)
  {
    exchanges.withLock { $0[task.taskIdentifier] = Exchange(continuation: continuation) }
  }

  /// End an exchange with an outcome, if it has not ended yet.
  private func finish(
    _ taskIdentifier: Int, with outcome: (Data) -> Result<HTTPResponse, any Error>
  ) {
    guard let exchange = exchanges.withLock({ $0.removeValue(forKey: taskIdentifier) }) else {
      return
    }
    exchange.continuation.resume(with: outcome(exchange.body))
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    exchanges.withLock { $0[dataTask.taskIdentifier]?.body.append(data) }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?
  ) {
    let refusal = refused.withLock { $0.removeValue(forKey: task.taskIdentifier) }
    finish(task.taskIdentifier) { body in
      if let refusal {
        return .failure(refusal)
      }
      if let error {
        return .failure(URLSessionTransport.clarify(error))
      }
      guard let response = task.response as? HTTPURLResponse else {
        return .failure(URLError(.badServerResponse))
      }
      return .success(HTTPResponse(response, body: body))
    }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask,
    willPerformHTTPRedirection response: HTTPURLResponse,
    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
  ) {
    switch RedirectPolicy.decide(from: response.url ?? task.currentRequest?.url, proposed: request)
    {
    case .follow(let next):
      completionHandler(next)
    case .refuseDowngrade(let from, let to):
      refused.withLock { $0[task.taskIdentifier] = InsecureRedirectError(from: from, to: to) }
      completionHandler(nil)
    }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
    completionHandler:
      @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
  ) {
    #if canImport(FoundationNetworking)
      // On Linux a 401 with WWW-Authenticate becomes a challenge that, without a stored credential,
      // never completes. Errand sends credentials itself, so the 401 is the answer: return it.
      if let failure = challenge.failureResponse as? HTTPURLResponse {
        finish(task.taskIdentifier) { body in .success(HTTPResponse(failure, body: body)) }
        completionHandler(.cancelAuthenticationChallenge, nil)
        return
      }
    #endif
    completionHandler(.performDefaultHandling, nil)
  }
}
