import Errand
import Foundation

extension StubResponse {
  /// The request times out: `URLError(.timedOut)`, which the client reports as `.timedOut`.
  public static var timedOut: StubResponse { .error(URLError(.timedOut)) }

  /// The device is offline: `URLError(.notConnectedToInternet)`.
  public static var notConnected: StubResponse { .error(URLError(.notConnectedToInternet)) }

  /// The connection drops before the response is complete: `URLError(.networkConnectionLost)`.
  public static var connectionLost: StubResponse { .error(URLError(.networkConnectionLost)) }

  /// Nothing accepts the connection: `URLError(.cannotConnectToHost)`.
  public static var connectionRefused: StubResponse { .error(URLError(.cannotConnectToHost)) }

  /// The server's key matches none of the keys pinned for the request's host, as a transport
  /// with a `TrustPolicy` reports it: `PinMismatchError` (as `APIError.transport`) naming the
  /// host and the keys the stub's ``StubTransport/trust`` pins for it (none for a stub made
  /// without one). No response arrives.
  public static var pinMismatch: StubResponse { .error(StubPinMismatch()) }

  /// The server requires a client certificate and none was presented (or the one presented was
  /// refused): `URLError(.clientCertificateRequired)`, as both Linux transports and URLSession
  /// on Apple platforms report it.
  public static var clientCertificateRequired: StubResponse {
    .error(URLError(.clientCertificateRequired))
  }

  /// Never answers; the call ends only when its task is cancelled or its timeout passes. (Moya's
  /// `.never` means something else, "this endpoint is real": that is ``passthrough``.)
  public static var hang: StubResponse { StubResponse(.hang) }

  /// Send the request on to the stub's upstream transport and answer with what it answers:
  /// "this endpoint is real" (Moya's `.never` stubbing behaviour). The stub must have been created
  /// with ``StubTransport/init(passthrough:delay:clock:)``; the request is still recorded, and
  /// listed in ``StubTransport/forwardedRequests``.
  public static var passthrough: StubResponse { StubResponse(.passthrough) }

  /// A 200 whose JSON body stops half way because the connection dropped: the first half arrives,
  /// then `URLError(.networkConnectionLost)`, as `URLSessionTransport` reports a server that stops
  /// writing. The client reports `APIError.transport`, not a decoding error.
  /// - Parameter value: The value whose encoding is cut.
  /// - Returns: The stub response.
  public static func truncated<Value: Encodable>(_ value: Value) -> StubResponse {
    guard let body = try? JSONEncoder.sorted().encode(value) else { return .json(value) }
    return .droppedMidBody(
      body, keeping: body.count / 2, headers: ["Content-Type": "application/json"])
  }

  /// The head arrives, then part of the body, then the connection drops:
  /// `URLError(.networkConnectionLost)` after `keeping` bytes (half by default).
  /// - Parameters:
  ///   - body: The whole body the server meant to send.
  ///   - keeping: How many bytes arrive before the drop.
  ///   - status: The status code.
  ///   - headers: The header fields.
  /// - Returns: The stub response.
  public static func droppedMidBody(
    _ body: Data, keeping: Int? = nil, status: Int = 200, headers: HTTPHeaders = [:]
  ) -> StubResponse {
    let kept = body.prefix(max(0, min(keeping ?? body.count / 2, body.count)))
    return .chunks(
      kept.isEmpty ? [] : [Data(kept)], status: status, headers: headers,
      failingWith: URLError(.networkConnectionLost))
  }

  /// The head arrives, then part of the body (or none), then nothing more: the call ends when its
  /// deadline passes (`APIError.timedOut`) or its task is cancelled, as with a server that
  /// stalls after its headers.
  /// - Parameters:
  ///   - body: The bytes that arrive before the stall.
  ///   - status: The status code.
  ///   - headers: The header fields.
  /// - Returns: The stub response.
  public static func stalledAfterHeaders(
    body: Data = Data(), status: Int = 200, headers: HTTPHeaders = [:]
  ) -> StubResponse {
    var stream = StubStream(
      head: HTTPResponse(status: status, headers: headers), chunks: body.isEmpty ? [] : [body],
      interval: .zero, failure: nil)
    stream.stalls = true
    return StubResponse(.stream(stream))
  }

  /// A body that arrives a few bytes at a time: `chunkSize` bytes every `interval` on the stub's
  /// clock (a `TestClock` makes a slow body take no wall time).
  /// - Parameters:
  ///   - body: The whole body.
  ///   - chunkSize: The bytes in each piece.
  ///   - interval: The wait between two pieces.
  ///   - status: The status code.
  ///   - headers: The header fields.
  /// - Returns: The stub response.
  public static func slowBody(
    _ body: Data, chunkSize: Int, interval: Duration, status: Int = 200, headers: HTTPHeaders = [:]
  ) -> StubResponse {
    let size = max(1, chunkSize)
    let chunks = stride(from: 0, to: body.count, by: size).map {
      Data(body[body.startIndex + $0..<body.startIndex + min($0 + size, body.count)])
    }
    return .chunks(chunks, interval: interval, status: status, headers: headers)
  }

  /// A 200 that claims JSON but holds text that is not JSON (`error`).
  public static var invalidJSON: StubResponse {
    .status(200, body: Data("error".utf8), headers: ["Content-Type": "application/json"])
  }
}
