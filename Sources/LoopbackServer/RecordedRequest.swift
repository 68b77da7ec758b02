import Errand
import Foundation

/// A request as the loopback server received it, byte for byte.
public struct RecordedRequest: Sendable, Hashable {
  /// The method, for example `GET`.
  public var method: String
  /// The request target: the path and query as sent, for example `/dogs?page=2`.
  public var target: String
  /// The header fields in the order received.
  public var headers: HTTPHeaders
  /// The body, de-chunked when it was sent chunked.
  public var body: Data
  /// Which connection it came on, counting from 1 in the order the server accepted them: two
  /// requests with the same number shared a connection (see
  /// ``ScriptedResponse/keepsConnectionOpen``).
  public var connection: Int
  /// The HTTP version of the request line (`HTTP/1.1`, `HTTP/1.0`): an answer to an HTTP/1.0
  /// request is never chunked.
  package var version = "HTTP/1.1"

  /// The path without the query.
  public var path: String {
    String(target.prefix { $0 != "?" })
  }

  /// Create a recorded request.
  /// - Parameters:
  ///   - method: The method.
  ///   - target: The path and query as sent.
  ///   - headers: The header fields.
  ///   - body: The body.
  ///   - connection: Which connection it came on, counting from 1.
  public init(
    method: String, target: String, headers: HTTPHeaders, body: Data, connection: Int = 1
  ) {
    self.method = method
    self.target = target
    self.headers = headers
    self.body = body
    self.connection = connection
  }

  init(
    method: String, target: String, headers: HTTPHeaders, body: Data, connection: Int,
    version: String
  ) {
    self.init(method: method, target: target, headers: headers, body: body, connection: connection)
    self.version = version
  }
}
