import Errand

extension TransferMetrics {
  /// A TLS connection as a route may describe it: lookup 1 ms, connect 2 ms, handshake 9 ms,
  /// the request sent at 12 ms, over `protocolName`.
  package static func tlsConnection(protocolName: String = "h2", reused: Bool) -> TransferMetrics {
    var metrics = TransferMetrics()
    metrics.domainLookupStart = .zero
    metrics.domainLookupEnd = .milliseconds(1)
    metrics.connectStart = .milliseconds(1)
    metrics.connectEnd = .milliseconds(3)
    metrics.secureConnectionStart = .milliseconds(3)
    metrics.secureConnectionEnd = .milliseconds(12)
    metrics.requestStart = .milliseconds(12)
    metrics.protocolName = protocolName
    metrics.reusedConnection = reused
    return metrics
  }
}
