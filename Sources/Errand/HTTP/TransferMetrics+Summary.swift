import Foundation

extension TransferMetrics {
  /// The phases, size and connection on one line, for logs: for example
  /// `dns 1 ms · connect 2 ms · tls 9 ms · ttfb 40 ms · body 3 ms · 12.4 KB · h2 · reused`.
  ///
  /// A phase the transport did not report is left out. `ttfb` counts from the request being
  /// sent (from the start where that is unknown) to the first byte of the response; `body` from
  /// there to the last byte; `connect` is the TCP connection alone.
  public var summary: String {
    var parts: [String] = []
    func add(_ label: String, _ duration: Duration?) {
      if let duration { parts.append("\(label) \(Self.milliseconds(duration))") }
    }
    add("dns", Self.span(domainLookupStart, domainLookupEnd))
    add("connect", Self.span(connectStart, secureConnectionStart ?? connectEnd))
    add("tls", Self.span(secureConnectionStart, secureConnectionEnd))
    add("ttfb", Self.span(requestStart ?? .zero, responseStart))
    add("body", Self.span(responseStart, responseEnd))
    if let bytes = responseBodyBytes { parts.append(Self.size(bytes)) }
    if let protocolName { parts.append(protocolName) }
    if let reusedConnection { parts.append(reusedConnection ? "reused" : "new connection") }
    if redirectCount > 0 {
      parts.append(redirectCount == 1 ? "1 redirect" : "\(redirectCount) redirects")
    }
    return parts.isEmpty ? "no metrics" : parts.joined(separator: " · ")
  }

  /// The time from one phase mark to another, when both are known and in order.
  private static func span(_ start: Duration?, _ end: Duration?) -> Duration? {
    guard let start, let end, end >= start else { return nil }
    return end - start
  }

  /// Milliseconds: whole from 1 ms, else with one decimal, so that a loopback phase is not 0
  /// (unless it took less than 0.05 ms).
  private static func milliseconds(_ duration: Duration) -> String {
    let value = duration.seconds * 1000
    return value >= 1 || value < 0.05
      ? "\(Int(value.rounded())) ms" : String(format: "%.1f ms", value)
  }

  /// A size in bytes, kilobytes or megabytes (powers of 1,000, one decimal).
  private static func size(_ bytes: Int) -> String {
    switch bytes {
    case ..<1000: "\(bytes) B"
    case ..<1_000_000: String(format: "%.1f KB", Double(bytes) / 1000)
    default: String(format: "%.1f MB", Double(bytes) / 1_000_000)
    }
  }
}
