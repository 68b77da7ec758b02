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
    /// How the transfer of a response went (``LogEvent/metrics``), right after
    /// ``responseReceived``, when the transport reported it; at ``Level/debug``.
    case metrics
  }

  /// How much an event matters: ``LoggingMiddleware`` reports those at or above its level.
  public enum Level: Int, Sendable, Hashable, Comparable {
    /// Detail for finding out why a call was slow: ``Kind/metrics``.
    case debug
    /// Requests and responses.
    case info
    /// Failures.
    case error

    /// Whether `lhs` matters less than `rhs`.
    public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
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
  /// The size of the request body (sent) or response body (received), in bytes; `nil` for a
  /// response whose body streams (it is still arriving when the response is logged).
  public var bytes: Int?
  /// The time from sending to the response or failure.
  public var duration: Duration?
  /// What went wrong, for ``Kind/failed``, with secrets hidden.
  public var error: String?
  /// Where the response came from, when a ``CachingMiddleware`` inside the logging one handled
  /// the call.
  public var cacheStatus: CacheStatus?
  /// How the transfer went, for ``Kind/metrics``.
  public var metrics: TransferMetrics?

  /// How much the event matters: ``Level/debug`` for ``Kind/metrics``, ``Level/error`` for
  /// ``Kind/failed``, ``Level/info`` for the rest.
  public var level: Level {
    switch kind {
    case .metrics: .debug
    case .failed: .error
    case .requestSent, .responseReceived: .info
    }
  }

  /// The event in one line, for example `← 200 GET https://x.example/dogs (512 bytes, 31 ms)`,
  /// or `(512 bytes, 0 ms, cache hit)` when a cache answered, or for metrics
  /// `⏱ GET https://x.example/dogs: dns 1 ms · connect 2 ms · tls 9 ms · ttfb 40 ms · body 3 ms · 12.4 KB · h2 · new connection`
  /// (``TransferMetrics/summary``).
  public var message: String {
    let parts = parts
    return parts.lead + parts.url + parts.tail + (parts.error ?? "")
  }

  /// ``message`` in the parts a system log keeps apart: the URL and the error text, which may
  /// say what a person did, between parts that say only what happened.
  struct Parts {
    /// What happened, up to the URL: `← 200 GET `.
    var lead: String
    /// The URL, redacted.
    var url: String
    /// What follows the URL: sizes, times, the cache's part, the metrics.
    var tail: String
    /// The error text of a failure, redacted.
    var error: String?
  }

  /// The parts of ``message``.
  var parts: Parts {
    switch kind {
    case .requestSent:
      return Parts(
        lead: "→ \(method) ", url: url,
        tail: bytes.map { $0 > 0 ? " (\($0) bytes)" : "" } ?? "")
    case .responseReceived:
      let size = bytes.map { "\($0) bytes" } ?? "body streaming"
      let cache = cacheStatus.map { ", cache \($0.rawValue)" } ?? ""
      return Parts(
        lead: "← \(status ?? 0) \(method) ", url: url,
        tail: " (\(size), \(Self.milliseconds(duration))\(cache))")
    case .failed:
      return Parts(
        lead: "✗ \(method) ", url: url, tail: " after \(Self.milliseconds(duration)): ",
        error: error ?? "failed")
    case .metrics:
      return Parts(lead: "⏱ \(method) ", url: url, tail: ": \(metrics?.summary ?? "no metrics")")
    }
  }

  /// Whole milliseconds, saturating (only a test clock gets past `Int64`).
  private static func milliseconds(_ duration: Duration?) -> String {
    "\((duration ?? .zero).wholeMilliseconds) ms"
  }
}
