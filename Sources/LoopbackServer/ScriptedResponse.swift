import Foundation

/// What the loopback server does with one request: the response and how to misbehave while
/// sending it.
public struct ScriptedResponse: Sendable {
  /// How the exchange ends.
  public enum Ending: Sendable, Hashable {
    /// Send everything, then close the connection in an orderly way.
    case complete
    /// Send this many body bytes, then close in an orderly way (a truncated body).
    case closeAfterBodyBytes(Int)
    /// Send this many body bytes, then reset the connection (RST).
    case resetAfterBodyBytes(Int)
    /// Close without sending anything.
    case closeWithoutResponse
  }

  /// The status code.
  public var status: Int
  /// The header fields, in order; `Content-Length` (or `Transfer-Encoding`) and
  /// `Connection: close` are added unless present. With `Connection: keep-alive` the server
  /// keeps the connection open for the next request (``keepsConnectionOpen``).
  public var headers: [(String, String)]
  /// The body bytes.
  public var body: Data
  /// Send the body with chunked transfer encoding, in chunks of this many bytes.
  public var chunkSize: Int?
  /// Send the body with chunked transfer encoding, in chunks of these lengths (they win over
  /// `chunkSize`); bytes beyond their sum go in one last chunk.
  public var chunkLengths: [Int]?
  /// Wait this long between chunks: a slow body, or an event stream.
  public var chunkInterval: Duration = .zero
  /// Wait this long before sending the status line.
  public var delayBeforeHeaders: Duration
  /// Wait this long after sending half of the body.
  public var delayMidBody: Duration
  /// How the exchange ends.
  public var ending: Ending
  /// Bytes to send instead of a response built from the fields above, then close: a status line
  /// that is not HTTP, a bad chunk size, a `1xx` before the answer.
  public var raw: Data?

  /// Create a scripted response.
  /// - Parameters:
  ///   - status: The status code.
  ///   - headers: The header fields, in order.
  ///   - body: The body bytes.
  ///   - chunkSize: Send the body chunked, in chunks of this size.
  ///   - delayBeforeHeaders: Wait before the status line.
  ///   - delayMidBody: Wait after half the body.
  ///   - ending: How the exchange ends.
  public init(
    status: Int = 200, headers: [(String, String)] = [], body: Data = Data(), chunkSize: Int? = nil,
    delayBeforeHeaders: Duration = .zero, delayMidBody: Duration = .zero, ending: Ending = .complete
  ) {
    self.status = status
    self.headers = headers
    self.body = body
    self.chunkSize = chunkSize
    self.delayBeforeHeaders = delayBeforeHeaders
    self.delayMidBody = delayMidBody
    self.ending = ending
  }

  /// Whether the server reads the client's next request on the same connection after this
  /// response: when the headers say `Connection: keep-alive` and the response ends
  /// ``Ending/complete``. Otherwise the connection is closed once the response is sent.
  public var keepsConnectionOpen: Bool {
    raw == nil && ending == .complete
      && headers.contains { name, value in
        name.caseInsensitiveCompare("Connection") == .orderedSame
          && value.caseInsensitiveCompare("keep-alive") == .orderedSame
      }
  }

  /// This response, with `Connection: keep-alive` in place of `Connection: close`: the client
  /// may send its next request on the same connection (``RecordedRequest/connection`` tells).
  /// - Returns: The response.
  public func keepingConnectionOpen() -> ScriptedResponse {
    var response = self
    response.headers.removeAll { $0.0.caseInsensitiveCompare("Connection") == .orderedSame }
    response.headers.append(("Connection", "keep-alive"))
    return response
  }

  /// A chunked response whose chunks are sent one by one, `interval` apart: a slow body.
  /// - Parameters:
  ///   - chunks: The chunks, in order.
  ///   - interval: The wait between two chunks.
  ///   - headers: The header fields.
  ///   - ending: How the exchange ends.
  /// - Returns: The response.
  public static func chunks(
    _ chunks: [Data], interval: Duration = .zero, headers: [(String, String)] = [],
    ending: Ending = .complete
  ) -> ScriptedResponse {
    var response = ScriptedResponse(
      headers: headers, body: chunks.reduce(into: Data()) { $0.append($1) }, chunkSize: .max,
      ending: ending)
    response.chunkLengths = chunks.map(\.count)
    response.chunkInterval = interval
    return response
  }

  /// A Server-Sent Events stream: each event text is one chunk, `interval` apart.
  /// - Parameters:
  ///   - events: The events as they appear on the wire, such as `"data: 1\n\n"`.
  ///   - interval: The wait between two events.
  ///   - ending: How the exchange ends.
  /// - Returns: The response.
  public static func events(
    _ events: [String], interval: Duration = .zero, ending: Ending = .complete
  ) -> ScriptedResponse {
    chunks(
      events.map { Data($0.utf8) }, interval: interval,
      headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")],
      ending: ending)
  }

  /// Exactly these bytes, then an orderly close.
  /// - Parameter text: What to send, as UTF-8.
  /// - Returns: The response.
  public static func raw(_ text: String) -> ScriptedResponse {
    var response = ScriptedResponse()
    response.raw = Data(text.utf8)
    return response
  }

  /// A response with a text body.
  /// - Parameters:
  ///   - text: The body, sent as UTF-8 with `Content-Type: text/plain; charset=utf-8`.
  ///   - status: The status code.
  /// - Returns: The response.
  public static func text(_ text: String, status: Int = 200) -> ScriptedResponse {
    ScriptedResponse(
      status: status, headers: [("Content-Type", "text/plain; charset=utf-8")],
      body: Data(text.utf8))
  }

  /// A response with a JSON body.
  /// - Parameters:
  ///   - json: The JSON text.
  ///   - status: The status code.
  /// - Returns: The response.
  public static func json(_ json: String, status: Int = 200) -> ScriptedResponse {
    ScriptedResponse(
      status: status, headers: [("Content-Type", "application/json")], body: Data(json.utf8))
  }

  /// A redirect to another URL.
  /// - Parameters:
  ///   - location: Where to go.
  ///   - status: The redirect status, 302 by default.
  /// - Returns: The response.
  public static func redirect(to location: URL, status: Int = 302) -> ScriptedResponse {
    ScriptedResponse(status: status, headers: [("Location", location.absoluteString)])
  }
}
