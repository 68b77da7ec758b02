import Errand
import Foundation

/// What a ``StubTransport`` answers: a response, or an error to throw.
///
/// ```swift
/// .json([Dog(name: "Rex")])                       // 200 with a JSON body
/// .status(500)                                    // a bare status
/// .status(401, body: Data("expired".utf8), headers: ["WWW-Authenticate": "Bearer"])
/// .response(HTTPResponse(status: 200, headers: ["ETag": "v1"], body: data))
/// .error(URLError(.notConnectedToInternet))
/// ```
public struct StubResponse: Sendable {
  enum Outcome: Sendable {
    case response(HTTPResponse)
    case failure(any Error)
  }

  let outcome: Outcome

  init(_ outcome: Outcome) {
    self.outcome = outcome
  }

  /// A full response, sent as given.
  /// - Parameter response: The response.
  /// - Returns: The stub response.
  public static func response(_ response: HTTPResponse) -> StubResponse {
    StubResponse(.response(response))
  }

  /// A status with an optional body and headers.
  /// - Parameters:
  ///   - code: The status code.
  ///   - body: The body bytes.
  ///   - headers: The header fields.
  /// - Returns: The stub response.
  public static func status(_ code: Int, body: Data = Data(), headers: HTTPHeaders = [:])
    -> StubResponse
  {
    .response(HTTPResponse(status: code, headers: headers, body: body))
  }

  /// A JSON body, encoded with sorted keys, and `Content-Type: application/json`.
  ///
  /// A value that cannot be encoded makes the stub throw the encoding error when it is asked.
  /// - Parameters:
  ///   - value: The value to encode.
  ///   - status: The status code.
  ///   - encoder: The encoder; one that sorts keys by default.
  /// - Returns: The stub response.
  public static func json<Value: Encodable>(
    _ value: Value, status: Int = 200, encoder: JSONEncoder? = nil
  ) -> StubResponse {
    let encoder =
      encoder
      ?? {
        let sorted = JSONEncoder()
        sorted.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return sorted
      }()
    do {
      let body = try encoder.encode(value)
      return .status(status, body: body, headers: ["Content-Type": "application/json"])
    } catch {
      return .error(error)
    }
  }

  /// An error for the transport to throw, such as `URLError(.notConnectedToInternet)`.
  /// - Parameter error: The error.
  /// - Returns: The stub response.
  public static func error(_ error: any Error) -> StubResponse {
    StubResponse(.failure(error))
  }
}
