import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The session-level delegate of ``URLSessionTransport``: hands each task's head over with its
/// body as an ``HTTPBody`` that it writes as bytes arrive (the body enforces the size limit),
/// applies ``RedirectPolicy``, and answers authentication challenges so that a `401` comes back as
/// a response. Session-level, because Linux ignores per-task delegates.
///
/// `@unchecked Sendable` is safe: its only mutable state is inside a `Locked`, and each waiter is
/// a ``Waiting``, which resumes its continuation exactly once whoever calls it first.
final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  /// One task's exchange in progress.
  private struct Exchange {
    /// Resumed with the head (or the failure before it); `nil` once resumed. Shared with the
    /// transport, whose deadline and cancellation may resume it first.
    var waiting: Waiting?
    /// Whether the caller reads the body as it arrives; a buffered call's head is held until
    /// its body ends or backs up (one wake-up of the caller for a short answer, not two).
    var streams: Bool
    /// A buffered call's head, held.
    var pendingHead: HTTPResponse?
    /// The most bytes the body may have.
    var limit: Int?
    /// Where the body goes once the head has been handed out.
    var writer: HTTPBody.Writer?
    /// Who hears about the request body being sent.
    var progress: (@Sendable (TransferProgress) -> Void)?
    /// Which headers stay behind when a redirect leaves the origin.
    var redaction: Redaction = .default
    /// What is known of the transfer for its metrics.
    var observed = ObservedTransfer()
    /// Where the call's redirects are told, when its client has listeners.
    var events: CallEventSink?
  }

  private let exchanges = Locked<[Int: Exchange]>([:])
  private let refused = Locked<[Int: any Error & Sendable]>([:])
  /// Hosts that may receive credentials when a redirect leads to them from another origin.
  private let trustedRedirectHosts: Set<String>

  init(trustedRedirectHosts: Set<String> = []) {
    self.trustedRedirectHosts = Set(trustedRedirectHosts.map { $0.lowercased() })
  }

  /// Start a task's exchange; `waiting` is resumed with the head, its body to follow (at once
  /// when `streams`, else once the body has ended or backs up).
  func register(
    _ task: URLSessionTask, waiting: Waiting, streams: Bool, limit: Int? = nil,
    progress: (@Sendable (TransferProgress) -> Void)? = nil, redaction: Redaction = .default,
    events: CallEventSink? = nil
  ) {
    exchanges.withLock {
      $0[task.taskIdentifier] = Exchange(
        waiting: waiting, streams: streams, limit: limit, progress: progress,
        redaction: redaction, events: events)
    }
  }

  /// End a task's exchange with `error` if its caller still waits for the head.
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

  /// End an exchange with an outcome, if it has not ended yet: end the body, and resume whoever
  /// still waits for the head (with the held head, when there is one, its metrics complete).
  private func finish(
    _ taskIdentifier: Int, with outcome: Result<HTTPResponse, any Error>, sent: Int64? = nil
  ) {
    guard let exchange = exchanges.withLock({ $0.removeValue(forKey: taskIdentifier) }) else {
      return
    }
    switch outcome {
    case .failure(let error):
      // A network failure carries what was known of the transfer (APIError.metrics).
      let error = exchange.observed.metrics(ended: false, sent: sent).attached(to: error)
      exchange.writer?.finish(throwing: error)
      exchange.waiting?.resume(throwing: error)
    case .success(let response):
      exchange.writer?.finish()
      guard let waiting = exchange.waiting else { return }
      var head = exchange.pendingHead ?? response
      head.metrics = exchange.observed.metrics(ended: true, sent: sent)
      waiting.resume(returning: head)
    }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics
  ) {
    let reported = TransferMetrics(metrics)
    exchanges.withLock { $0[task.taskIdentifier]?.observed.reported = reported }
  }

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
  ) {
    let id = dataTask.taskIdentifier
    if let refusal = refused.withLock({ $0.removeValue(forKey: id) }) {
      // A redirect this delegate refused arrives as the final answer: end with the refusal, not
      // with a head that would read as an unacceptable status.
      finish(id, with: .failure(refusal))
      completionHandler(.cancel)
      return
    }
    guard let http = response as? HTTPURLResponse, !(100..<200).contains(http.statusCode) else {
      // An interim answer (`100 Continue`, `103 Early Hints`), which URLSession on Linux hands
      // over as if it were the head: the real one follows.
      completionHandler(.allow)
      return
    }
    if let length = http.value(forHTTPHeaderField: "Content-Length"),
      HTTPHeaders.announcedLengths([length]).count > 1
    {
      // Two lengths for one body: which one ends it is a guess, and a wrong guess lets one
      // response smuggle another.
      finish(id, with: .failure(URLError(.badServerResponse)))
      completionHandler(.cancel)
      return
    }
    let expected = response.expectedContentLength >= 0 ? Int(response.expectedContentLength) : nil
    let limit = exchanges.withLock { $0[id]?.limit }
    let (body, writer) = HTTPBody.makeStream(expectedLength: expected, limit: limit) {
      URLSessionTransport.stop(dataTask)
    }
    var head = HTTPResponse(http, body: Data())
    head.bodyStream = body
    let waiting: Waiting? = exchanges.withLock { exchanges in
      guard exchanges[id]?.waiting != nil else { return nil }
      exchanges[id]?.writer = writer
      exchanges[id]?.observed.headArrived()
      guard exchanges[id]?.streams == true else {
        // Its metrics are read when it is handed over.
        exchanges[id]?.pendingHead = head
        return nil
      }
      head.metrics = exchanges[id]?.observed.metrics(ended: false)
      defer { exchanges[id]?.waiting = nil }
      return exchanges[id]?.waiting
    }
    waiting?.resume(returning: head)
    // A body announced longer than the limit has already ended with the size error, which a
    // held head's reader gets from it.
    if writer.isStopped {
      handOverHead(of: id)
      completionHandler(.cancel)
    } else {
      completionHandler(.allow)
    }
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    let id = dataTask.taskIdentifier
    let writer = exchanges.withLock { exchanges in
      exchanges[id]?.observed.bodyBytes += data.count
      return exchanges[id]?.writer
    }
    guard let writer else { return }
    switch writer.write(data) {
    case .proceed:
      break
    case .pause:
      // URLSession cannot pause (its `suspend()` restarts a data task): the body buffers the
      // rest in a temporary file. A buffered call's reader gets the head now and collects.
      handOverHead(of: id)
    case .stop:
      // Over its limit, the body has ended with the size error: a held head's reader gets it.
      handOverHead(of: id)
      URLSessionTransport.stop(dataTask)
    }
  }

  /// Resume the caller of a buffered call with its held head, if it is still held.
  private func handOverHead(of id: Int) {
    let held = exchanges.withLock { exchanges -> (Waiting, HTTPResponse)? in
      guard let waiting = exchanges[id]?.waiting, var head = exchanges[id]?.pendingHead
      else { return nil }
      exchanges[id]?.waiting = nil
      exchanges[id]?.pendingHead = nil
      // What is known now: the body is still arriving.
      head.metrics = exchanges[id]?.observed.metrics(ended: false)
      return (waiting, head)
    }
    if let (waiting, head) = held {
      waiting.resume(returning: head)
    }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?
  ) {
    let refusal = refused.withLock { $0.removeValue(forKey: task.taskIdentifier) }
    let outcome: Result<HTTPResponse, any Error>
    if let refusal {
      outcome = .failure(refusal)
    } else if let error {
      outcome = .failure(URLSessionTransport.clarify(error))
    } else if let response = task.response as? HTTPURLResponse {
      outcome = .success(HTTPResponse(response, body: Data()))
    } else {
      outcome = .failure(URLError(.badServerResponse))
    }
    finish(task.taskIdentifier, with: outcome, sent: task.countOfBytesSent)
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
    let (redaction, events) = exchanges.withLock {
      ($0[task.taskIdentifier]?.redaction ?? .default, $0[task.taskIdentifier]?.events)
    }
    let decision = RedirectPolicy.decide(
      from: response.url ?? task.currentRequest?.url, proposed: request,
      location: response.value(forHTTPHeaderField: "Location"), status: response.statusCode,
      hasBody: hasBody, method: original?.httpMethod ?? "GET", trustedHosts: trustedRedirectHosts,
      redaction: redaction)
    switch decision {
    case .follow(let next):
      exchanges.withLock { $0[task.taskIdentifier]?.observed.redirected() }
      if let events, let url = next.url {
        events.post(.redirectFollowed(status: response.statusCode, location: events.redacted(url)))
      }
      completionHandler(next)
    case .refuse(let error):
      events?.post(.redirectRefused(reason: error.localizedDescription))
      refused.withLock { $0[task.taskIdentifier] = error }
      completionHandler(nil)
    case .resend(let location):
      if let events {
        events.post(
          .redirectFollowed(status: response.statusCode, location: events.redacted(location)))
      }
      let hops = exchanges.withLock { exchanges in
        exchanges[task.taskIdentifier]?.observed.redirected()
        return exchanges[task.taskIdentifier]?.observed.hops ?? []
      }
      refused.withLock {
        $0[task.taskIdentifier] = SameOriginResend(location: location, hops: hops)
      }
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
        finish(task.taskIdentifier, with: .success(HTTPResponse(failure, body: Data())))
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
  /// The redirects followed so far, this one included, for the response's metrics.
  var hops: [TransferMetrics] = []
}
