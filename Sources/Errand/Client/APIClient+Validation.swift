import Foundation

extension APIClient {
  /// Check a response's status against the endpoint's acceptable status codes, else the client's.
  /// - Parameters:
  ///   - response: The response to check.
  ///   - endpoint: The endpoint that asked for it.
  /// - Throws: ``APIError/unacceptableStatus(_:)`` with the response when the status is outside
  ///   the acceptable range.
  public nonisolated func validate<Value>(_ response: HTTPResponse, for endpoint: Endpoint<Value>)
    throws
  {
    guard accepts(response.status, for: endpoint) else {
      throw unacceptable(response, for: endpoint)
    }
  }

  /// Decode a response with the endpoint's strategy and the client's default JSON decoder.
  /// - Parameters:
  ///   - response: The response to read.
  ///   - endpoint: The endpoint whose strategy to use.
  /// - Returns: The decoded value.
  /// - Throws: ``APIError/decoding(_:_:)`` with the underlying error and the response.
  public nonisolated func decode<Value>(_ response: HTTPResponse, for endpoint: Endpoint<Value>)
    throws -> Value
  {
    do {
      return try endpoint.decoding.decode(response, defaultDecoder: configuration.decoder)
    } catch let error as APIError {
      throw error
    } catch {
      throw APIError.decoding(error, response)
    }
  }

  /// Whether the endpoint (else the client) counts `status` as success.
  nonisolated func accepts<Value>(_ status: Int, for endpoint: Endpoint<Value>) -> Bool {
    (endpoint.acceptableStatusCodes ?? configuration.acceptableStatusCodes).contains(status)
  }

  /// The error for an unacceptable answer, its body read into the app's error model when the
  /// endpoint or the client says how (``FailureDecoding``).
  nonisolated func unacceptable<Value>(_ response: HTTPResponse, for endpoint: Endpoint<Value>)
    -> APIError
  {
    var rejected = response
    if let failure = endpoint.failureDecoding ?? configuration.failureDecoding {
      rejected.decodedFailure = failure.decode(response.body, configuration.decoder)
    }
    return .unacceptableStatus(rejected)
  }
}
