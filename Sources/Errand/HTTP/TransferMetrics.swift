import Foundation

/// How one transfer went, as its transport saw it: when each phase ended, counted from the start
/// of the transfer, how many bytes went each way, and over which connection. A field the
/// transport cannot know is `nil`, never invented.
///
/// Every transport fills it, each with what it can know:
/// - `CurlTransport`: every field, from libcurl (`curl_easy_getinfo`). libcurl's phases follow
///   one another, so a phase starts where the one before it ended.
/// - `URLSessionTransport` on Apple platforms: every field, from `URLSessionTaskMetrics`, when
///   the session delivers them before the task completes. On Linux, where URLSession reports no
///   task metrics, only what Errand itself observes: ``start``, ``responseStart``,
///   ``responseEnd``, ``requestBodyBytes``, ``responseBodyBytes`` and the redirects' heads; the
///   rest is `nil`.
/// - `StubTransport`: times on the stub's clock (a route's delay shows up as server time, before
///   ``responseStart``) and the sizes of what it sent, plus whatever the route sets.
///
/// A streamed response's head carries what was known when the head arrived (no ``responseEnd``,
/// body sizes so far). Redirects a transport followed are in ``redirects``, oldest first; each
/// hop's times count from its own ``start``. A failed call keeps them in ``APIError/metrics``:
/// the response's for an unacceptable status, and for a network failure what the transport knew
/// when it failed.
///
/// ```swift
/// let response = try await client.response(for: endpoint).response
/// if let metrics = response.metrics, (metrics.responseStart ?? .zero) > .milliseconds(500) {
///   print("slow: \(metrics.summary)")
///   // dns 1 ms · connect 2 ms · tls 9 ms · ttfb 840 ms · body 3 ms · 12.4 KB · h2 · new connection
/// }
/// ```
public struct TransferMetrics: Sendable, Hashable {
  /// When the transfer started (wall time).
  public var start: Date?
  /// The host name lookup began; `nil` on a reused connection.
  public var domainLookupStart: Duration?
  /// The host name was resolved; `nil` on a reused connection.
  public var domainLookupEnd: Duration?
  /// The TCP connection was being opened; `nil` on a reused connection.
  public var connectStart: Duration?
  /// The connection was open, TLS included where the transport counts it so (Apple's
  /// `connectEndDate`); `nil` on a reused connection.
  public var connectEnd: Duration?
  /// The TLS handshake began; `nil` without TLS or on a reused connection.
  public var secureConnectionStart: Duration?
  /// The TLS handshake was done; `nil` without TLS or on a reused connection.
  public var secureConnectionEnd: Duration?
  /// The request was about to be sent.
  public var requestStart: Duration?
  /// The first byte of the response arrived.
  public var responseStart: Duration?
  /// The last byte of the response arrived.
  public var responseEnd: Duration?
  /// Bytes of the request's head that were sent.
  public var requestHeaderBytes: Int?
  /// Bytes of the request's body that were sent.
  public var requestBodyBytes: Int?
  /// Bytes of the response's head that arrived.
  public var responseHeaderBytes: Int?
  /// Bytes of the response's body that arrived, as decoded: the size of the body the caller
  /// reads, not the compressed size on the wire, on every transport (on Apple platforms,
  /// URLSession's `countOfResponseBodyBytesAfterDecoding`).
  public var responseBodyBytes: Int?
  /// Whether the request went over a connection an earlier one had opened.
  public var reusedConnection: Bool?
  /// The HTTP version spoken, as its ALPN name: `http/1.0`, `http/1.1`, `h2` or `h3` (as
  /// Apple's `networkProtocolName`).
  public var protocolName: String?
  /// The server's IP address.
  public var remoteAddress: String?
  /// The server's port.
  public var remotePort: Int?
  /// The redirects followed before this response, oldest first, each with its own metrics.
  public var redirects: [TransferMetrics] = []

  /// How many redirects were followed before this response.
  public var redirectCount: Int { redirects.count }

  /// Metrics with every field unknown; a transport sets what it knows.
  public init() {}
}
