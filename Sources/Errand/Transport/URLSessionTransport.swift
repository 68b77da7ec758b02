import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The production ``Transport``: sends requests with `URLSession`.
///
/// ```swift
/// let client = APIClient(server: .production, transport: URLSessionTransport())
/// ```
///
/// Created from a configuration (the default is ``defaultConfiguration()``), it owns its session
/// and a session-level delegate that follows same-origin redirects, strips `Authorization`,
/// `Proxy-Authorization`, `Cookie` and every header `Redaction.default` hides (API keys, auth
/// tokens) before following a redirect to another scheme, host or port,
/// refuses a redirect from HTTPS to HTTP with ``InsecureRedirectError``, and returns a `401` as a
/// response (on Linux, URLSession would otherwise wait forever for a credential).
///
/// Created from your own `URLSession`, the session's own delegate decides redirects and
/// challenges; on Linux prefer ``init(configuration:)``.
public final class URLSessionTransport: Transport {
  /// The session that runs the requests.
  public let session: URLSession
  private let delegate: SessionDelegate?

  /// Create a transport with its own session.
  /// - Parameter configuration: The session configuration; ``defaultConfiguration()`` by default.
  public init(configuration: URLSessionConfiguration = URLSessionTransport.defaultConfiguration()) {
    let delegate = SessionDelegate()
    self.delegate = delegate
    self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
  }

  /// Create a transport over a session you configured.
  ///
  /// Errand's redirect rules apply only to sessions it creates; this session's own delegate
  /// decides how redirects are followed.
  /// - Parameter session: The session that runs the requests.
  public init(session: URLSession) {
    self.delegate = nil
    self.session = session
  }

  deinit {
    if delegate != nil {
      session.finishTasksAndInvalidate()
    }
  }

  /// A configuration suited to API calls: no shared cookie storage, cache or credential storage
  /// (so clients never leak state into each other), and up to 16 connections per host.
  /// - Returns: A new configuration to adjust or pass to ``init(configuration:)``.
  public static func defaultConfiguration() -> URLSessionConfiguration {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpCookieStorage = nil
    configuration.httpShouldSetCookies = false
    configuration.httpCookieAcceptPolicy = .never
    configuration.urlCredentialStorage = nil
    configuration.urlCache = nil
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.httpMaximumConnectionsPerHost = 16
    return configuration
  }

  /// Send a request and wait for the whole response.
  ///
  /// Cancelling the calling task cancels the request. The request's timeout also becomes the
  /// `URLRequest`'s, rounded up to whole seconds (as Linux reads it); ``APIClient`` enforces the
  /// exact deadline. A body longer than the request's ``HTTPRequest/maximumResponseSize`` stops
  /// the transfer as soon as it is crossed.
  /// - Parameter request: The request to send.
  /// - Returns: The response, whatever its status.
  /// - Throws: The `URLError` that URLSession reports (`.dataLengthExceedsMaximum` for a body
  ///   over the limit), or ``InsecureRedirectError``.
  public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
    try await start(request, streams: false)
  }

  /// Send a request and return when the response's head arrives; the body follows in
  /// ``HTTPResponse/bodyStream`` as URLSession delivers it.
  ///
  /// The body is never paused (URLSession's `suspend()` restarts a data task when it resumes), so
  /// bytes the reader has not taken yet are buffered: in memory up to ``HTTPBody/memoryBudget``,
  /// then in a temporary file. A transport created with ``init(session:)`` cannot see the body
  /// as it arrives and streams the whole body as one chunk.
  /// - Parameter request: The request to send.
  /// - Returns: The head of the response, with its body stream.
  /// - Throws: What ``send(_:)`` throws before the head arrives.
  public func stream(_ request: HTTPRequest) async throws -> HTTPResponse {
    try await start(request, streams: true)
  }

  private func start(_ request: HTTPRequest, streams: Bool) async throws -> HTTPResponse {
    var urlRequest = request.urlRequest
    if let timeout = request.timeout {
      // At least a second (Linux reads whole seconds), at most about 68 years (curl's limit).
      urlRequest.timeoutInterval = min(max(1, timeout.seconds.rounded(.up)), Double(Int32.max))
    }
    let limit = request.maximumResponseSize
    let progress = UploadProgress.observer
    let running = Locked(RunningTask())
    var response = try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        let task: URLSessionDataTask
        if let delegate {
          if let file = request.bodyFile {
            task = session.uploadTask(with: urlRequest, fromFile: file)
          } else {
            task = session.dataTask(with: urlRequest)
          }
          delegate.register(
            task, continuation: continuation, streams: streams, limit: limit, progress: progress)
        } else {
          let completion: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = {
            data, response, error in
            if let error {
              continuation.resume(throwing: URLSessionTransport.clarify(error))
            } else if let response = response as? HTTPURLResponse {
              continuation.resume(returning: HTTPResponse(response, body: data ?? Data()))
            } else {
              continuation.resume(throwing: URLError(.badServerResponse))
            }
          }
          if let file = request.bodyFile {
            task = session.uploadTask(
              with: urlRequest, fromFile: file, completionHandler: completion)
          } else {
            task = session.dataTask(with: urlRequest, completionHandler: completion)
          }
        }
        let cancelled = running.withLock { state in
          state.task = task
          return state.cancelled
        }
        task.resume()
        if cancelled {
          task.cancel()
        }
      }
    } onCancel: {
      let task = running.withLock { state in
        state.cancelled = true
        return state.task
      }
      task?.cancel()
    }
    if let limit, response.body.count > limit {
      throw URLError(.dataLengthExceedsMaximum)
    }
    if streams && response.bodyStream == nil {
      response.bodyStream = HTTPBody(response.body)
      response.body = Data()
    }
    return response
  }
}

extension URLSessionTransport {
  /// URLSession on Linux reports a body cut short as `URLError(.unknown)` with curl's message
  /// ("transfer closed with N bytes remaining to read"); call it what it is, a lost connection,
  /// keeping the original as the underlying error.
  static func clarify(_ error: any Error) -> any Error {
    guard let urlError = error as? URLError, urlError.code == .unknown,
      let message = urlError.userInfo[NSLocalizedDescriptionKey] as? String,
      message.contains("transfer closed") || message.contains("remaining to read")
    else { return error }
    var info = urlError.userInfo
    info[NSUnderlyingErrorKey] = urlError
    return URLError(.networkConnectionLost, userInfo: info)
  }
}

/// The task of one `send`, shared with its cancellation handler.
private struct RunningTask {
  var task: URLSessionDataTask?
  var cancelled = false
}
