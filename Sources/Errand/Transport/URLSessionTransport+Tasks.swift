import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension URLSessionTransport {
  /// Cancel a task without making anyone wait: `URLSessionTask.cancel()` can block its caller for
  /// seconds on Linux while the session's internal queue is busy.
  static func stop(_ task: URLSessionTask) {
    cancelling.async { task.cancel() }
  }

  /// Answer an authentication challenge with `.cancelAuthenticationChallenge` without making the
  /// delegate wait: FoundationNetworking then cancels the task in the handler, and
  /// `URLSessionTask.cancel()` waits for URLSession's internal queue, which on Linux may itself
  /// wait for the delegate's queue (`DelegateQueue`).
  static func refuse(
    _ completionHandler:
      @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?)
      -> Void
  ) {
    cancelling.async { completionHandler(.cancelAuthenticationChallenge, nil) }
  }

  /// Where tasks are cancelled: one serial queue, so that a storm of cancellations, each of which
  /// may wait for a session's busy queue, occupies one thread instead of one thread each.
  private static let cancelling = DispatchQueue(label: "errand.url-session.cancel")

  /// Where tasks are created and resumed, for the same reason: both wait for the session's
  /// internal queue.
  static let starting = DispatchQueue(label: "errand.url-session.start")

  /// The same fault gets the same code on every platform and transport; the original stays as
  /// the underlying error.
  ///
  /// - URLSession on Linux reports several failures as `URLError(.unknown)` with curl's message:
  ///   call them what they are (``LibcurlMessage``, as `CurlTransport` does); and an answer that is
  ///   not HTTP (garbage, an invalid status line) as `.unsupportedURL` for an `http` or `https`
  ///   URL: a bad server response.
  /// - CFNetwork on Apple platforms reports malformed HTTP as `.cannotParseResponse` and a body
  ///   whose declared encoding does not decode as `.cannotDecodeRawData`: a bad server response,
  ///   and content that cannot be decoded, as on Linux.
  static func clarify(_ error: any Error) -> any Error {
    guard let urlError = error as? URLError else { return error }
    var info = urlError.userInfo
    info[NSUnderlyingErrorKey] = urlError
    switch urlError.code {
    case .cannotParseResponse:
      return URLError(.badServerResponse, userInfo: info)
    case .cannotDecodeRawData:
      return URLError(.cannotDecodeContentData, userInfo: info)
    #if canImport(FoundationNetworking)
      case .unknown:
        guard let message = urlError.userInfo[NSLocalizedDescriptionKey] as? String,
          let code = LibcurlMessage.code(for: message)
        else { return error }
        return URLError(code, userInfo: info)
      case .unsupportedURL:
        guard let scheme = urlError.failingURL?.scheme?.lowercased(),
          ["http", "https"].contains(scheme)
        else { return error }
        return URLError(.badServerResponse, userInfo: info)
    #endif
    default:
      return error
    }
  }
}

/// The task of one exchange, shared with its deadline and its cancellation handler.
struct RunningTask {
  var task: URLSessionDataTask?
  /// Who waits for the task's answer: resumed by the answer, the deadline or a cancellation,
  /// whichever comes first.
  var waiting: Waiting?
  /// Why the wait was ended early, once it was.
  var abandoned: (any Error)?
}

extension URLSessionTransport {
  /// End a wait early (its deadline passed, or its caller was cancelled): resume whoever waits
  /// for the task's answer with `error` at once, whether or not the task exists yet, and cancel
  /// the task in the background. If its answer (or its head, when streaming) is already in,
  /// nothing happens.
  ///
  /// Runs on the deadline timer's queue or in a cancellation handler, and never waits for
  /// URLSession: creating, resuming and cancelling a task all wait for its internal queue, which
  /// another exchange can keep busy for seconds.
  static func abandon(
    _ running: Locked<RunningTask>, with error: any Error, delegate: SessionDelegate?
  ) {
    let (task, waiting) = running.withLock { state -> (URLSessionDataTask?, Waiting?) in
      if state.abandoned == nil {
        state.abandoned = error
      }
      return (state.task, state.waiting)
    }
    guard waiting?.resume(with: .failure(error)) == true else { return }
    // Not created yet: the attempt sees `abandoned` and does not create it (or stops it).
    guard let task else { return }
    _ = delegate?.abandon(task.taskIdentifier, with: error)
    stop(task)
  }
}
