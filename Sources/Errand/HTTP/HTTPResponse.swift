import Foundation

/// An HTTP response as a transport returns it: status, headers and the whole body.
///
/// In a streamed call (``APIClient/stream(_:)`` and the calls built on it) the response reaches
/// middleware as soon as its head arrives: ``body`` is empty and ``bodyStream`` carries the body
/// as it arrives. A middleware that needs the whole body collects it with
/// ``collectingBody(upTo:)``.
///
/// Equality and hashing compare status, headers, body and URL; ``request``, ``attempts``,
/// ``retryPastDeadline``, ``bodyStream``, ``decodedFailure``, ``cacheStatus`` and ``metrics`` are
/// context and do not take part.
public struct HTTPResponse: Sendable, Hashable {
  /// The status code, for example `200`.
  public var status: Int
  /// The header fields.
  public var headers: HTTPHeaders
  /// The body bytes; empty when the response has no body.
  public var body: Data
  /// The URL that produced the response, after redirects, where the transport knows it.
  public var url: URL?
  /// The request that produced the response, where known; ``APIClient`` fills it in, so error
  /// messages can name the method.
  public internal(set) var request: HTTPRequest?
  /// How many times the request was sent to get this response; retries raise it above 1.
  public internal(set) var attempts = 1
  /// The wait ``RetryMiddleware`` would have made before another attempt, when it made none
  /// because that attempt could not have started before the call's deadline; `nil` otherwise.
  public internal(set) var retryPastDeadline: Duration?
  /// The body as it arrives, in a streamed call; `nil` when ``body`` holds the whole body.
  public var bodyStream: HTTPBody?
  /// The body of an unacceptable answer as the app's error model, when the endpoint or client
  /// says how to read it (``FailureDecoding``) and it decodes; read it with
  /// ``APIError/decodedBody(as:)``.
  public internal(set) var decodedFailure: (any Sendable)?
  /// Where the response came from when a ``CachingMiddleware`` handled the call: a fresh stored
  /// response, the network, a stored response the server confirmed, or a stale one; `nil` when
  /// no cache took part.
  public internal(set) var cacheStatus: CacheStatus?
  /// How the transfer went (phases, sizes, connection, redirects), as the transport reports it;
  /// `nil` from a transport that reports none.
  public var metrics: TransferMetrics? {
    get { metricsBox?.metrics }
    set { metricsBox = newValue.map(MetricsBox.init) }
  }
  /// The metrics behind a reference, so that a response stays small to copy.
  private var metricsBox: MetricsBox?

  /// Create a response.
  /// - Parameters:
  ///   - status: The status code.
  ///   - headers: The header fields.
  ///   - body: The body bytes.
  ///   - url: The final URL, where known.
  ///   - request: The request that produced the response, where known.
  public init(
    status: Int, headers: HTTPHeaders = [:], body: Data = Data(), url: URL? = nil,
    request: HTTPRequest? = nil
  ) {
    self.status = status
    self.headers = headers
    self.body = body
    self.url = url
    self.request = request
  }

  /// Create the head of a streamed response: its body follows in `bodyStream`.
  /// - Parameters:
  ///   - status: The status code.
  ///   - headers: The header fields.
  ///   - url: The final URL, where known.
  ///   - bodyStream: The body, as it arrives.
  public init(status: Int, headers: HTTPHeaders = [:], url: URL? = nil, bodyStream: HTTPBody) {
    self.init(status: status, headers: headers, url: url)
    self.bodyStream = bodyStream
  }

  /// This response with its body in ``bodyStream``: unchanged when it already streams, else the
  /// whole ``body`` as one chunk.
  /// - Returns: The response, its ``body`` empty.
  public func streamingBody() -> HTTPResponse {
    guard bodyStream == nil else { return self }
    var streamed = self
    streamed.bodyStream = HTTPBody(body)
    streamed.body = Data()
    return streamed
  }

  /// This response with its streamed body read into ``body`` (unchanged when it has none), and
  /// the metrics its transport reported at the body's end (``HTTPBody/metrics``), when it did.
  /// - Parameter maximum: The most bytes to accept.
  /// - Returns: The response with the whole body.
  /// - Throws: `URLError(.dataLengthExceedsMaximum)` when the body is longer, or the error that
  ///   cut the transfer short.
  public func collectingBody(upTo maximum: Int = .max) async throws -> HTTPResponse {
    guard let bodyStream else { return self }
    var whole = self
    whole.body = try await bodyStream.collect(upTo: maximum)
    whole.bodyStream = nil
    return whole.withMetrics(atEndOf: bodyStream)
  }

  /// Compare status, headers, body and URL; the request is context, not part of the value.
  public static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
    lhs.status == rhs.status && lhs.headers == rhs.headers && lhs.body == rhs.body
      && lhs.url == rhs.url
  }

  /// Hash consistently with `==`.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(status)
    hasher.combine(headers)
    hasher.combine(body)
    hasher.combine(url)
  }
}

extension HTTPResponse: CustomStringConvertible {
  /// The status and body size, for example `HTTP 404 (12 bytes)`.
  public var description: String { "HTTP \(status) (\(body.count) bytes)" }
}

/// ``HTTPResponse/metrics``, held by reference: a value of a few hundred bytes that responses,
/// copied at every step of a call, carry without copying.
private final class MetricsBox: Sendable {
  let metrics: TransferMetrics

  init(_ metrics: TransferMetrics) {
    self.metrics = metrics
  }
}
