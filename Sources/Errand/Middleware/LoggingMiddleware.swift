import Foundation

/// Reports each request, response and failure as a ``LogEvent``, with secrets hidden by a
/// ``Redaction``; bodies are never logged.
///
/// ```swift
/// let logging = LoggingMiddleware { event in print(event.message) }
/// // → GET https://api.example.com/v1/dogs?token=<redacted>
/// // ← 200 GET https://api.example.com/v1/dogs?token=<redacted> (512 bytes, 31 ms)
/// ```
///
/// Put it last in the chain to see every attempt a retry makes, first to see one event per call.
///
/// At ``LogEvent/Level/debug`` it also reports how each transfer went, on one line:
///
/// ```swift
/// let logging = LoggingMiddleware(level: .debug) { event in print(event.message) }
/// // ⏱ GET https://api.example.com/v1/dogs: dns 1 ms · connect 2 ms · tls 9 ms · ttfb 40 ms · body 3 ms · 12.4 KB · h2 · new connection
/// ```
public struct LoggingMiddleware: Middleware {
  /// Which secrets to hide.
  public var redaction: Redaction
  /// The least ``LogEvent/level`` reported: ``LogEvent/Level/info`` (the default) for requests,
  /// responses and failures, ``LogEvent/Level/debug`` for their transfer metrics as well.
  public var level: LogEvent.Level
  /// The clock that durations are measured on: the one given at creation, else the calling
  /// client's (``RequestContext/clock``), else the continuous clock.
  public var clock: any Clock<Duration> {
    didSet { followsClient = false }
  }
  /// Whether ``clock`` gives way to the calling client's clock: no clock was given.
  private var followsClient: Bool
  private let handler: @Sendable (LogEvent) -> Void

  /// Create the middleware.
  /// - Parameters:
  ///   - redaction: Which secrets to hide, on top of those the request's own
  ///     ``HTTPRequest/redaction`` names.
  ///   - clock: The clock that durations are measured on; `nil` (the default) for the calling
  ///     client's ``APIClient/Configuration/clock``, so a client given a `TestClock` measures on
  ///     it; the continuous clock outside a client.
  ///   - level: The least level reported; ``LogEvent/Level/debug`` adds each response's
  ///     ``LogEvent/Kind/metrics`` line.
  ///   - handler: Receives each event, on the task that sends the request.
  public init(
    redaction: Redaction = .default, clock: (any Clock<Duration>)? = nil,
    level: LogEvent.Level = .info, handler: @escaping @Sendable (LogEvent) -> Void
  ) {
    self.redaction = redaction
    self.level = level
    self.clock = clock ?? ContinuousClock()
    self.followsClient = clock == nil
    self.handler = handler
  }

  /// Report the request, send it, and report the response or failure.
  public func intercept(
    _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    let redaction = redaction.merging(request.redaction)
    let url = redaction.redact(request.url)
    var event = LogEvent(
      kind: .requestSent, endpoint: RequestContext.current?.endpoint, method: request.method,
      url: url,
      headers: redaction.redact(request.headers), bytes: request.body?.count ?? 0)
    report(event)
    let stopwatch = Stopwatch(followsClient ? RequestContext.current?.clock ?? clock : clock)
    do {
      let response = try await next(request)
      event.kind = .responseReceived
      event.status = response.status
      // With every secret the request carried scrubbed from the values: a server may quote
      // the token it refused (`WWW-Authenticate`'s `error_description`). The request as the
      // transport sent it too (`response.request`): a middleware listed after this one (a
      // token, a signature) adds secrets this one never saw.
      var headers = redaction.redact(response.headers, answering: request)
      if let sent = response.request, sent != request {
        headers = redaction.merging(sent.redaction).redact(headers, answering: sent)
      }
      event.headers = headers
      event.bytes = response.bodyStream == nil ? response.body.count : nil
      event.duration = stopwatch.elapsed
      event.cacheStatus = response.cacheStatus
      report(event)
      if level <= .debug, let metrics = response.metrics {
        event.kind = .metrics
        event.metrics = metrics
        report(event)
      }
      return response
    } catch {
      event.kind = .failed
      event.headers = [:]
      event.bytes = nil
      event.duration = stopwatch.elapsed
      event.error = hidingSecrets(in: error, of: request, with: redaction)
      report(event)
      throw error
    }
  }

  /// Hand an event to the handler if it is at or above ``level``.
  private func report(_ event: LogEvent) {
    if event.level >= level {
      handler(event)
    }
  }

  /// The error's description with the request's URL, raw or as error descriptions print it
  /// (hidden by the request's ``HTTPRequest/redaction``), replaced by this middleware's redacted
  /// form.
  private func hidingSecrets(
    in error: any Error, of request: HTTPRequest, with redaction: Redaction
  ) -> String {
    let text = (error as? any LocalizedError)?.errorDescription ?? String(describing: error)
    let redacted = redaction.redact(request.url)
    return text.replacingOccurrences(of: request.url.absoluteString, with: redacted)
      .replacingOccurrences(of: request.redaction.redact(request.url), with: redacted)
  }
}

#if canImport(os)
  import os

  extension LoggingMiddleware {
    /// A logging middleware that writes to `os.Logger`: failures as errors, transfer metrics as
    /// debug messages, the rest as info.
    ///
    /// What happened (the method, the status, sizes, times, the cache's part) is logged
    /// `.public`. The URL and an error's text are logged `.private(mask: .hash)` unless
    /// `publicDetails` is `true`: with secrets redacted they still say what a person did (a
    /// path with a user's name, a search in the query, a server's message), and anything public
    /// is readable in Console and in a sysdiagnose of the device. A private value shows as a hash
    /// (the same value, the same hash) unless the device is set to show private data, for
    /// example with a logging profile while you debug.
    ///
    /// ```swift
    /// let logging = LoggingMiddleware.osLog(subsystem: "com.example.dogs")
    /// ```
    /// - Parameters:
    ///   - subsystem: The logger's subsystem, usually your bundle identifier.
    ///   - category: The logger's category.
    ///   - redaction: Which secrets to hide.
    ///   - publicDetails: Whether URLs and error text are logged `.public`; `false` by default.
    /// - Returns: The middleware.
    public static func osLog(
      subsystem: String, category: String = "network", redaction: Redaction = .default,
      publicDetails: Bool = false
    ) -> LoggingMiddleware {
      let logger = Logger(subsystem: subsystem, category: category)
      return LoggingMiddleware(redaction: redaction, level: .debug) { event in
        guard !publicDetails else {
          switch event.level {
          case .error: logger.error("\(event.message, privacy: .public)")
          case .info: logger.info("\(event.message, privacy: .public)")
          case .debug: logger.debug("\(event.message, privacy: .public)")
          }
          return
        }
        let parts = event.parts
        let error = parts.error ?? ""
        switch event.level {
        case .error:
          logger.error(
            """
            \(parts.lead, privacy: .public)\(parts.url, privacy: .private(mask: .hash))\
            \(parts.tail, privacy: .public)\(error, privacy: .private(mask: .hash))
            """)
        case .info:
          logger.info(
            """
            \(parts.lead, privacy: .public)\(parts.url, privacy: .private(mask: .hash))\
            \(parts.tail, privacy: .public)\(error, privacy: .private(mask: .hash))
            """)
        case .debug:
          logger.debug(
            """
            \(parts.lead, privacy: .public)\(parts.url, privacy: .private(mask: .hash))\
            \(parts.tail, privacy: .public)\(error, privacy: .private(mask: .hash))
            """)
        }
      }
    }
  }
#endif

// Its waits (if any) end when the call's client cancels the call (`CallCancellation`).
extension LoggingMiddleware: CallCancellationAware {}
