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
    let acceptable = endpoint.acceptableStatusCodes ?? configuration.acceptableStatusCodes
    guard acceptable.contains(response.status) else {
      var rejected = response
      if let failure = endpoint.failureDecoding ?? configuration.failureDecoding {
        rejected.decodedFailure = failure.decode(response.body, configuration.decoder)
      }
      throw APIError.unacceptableStatus(rejected)
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
}
