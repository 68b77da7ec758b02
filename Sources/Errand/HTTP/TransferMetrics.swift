import Foundation

/// How one transfer went, as its transport saw it: when each phase ended, counted from the start
/// of the transfer, how many bytes went each way, and over which connection. A field the
/// transport cannot know is `nil`, never invented.
///
/// `CurlTransport` fills it from libcurl (`curl_easy_getinfo`); a streamed response's head
/// carries what was known when the head arrived (no ``responseEnd``, body sizes so far).
/// `URLSessionTransport` and `StubTransport` do not fill it yet.
///
/// ```swift
/// let response = try await client.response(for: endpoint).response
/// if let metrics = response.metrics, let firstByte = metrics.responseStart {
///   print("first byte after \(firstByte), \(metrics.reusedConnection == true ? "reused" : "new") connection")
/// }
/// ```
public struct TransferMetrics: Sendable, Hashable {
  /// When the transfer started (wall time).
  public var start: Date?
  /// The host name was resolved.
  public var domainLookupEnd: Duration?
  /// The TCP connection was open.
  public var connectEnd: Duration?
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
  /// Bytes of the response's body that arrived (as decoded).
  public var responseBodyBytes: Int?
  /// Whether the request went over a connection an earlier one had opened.
  public var reusedConnection: Bool?
  /// The HTTP version spoken, such as `HTTP/1.1` or `HTTP/2`.
  public var protocolName: String?
  /// The server's IP address.
  public var remoteAddress: String?
  /// The server's port.
  public var remotePort: Int?

  /// Metrics with every field unknown; a transport sets what it knows.
  public init() {}
}
