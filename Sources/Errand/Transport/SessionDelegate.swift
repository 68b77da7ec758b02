import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The session-level delegate of ``URLSessionTransport``: hands each task's head over with its
/// body as an ``HTTPBody`` that it writes as bytes arrive (the body enforces the size limit),
/// applies ``RedirectPolicy``, and answers authentication challenges so that a `401` comes back as
/// a response. Session-level, because Linux ignores per-task delegates.
///
/// Its one table of exchanges, by task, is a value behind one lock; each callback changes an
/// exchange under it and answers the caller (or ends a body) after releasing it. `Sendable` as
/// the compiler checks it: its stored properties are constants, the table a `Locked` value.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
  /// One task's exchange in progress.
  private struct TaskExchange: Sendable {
    /// Where the exchange stands.
    enum Phase: Sendable {
      /// Waiting for the head, holding a buffered call's head, or past the hand-over.
      case exchanging(HeadHandOver)
      /// A redirect was refused: the task's end ends the call with this error.
      case refused(any Error)
      /// A `307`/`308` within the origin: the transport sends the request again itself.
      case resending(SameOriginResend)
    }

    /// Ended with the head (or the failure before it). Shared with the transport, whose
    /// deadline and cancellation may end it first.
    let waiting: Waiting
    var phase: Phase
    /// The most bytes the body may have.
    let limit: Int?
    /// What the call asks of the exchange: who hears about the request body being sent and
    /// about the redirects followed.
    let call: Exchange
    /// Where the upload progress goes, when the call has an observer; the caller's answer
    /// follows the reports made before it.
    let progress: ProgressRelay?
    /// Which headers stay behind when a redirect leaves the origin: those it hides, and the
    /// client's own default headers that are not safe at other origins (lowercased names).
    let redaction: Redaction
    let staysHome: Set<String>
    /// Where the body goes once the head has arrived.
    var writer: HTTPBody.Writer?
    /// What is known of the transfer for its metrics.
    var observed = ObservedTransfer()
    /// The task's successful end, held until URLSession reports the task's metrics (or the
    /// wait for them ends), when the report had not come first.
    var heldEnd: HeldEnd?

    /// A task's end, held for its metrics.
    struct HeldEnd: Sendable {
      let outcome: Result<HTTPResponse, any Error>
      let sent: Int64?
    }

    /// The redirect this exchange stopped at (refused, or to be resent), which ends it.
    var redirectStop: (any Error)? {
      switch phase {
      case .refused(let error): error
      case .resending(let resend): resend
      case .exchanging: nil
      }
    }

    /// Whether no head has arrived yet while the caller waits for one.
    var awaitsHead: Bool {
      guard case .exchanging(let handOver) = phase, case .waiting = handOver.phase else {
        return false
      }
      return true
    }

    /// Whether the caller still waits for the head.
    var callerWaits: Bool {
      if case .exchanging(let handOver) = phase { handOver.callerWaits } else { true }
    }

    /// The head arrived, its body to follow through `writer`.
    /// - Returns: The head to hand over now (a streamed call's), with what is known of it.
    mutating func headArrived(_ head: HTTPResponse, writer: HTTPBody.Writer) -> HTTPResponse? {
      guard case .exchanging(var handOver) = phase, handOver.callerWaits else { return nil }
      self.writer = writer
      observed.headArrived()
      let now = handOver.arrived(head)
      phase = .exchanging(handOver)
      return now.map { head in
        var head = head
        head.metrics = observed.metrics(ended: false)
        return head
      }
    }

    /// The body backs up or stopped itself.
    /// - Returns: The held head, to hand over now (its body still arriving), if it is held.
    mutating func releaseHead() -> HTTPResponse? {
      guard case .exchanging(var handOver) = phase, var head = handOver.release() else {
        return nil
      }
      phase = .exchanging(handOver)
      head.metrics = observed.metrics(ended: false)
      return head
    }

    /// End the exchange, taken out of the table: the body first, then the caller's wait (with
    /// the held head, when there is one, its metrics complete). A redirect the exchange stopped
    /// at ends it with its refusal, whatever else the task reports.
    func end(with outcome: Result<HTTPResponse, any Error>, sent: Int64?) {
      switch redirectStop.map({ .failure($0) }) ?? outcome {
      case .failure(let error):
        // A network failure carries what was known of the transfer (APIError.metrics).
        let error = observed.metrics(ended: false, sent: sent).attached(to: error)
        writer?.finish(throwing: error)
        answer(.failure(error))
      case .success(let response):
        // The reader finds the whole transfer's metrics at the body's end (HTTPBody.metrics).
        let metrics = observed.metrics(ended: true, sent: sent)
        writer?.finish(metrics: metrics)
        guard case .exchanging(var handOver) = phase, handOver.callerWaits else { return }
        var head = handOver.release() ?? response
        head.metrics = metrics
        answer(.success(head))
      }
    }

    /// End the caller's wait with `result`, once its progress observer has heard every report
    /// made before.
    func answer(_ result: Result<HTTPResponse, any Error>) {
      if let progress {
        progress.afterReports { [waiting] in waiting.resume(with: result) }
      } else {
        waiting.resume(with: result)
      }
    }
  }

  private let exchanges = Locked<[Int: TaskExchange]>([:])
  /// Hosts that may receive credentials when a redirect leads to them from another origin.
  private let trustedRedirectHosts: Set<String>
  /// The authentication methods URLSession may answer with the system's credentials, beside
  /// server trust.
  private let systemCredentials: Set<String>
  /// Whom the session trusts and what it presents (Apple platforms), its files read; `nil` for
  /// the system's rules and no client certificate.
  let trust: LoadedTrust?
  /// The proxy's credential and the requests' HTTP/3 hint (``URLSessionTransport``'s
  /// connection options, on Apple platforms).
  let connection: SessionConnection
  /// Cancels a task without making anyone wait (`URLSessionTransport.stop(_:)`).
  private let stop: @Sendable (URLSessionTask) -> Void
  /// How long a task's successful end waits for URLSession's report of its metrics when the
  /// report has not come first (Apple documents no order between the two), or `nil` not to wait.
  private let reportWait: Duration?

  /// The wait for URLSession's metrics after a task's end: half a second on Apple platforms,
  /// whose URLSession reports them; none on Linux, whose URLSession reports none.
  #if canImport(FoundationNetworking)
    static let defaultReportWait: Duration? = nil
  #else
    static let defaultReportWait: Duration? = .milliseconds(500)
  #endif

  /// A delegate that follows redirects to `trustedRedirectHosts` with the request's secrets, lets
  /// URLSession answer the `systemCredentials` challenges by default, and cancels tasks with
  /// `stop` (tests count them).
  /// A successful end waits up to `reportWait` for URLSession's metrics.
  init(
    trustedRedirectHosts: Set<String> = [], systemCredentials: Set<String> = [],
    trust: LoadedTrust? = nil, connection: SessionConnection = SessionConnection(),
    reportWait: Duration? = SessionDelegate.defaultReportWait,
    stop: @escaping @Sendable (URLSessionTask) -> Void = URLSessionTransport.stop
  ) {
    self.trustedRedirectHosts = Set(trustedRedirectHosts.map { $0.lowercased() })
    self.systemCredentials = systemCredentials
    self.trust = trust
    self.connection = connection
    self.reportWait = reportWait
    self.stop = stop
  }

  /// Start a task's exchange; `waiting` is ended with the head, its body to follow (at once
  /// when `streams`, else once the body has ended or backs up).
  func register(
    _ task: URLSessionTask, waiting: Waiting, exchange call: Exchange, limit: Int? = nil,
    redaction: Redaction = .default, staysHome: Set<String> = []
  ) {
    let exchange = TaskExchange(
      waiting: waiting, phase: .exchanging(HeadHandOver(streams: call.streams)), limit: limit,
      call: call, progress: call.progress.map { _ in ProgressRelay(call) }, redaction: redaction,
      staysHome: staysHome)
    exchanges.withLock { $0[task.taskIdentifier] = exchange }
  }

  /// End a task's exchange with `error` if its caller still waits for the head.
  /// - Returns: Whether the caller was waiting.
  func abandon(_ taskIdentifier: Int, with error: any Error) -> Bool {
    let waiting = exchanges.withLock { exchanges -> Waiting? in
      guard let exchange = exchanges[taskIdentifier], exchange.callerWaits else { return nil }
      exchanges[taskIdentifier] = nil
      return exchange.waiting
    }
    waiting?.resume(throwing: error)
    return waiting != nil
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
    totalBytesSent: Int64, totalBytesExpectedToSend: Int64
  ) {
    // Not on this queue: an observer that takes its time here would hold up URLSession.
    guard let progress = exchanges.withLock({ $0[task.taskIdentifier]?.progress }) else { return }
    progress.report(
      TransferProgress(
        completedBytes: Int(totalBytesSent),
        expectedBytes: totalBytesExpectedToSend > 0 ? Int(totalBytesExpectedToSend) : nil))
  }

  /// End an exchange with an outcome, if it has not ended yet.
  func finish(
    _ taskIdentifier: Int, with outcome: Result<HTTPResponse, any Error>, sent: Int64? = nil
  ) {
    exchanges.withLock { $0.removeValue(forKey: taskIdentifier) }?.end(with: outcome, sent: sent)
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics
  ) {
    reported(TransferMetrics(metrics), forTask: task.taskIdentifier)
  }

  /// URLSession reported a task's metrics: kept for what follows, and the task's end, if it was
  /// held for them, goes on.
  func reported(_ metrics: TransferMetrics, forTask id: Int) {
    releaseHeldEnd(of: id, reported: metrics)
  }

  /// Hold a task's successful end for its metrics report, when there is a wait for it and the
  /// report has not come: it goes on when the report comes, or after `reportWait`.
  /// - Returns: Whether it was held.
  private func holdForReport(
    _ id: Int, outcome: Result<HTTPResponse, any Error>, sent: Int64
  ) -> Bool {
    guard let reportWait, case .success = outcome else { return false }
    let held = exchanges.withLock { exchanges -> Bool in
      guard var exchange = exchanges[id], exchange.observed.reported == nil,
        exchange.redirectStop == nil
      else { return false }
      exchange.heldEnd = TaskExchange.HeldEnd(outcome: outcome, sent: sent)
      // The transfer ended now, not when the end goes on.
      exchange.observed.taskEnded()
      exchanges[id] = exchange
      return true
    }
    guard held else { return false }
    let (seconds, attoseconds) = reportWait.components
    let wait = Double(seconds) + Double(attoseconds) / 1e18
    DispatchQueue.global().asyncAfter(deadline: .now() + wait) { [weak self] in
      self?.releaseHeldEnd(of: id)
    }
    return true
  }

  /// Let a task's held end go on, with its metrics when they were `reported` (else the wait for
  /// them is over).
  private func releaseHeldEnd(of id: Int, reported: TransferMetrics? = nil) {
    let held = exchanges.withLock { exchanges -> (TaskExchange, TaskExchange.HeldEnd)? in
      if let reported {
        exchanges[id]?.observed.reported = reported
      }
      guard let held = exchanges[id]?.heldEnd else { return nil }
      return exchanges.removeValue(forKey: id).map { ($0, held) }
    }
    if let (exchange, held) = held {
      exchange.end(with: held.outcome, sent: held.sent)
    }
  }

  /// The session is invalid (its transport went away) and lets go of this delegate, whose timers
  /// hold it weakly: every end still held goes on now, with what is known, so that no body
  /// waits for a report or a timer that will not come.
  func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
    for id in heldEnds {
      releaseHeldEnd(of: id)
    }
  }

  /// The tasks whose end is held for their metrics (for tests).
  var heldEnds: [Int] {
    exchanges.withLock { $0.filter { $0.value.heldEnd != nil }.map(\.key) }
  }

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
  ) {
    let id = dataTask.taskIdentifier
    if let refusal = exchanges.withLock({ $0[id]?.redirectStop }) {
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
      [stop] in stop(dataTask)
    }
    var head = HTTPResponse(http, body: Data())
    head.bodyStream = body
    let answer = exchanges.withLock { exchanges in
      exchanges[id]?.headArrived(head, writer: writer).map { ($0, exchanges[id]) }
    }
    if let (head, exchange) = answer {
      exchange?.answer(.success(head))
    }
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
      // Or its reader has left. The chunks URLSession delivers until the task's cancellation
      // lands (a backlog of hundreds on Linux) find no writer: one cancellation, not one each.
      exchanges.withLock { $0[id]?.writer = nil }
      handOverHead(of: id)
      stop(dataTask)
    }
  }

  /// Resume the caller of a buffered call with its held head, if it is still held.
  private func handOverHead(of id: Int) {
    let held = exchanges.withLock { exchanges in
      exchanges[id]?.releaseHead().map { ($0, exchanges[id]) }
    }
    if let (head, exchange) = held {
      exchange?.answer(.success(head))
    }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?
  ) {
    // A redirect the exchange stopped at ends it with its refusal (`Exchange.end`), whatever
    // the task reports.
    let outcome: Result<HTTPResponse, any Error>
    if let error {
      outcome = .failure(URLSessionTransport.clarify(error))
    } else if let response = task.response as? HTTPURLResponse {
      // The head goes to the caller from here only when none arrived before (it is held, or
      // handed over, otherwise): only then are its fields read again.
      let awaitsHead = exchanges.withLock { $0[task.taskIdentifier]?.awaitsHead ?? true }
      outcome = .success(
        awaitsHead
          ? HTTPResponse(response, body: Data()) : HTTPResponse(status: response.statusCode))
    } else {
      outcome = .failure(URLError(.badServerResponse))
    }
    let (id, sent) = (task.taskIdentifier, task.countOfBytesSent)
    if !holdForReport(id, outcome: outcome, sent: sent) {
      finish(id, with: outcome, sent: sent)
    }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask,
    willPerformHTTPRedirection response: HTTPURLResponse,
    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
  ) {
    let original = task.originalRequest
    let (redaction, staysHome, call, followedBefore) = exchanges.withLock {
      (
        $0[task.taskIdentifier]?.redaction ?? .default, $0[task.taskIdentifier]?.staysHome ?? [],
        $0[task.taskIdentifier]?.call, !($0[task.taskIdentifier]?.observed.hops.isEmpty ?? true)
      )
    }
    // The request this redirect answers has the original body only at the first hop: a hop
    // followed before dropped it (a `303`, or a `301`/`302` after a `POST`, became a `GET`), or
    // there was none, since one that keeps a body is resent or refused. A `307` after a `303`
    // to another site is followed as the `GET` it answers, never resent as the original `POST`
    // (its body, secrets and `Cookie` included) to that site.
    let hasBody =
      !followedBefore
      && (task is URLSessionUploadTask || original?.httpBodyStream != nil
        || !(original?.httpBody?.isEmpty ?? true))
    guard let target = request.url else {
      completionHandler(request)
      return
    }
    if let call, call.cookieJar != nil, let answered = response.url ?? task.currentRequest?.url {
      // The redirect's own cookies, stored before its next hop asks the jar for its own.
      call.receivedCookies(HTTPResponse(response, body: Data()).headers, from: answered)
    }
    let proposed = HTTPHeaders(
      (request.allHTTPHeaderFields ?? [:]).map { HTTPHeaders.Field(name: $0.key, value: $0.value) })
    let decision = RedirectPolicy.decide(
      from: response.url ?? task.currentRequest?.url, to: target, headers: proposed,
      location: response.value(forHTTPHeaderField: "Location"), status: response.statusCode,
      hasBody: hasBody, method: original?.httpMethod ?? "GET", trustedHosts: trustedRedirectHosts,
      redaction: redaction, staysHome: staysHome)
    if case .follow(let url, _) = decision, let refused = trust?.refusal(for: url) {
      // Into a pinned host over plain HTTP, where no key is compared.
      call?.redirectRefused(refused)
      exchanges.withLock { $0[task.taskIdentifier]?.phase = .refused(refused) }
      completionHandler(nil)
      return
    }
    switch decision {
    case .follow(let url, let headers):
      exchanges.withLock { $0[task.taskIdentifier]?.observed.redirected() }
      call?.redirectFollowed(status: response.statusCode, location: url)
      var next = request
      next.url = url
      for field in proposed.fields where !headers.contains(field.name) {
        next.setValue(nil, forHTTPHeaderField: field.name)
      }
      if let call, call.cookieJar != nil {
        next.httpShouldHandleCookies = false
        next.setValue(
          call.cookieField(forRedirectTo: url, proposed: headers), forHTTPHeaderField: "Cookie")
      }
      completionHandler(next)
    case .refuse(let error):
      call?.redirectRefused(error)
      exchanges.withLock { $0[task.taskIdentifier]?.phase = .refused(error) }
      completionHandler(nil)
    case .resend(let location):
      call?.redirectFollowed(status: response.statusCode, location: location)
      exchanges.withLock { exchanges in
        guard var exchange = exchanges[task.taskIdentifier] else { return }
        exchange.observed.redirected()
        exchange.phase = .resending(
          SameOriginResend(location: location, hops: exchange.observed.hops))
        exchanges[task.taskIdentifier] = exchange
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
        URLSessionTransport.refuse(completionHandler)
        return
      }
    #endif
    // The proxy's own credential, for the proxy it belongs to, once: a proxy that refuses it
    // gets no second try, and the challenge is answered below as any other.
    if let credential = connection.credential(for: challenge) {
      completionHandler(.useCredential, credential)
      return
    }
    #if canImport(Security)
      if let trust,
        answer(challenge, task: task, trust: trust, completionHandler: completionHandler)
      {
        return
      }
    #endif
    completionHandler(disposition(for: challenge.protectionSpace.authenticationMethod), nil)
  }

  /// What the call of `task` asks of its exchange; `nil` once the exchange has ended.
  func exchange(of task: URLSessionTask) -> Exchange? {
    exchanges.withLock { $0[task.taskIdentifier]?.call }
  }

  /// `NSURLAuthenticationMethodServerTrust`'s value, which Apple's Foundation declares and
  /// FoundationNetworking marks unavailable.
  static let serverTrust = "NSURLAuthenticationMethodServerTrust"

  /// What to answer a challenge with: the system's own handling for server trust (the usual
  /// certificate checks) and for the methods the app opted into; for any other (HTTP Basic and
  /// Digest, NTLM, Negotiate, a client certificate) no credential, so that the server's answer,
  /// a `401` say, is the response, and no credential of the system's (a single sign-on ticket,
  /// the user's Windows password) is sent without the app asking for it.
  func disposition(for method: String) -> URLSession.AuthChallengeDisposition {
    method == Self.serverTrust || systemCredentials.contains(method)
      ? .performDefaultHandling : .rejectProtectionSpace
  }
}

/// A `307`/`308` within the origin that URLSession would repeat without the request's body:
/// ``URLSessionTransport`` sends the request again itself, body included.
struct SameOriginResend: Error {
  let location: URL
  /// The redirects followed so far, this one included, for the response's metrics.
  var hops: [TransferMetrics] = []
}
