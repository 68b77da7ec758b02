import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The session-level delegate of ``URLSessionTransport``: collects each task's response or
/// streams it as it arrives, enforces the response size limit as bytes arrive, applies
/// ``RedirectPolicy``, and answers authentication challenges so that a `401` comes back as a
/// response. Session-level, because Linux ignores per-task delegates.
///
/// `@unchecked Sendable` is safe: its only mutable state is inside a `Locked`, and each waiter is
/// a ``Waiting``, which resumes its continuation exactly once whoever calls it first.
final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  /// One task's exchange in progress.
  private struct Exchange {
    /// Resumed with the whole response (buffered) or with its head (streamed); `nil` once
    /// resumed. Shared with the transport, whose deadline and cancellation may resume it first.
    var waiting: Waiting?
    var streams: Bool
    var limit: Int?
    var body = Data()
    var received = 0
    /// Where a streamed body goes once the head has been handed out.
    var writer: HTTPBody.Writer?
    /// Who hears about the request body being sent.
    var progress: (@Sendable (TransferProgress) -> Void)?
    /// Which headers stay behind when a redirect leaves the origin.
    var redaction: Redaction = .default
  }

  private let exchanges = Locked<[Int: Exchange]>([:])
  private let refused = Locked<[Int: any Error & Sendable]>([:])
  /// Hosts that may receive credentials when a redirect leads to them from another origin.
  private let trustedRedirectHosts: Set<String>

  init(trustedRedirectHosts: Set<String> = []) {
    self.trustedRedirectHosts = Set(trustedRedirectHosts.map { $0.lowercased() })
  }

  /// Start a task's exchange; `waiting` is resumed with the whole response, or with its head
  /// when `streams` is set.
  func register(
    _ task: URLSessionTask, waiting: Waiting,
    streams: Bool = false, limit: Int? = nil,
    progress: (@Sendable (TransferProgress) -> Void)? = nil, redaction: Redaction = .default
  ) {
    exchanges.withLock {
      $0[task.taskIdentifier] = Exchange(
        waiting: waiting, streams: streams, limit: limit, progress: progress,
        redaction: redaction)
    }
  }

  /// End a task's exchange with `error` if its caller still waits for the answer (or, when
  /// streaming, for the head).
  /// - Returns: Whether the caller was waiting.
  func abandon(_ taskIdentifier: Int, with error: any Error) -> Bool {
    let waiting = exchanges.withLock { exchanges -> Waiting? in
      guard let waiting = exchanges[taskIdentifier]?.waiting else { return nil }
      exchanges[taskIdentifier] = nil
      return waiting
    }
    waiting?.resume(throwing: error)
    return waiting != nil
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
    totalBytesSent: Int64, totalBytesExpectedToSend: Int64
  ) {
    guard let progress = exchanges.withLock({ $0[task.taskIdentifier]?.progress }) else { return }
    progress(
      TransferProgress(
        completedBytes: Int(totalBytesSent),
        expectedBytes: totalBytesExpectedToSend > 0 ? Int(totalBytesExpectedToSend) : nil))
  }

  /// End an exchange with an outcome, if it has not ended yet: resume whoever still waits, or end
  /// the streamed body.
  private func finish(
    _ taskIdentifier: Int, with outcome: (Data) -> Result<HTTPResponse, any Error>
  ) {
    guard let exchange = exchanges.withLock({ $0.removeValue(forKey: taskIdentifier) }) else {
      return
    }
    let result = outcome(exchange.body)
    if let waiting = exchange.waiting {
      waiting.resume(with: result.map { exchange.streams ? $0.streamingBody() : $0 })
    } else if case .failure(let error) = result {
      exchange.writer?.finish(throwing: error)
    } else {
      exchange.writer?.finish()
    }
  }

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
  ) {
    let id = dataTask.taskIdentifier
    if let refusal = refused.withLock({ $0.removeValue(forKey: id) }) {
      // A redirect this delegate refused arrives as the final answer: end with the refusal, not
      // with a head that would read as an unacceptable status.
      finish(id) { _ in .failure(refusal) }
      completionHandler(.cancel)
      return
    }
    let expected = response.expectedContentLength >= 0 ? Int(response.expectedContentLength) : nil
    let tooLong = exchanges.withLock { exchanges in
      guard let limit = exchanges[id]?.limit, let expected else { return false }
      return expected > limit
    }
    if tooLong {
      finish(id) { _ in .failure(URLError(.dataLengthExceedsMaximum)) }
      completionHandler(.cancel)
      return
    }
    guard let http = response as? HTTPURLResponse else {
      completionHandler(.allow)
      return
    }
    if let length = http.value(forHTTPHeaderField: "Content-Length"),
      HTTPHeaders.announcedLengths([length]).count > 1
    {
      // Two lengths for one body: which one ends it is a guess, and a wrong guess lets one
      // response smuggle another.
      finish(id) { _ in .failure(URLError(.badServerResponse)) }
      completionHandler(.cancel)
      return
    }
    let head: Waiting? = exchanges.withLock { exchanges in
      guard var exchange = exchanges[id], exchange.streams, let waiting = exchange.waiting
      else { return nil }
      exchange.waiting = nil
      exchanges[id] = exchange
      return waiting
    }
    if let head {
      let (body, writer) = HTTPBody.makeStream(expectedLength: expected) {
        URLSessionTransport.stop(dataTask)
      }
      exchanges.withLock { $0[id]?.writer = writer }
      var streamed = HTTPResponse(http, body: Data())
      streamed.bodyStream = body
      head.resume(returning: streamed)
    }
    completionHandler(.allow)
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    let id = dataTask.taskIdentifier
    enum Next {
      case collected
      case write(HTTPBody.Writer)
      case tooLong
    }
    let next: Next? = exchanges.withLock { exchanges in
      // Mutated in place through the dictionary: a copy of the exchange would share the body's
      // storage, and appending to it would copy the whole body so far, for every chunk.
      guard exchanges[id] != nil else { return nil }
      exchanges[id]?.received += data.count
      if let limit = exchanges[id]?.limit, let received = exchanges[id]?.received, received > limit
      {
        return .tooLong
      }
      if let writer = exchanges[id]?.writer {
        return .write(writer)
      }
      exchanges[id]?.body.append(data)
      return .collected
    }
    switch next {
    case .write(let writer):
      writer.write(data)
    case .tooLong:
      finish(id) { _ in .failure(URLError(.dataLengthExceedsMaximum)) }
      URLSessionTransport.stop(dataTask)
    case .collected, nil:
      break
    }
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
    let original = task.originalRequest
    let hasBody =
      task is URLSessionUploadTask || original?.httpBodyStream != nil
      || !(original?.httpBody?.isEmpty ?? true)
    let redaction = exchanges.withLock { $0[task.taskIdentifier]?.redaction } ?? .default
    let decision = RedirectPolicy.decide(
      from: response.url ?? task.currentRequest?.url, proposed: request,
      location: response.value(forHTTPHeaderField: "Location"), status: response.statusCode,
      hasBody: hasBody, method: original?.httpMethod ?? "GET", trustedHosts: trustedRedirectHosts,
      redaction: redaction)
    switch decision {
    case .follow(let next):
      completionHandler(next)
    case .refuse(let error):
      refused.withLock { $0[task.taskIdentifier] = error }
      completionHandler(nil)
    case .resend(let location):
      refused.withLock { $0[task.taskIdentifier] = SameOriginResend(location: location) }
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

/// A `307`/`308` within the origin that URLSession would repeat without the request's body:
/// ``URLSessionTransport`` sends the request again itself, body included.
struct SameOriginResend: Error {
  let location: URL
}
