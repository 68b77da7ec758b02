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

  /// Never answers; the call ends only when its task is cancelled or its timeout passes. (Moya's
  /// `.never` means something else, "this endpoint is real": that is ``passthrough``.)
  public static var hang: StubResponse { StubResponse(.hang) }

  /// Send the request on to the stub's upstream transport and answer with what it answers:
  /// "this endpoint is real" (Moya's `.never` stubbing behaviour). The stub must have been created
  /// with ``StubTransport/init(passthrough:delay:clock:)``; the request is still recorded, and
  /// listed in ``StubTransport/forwardedRequests``.
  public static var passthrough: StubResponse { StubResponse(.passthrough) }

  /// A 200 whose JSON body is cut in half, as a server that stops writing would leave it.
  /// - Parameter value: The value whose encoding is cut.
  /// - Returns: The stub response.
  public static func truncated<Value: Encodable>(_ value: Value) -> StubResponse {
    guard let body = try? JSONEncoder.sorted().encode(value) else { return .json(value) }
    return .status(
      200, body: body.prefix(body.count / 2), headers: ["Content-Type": "application/json"])
  }

  /// A 200 that claims JSON but holds text that is not JSON (`error`).
  public static var invalidJSON: StubResponse {
    .status(200, body: Data("error".utf8), headers: ["Content-Type": "application/json"])
  }
}
