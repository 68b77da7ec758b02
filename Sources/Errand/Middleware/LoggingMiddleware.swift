import Foundation

/// One thing that happened to a request, as ``LoggingMiddleware`` reports it; every field is
/// already redacted.
public struct LogEvent: Sendable {
  /// What happened.
  public enum Kind: Sendable, Hashable {
    /// The request is about to be sent.
    case requestSent
    /// A response arrived (whatever its status).
    case responseReceived
    /// No response arrived.
    case failed
  }

  /// What happened.
  public var kind: Kind
  /// The endpoint as written, when the client knows it.
  public var endpoint: String?
  /// The request's method.
  public var method: HTTPMethod
  /// The request's URL with secrets hidden.
  public var url: String
  /// The request's headers (for ``Kind/requestSent``) or the response's, with secrets hidden.
  public var headers: HTTPHeaders
  /// The response's status.
  public var status: Int?
  /// The size of the request body (sent) or response body (received), in bytes.
  public var bytes: Int?
  /// The time from sending to the response or failure.
  public var duration: Duration?
  /// What went wrong, for ``Kind/failed``, with secrets hidden.
  public var error: String?

  /// The event in one line, for example `← 200 GET https://x.example/dogs (512 bytes, 31 ms)`.
  public var message: String {
    let request = "\(method) \(url)"
    switch kind {
    case .requestSent:
      return "→ \(request)" + (bytes.map { $0 > 0 ? " (\($0) bytes)" : "" } ?? "")
    case .responseReceived:
      return "← \(status ?? 0) \(request) (\(bytes ?? 0) bytes, \(Self.milliseconds(duration)))"
    case .failed:
      return "✗ \(request) after \(Self.milliseconds(duration)): \(error ?? "failed")"
    }
  }

  private static func milliseconds(_ duration: Duration?) -> String {
    "\(Int(((duration ?? .zero) / .milliseconds(1)).rounded())) ms"
  }
}

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
public struct LoggingMiddleware: Middleware {
  /// Which secrets to hide.
  public var redaction: Redaction
  private let handler: @Sendable (LogEvent) -> Void

  /// Create the middleware.
  /// - Parameters:
  ///   - redaction: Which secrets to hide.
  ///   - handler: Receives each event, on the task that sends the request.
  public init(redaction: Redaction = .default, handler: @escaping @Sendable (LogEvent) -> Void) {
    self.redaction = redaction
    self.handler = handler
  }

  /// Report the request, send it, and report the response or failure.
  public func intercept(
    _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    let url = redaction.redact(request.url)
    var event = LogEvent(
      kind: .requestSent, endpoint: RequestContext.current?.endpoint, method: request.method,
      url: url,
      headers: redaction.redact(request.headers), bytes: request.body?.count ?? 0)
    handler(event)
    let clock = ContinuousClock()
    let start = clock.now
    do {
      let response = try await next(request)
      event.kind = .responseReceived
      event.status = response.status
      event.headers = redaction.redact(response.headers)
      event.bytes = response.body.count
      event.duration = clock.now - start
      handler(event)
      return response
    } catch {
      event.kind = .failed
      event.headers = [:]
      event.bytes = nil
      event.duration = clock.now - start
      event.error = hidingSecrets(in: error, of: request)
      handler(event)
      throw error
    }
  }

  /// The error's description with the request's URL, raw or as error descriptions print it
  /// (hidden by ``Redaction/default``), replaced by this middleware's redacted form.
  private func hidingSecrets(in error: any Error, of request: HTTPRequest) -> String {
    let text = (error as? any LocalizedError)?.errorDescription ?? String(describing: error)
    let redacted = redaction.redact(request.url)
    return text.replacingOccurrences(of: request.url.absoluteString, with: redacted)
      .replacingOccurrences(of: request.url.redactedString, with: redacted)
  }
}

#if canImport(os)
  import os

  extension LoggingMiddleware {
    /// A logging middleware that writes to `os.Logger`: failures as errors, the rest as info.
    /// - Parameters:
    ///   - subsystem: The logger's subsystem, usually your bundle identifier.
    ///   - category: The logger's category.
    ///   - redaction: Which secrets to hide.
    /// - Returns: The middleware.
    public static func osLog(
      subsystem: String, category: String = "network", redaction: Redaction = .default
    ) -> LoggingMiddleware {
      let logger = Logger(subsystem: subsystem, category: category)
      return LoggingMiddleware(redaction: redaction) { event in
        if event.kind == .failed {
          logger.error("\(event.message, privacy: .public)")
        } else {
          logger.info("\(event.message, privacy: .public)")
        }
      }
    }
  }
#endif
