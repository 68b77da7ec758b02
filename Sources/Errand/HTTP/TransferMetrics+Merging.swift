import Foundation

extension TransferMetrics {
  /// These metrics with every field `other` knows taken from `other`: a transport's own
  /// observations overlaid with a fuller report (URLSession's on Apple platforms), or a stub's
  /// measurements overlaid with what a test sets.
  /// - Parameter other: The metrics whose known fields win.
  /// - Returns: The merged metrics; ``redirects`` from `other` when it has any.
  public func overlaid(by other: TransferMetrics) -> TransferMetrics {
    var merged = self
    merged.start = other.start ?? start
    merged.domainLookupStart = other.domainLookupStart ?? domainLookupStart
    merged.domainLookupEnd = other.domainLookupEnd ?? domainLookupEnd
    merged.connectStart = other.connectStart ?? connectStart
    merged.connectEnd = other.connectEnd ?? connectEnd
    merged.secureConnectionStart = other.secureConnectionStart ?? secureConnectionStart
    merged.secureConnectionEnd = other.secureConnectionEnd ?? secureConnectionEnd
    merged.requestStart = other.requestStart ?? requestStart
    merged.responseStart = other.responseStart ?? responseStart
    merged.responseEnd = other.responseEnd ?? responseEnd
    merged.requestHeaderBytes = other.requestHeaderBytes ?? requestHeaderBytes
    merged.requestBodyBytes = other.requestBodyBytes ?? requestBodyBytes
    merged.responseHeaderBytes = other.responseHeaderBytes ?? responseHeaderBytes
    merged.responseBodyBytes = other.responseBodyBytes ?? responseBodyBytes
    merged.reusedConnection = other.reusedConnection ?? reusedConnection
    merged.protocolName = other.protocolName ?? protocolName
    merged.remoteAddress = other.remoteAddress ?? remoteAddress
    merged.remotePort = other.remotePort ?? remotePort
    merged.redirects = other.redirects.isEmpty ? redirects : other.redirects
    return merged
  }

  /// The metrics a transport reported at a body's end, with the redirects of `head` (the
  /// response's metrics when its head arrived) when they know fewer: the hops a client or
  /// transport followed itself, by sending the request again, are known to the head only.
  func completing(head: TransferMetrics?) -> TransferMetrics {
    guard let head, head.redirects.count > redirects.count else { return self }
    var completed = self
    completed.redirects = head.redirects
    return completed
  }
}
