import Foundation

/// How to read the body of an answer whose status is not acceptable into the app's own error
/// model, such as an RFC 9457 problem document.
///
/// ```swift
/// struct Problem: Decodable, Sendable { var title: String }
/// let dog = Endpoint<Dog>(path: "dogs/7").failure(Problem.self)
/// do { _ = try await client.send(dog) }
/// catch let error as APIError { print(error.decodedBody(as: Problem.self)?.title ?? "no problem body") }
/// ```
///
/// A body that does not decode as the type leaves the error as it was: ``APIError/unacceptableStatus(_:)``
/// with the raw body.
public struct FailureDecoding: Sendable {
  let decode: @Sendable (_ body: Data, _ defaultDecoder: JSONDecoder) -> (any Sendable)?

  /// Decode error bodies as JSON of this type.
  /// - Parameters:
  ///   - type: The error model.
  ///   - decoder: The decoder; the client's by default.
  /// - Returns: The strategy.
  public static func json<Failure: Decodable & Sendable>(
    _ type: Failure.Type, decoder: JSONDecoder? = nil
  ) -> FailureDecoding {
    FailureDecoding { body, defaultDecoder in
      try? (decoder ?? defaultDecoder).decode(Failure.self, from: body)
    }
  }
}

extension Endpoint {
  /// This endpoint, reading the body of an unacceptable answer as `type`, reachable with
  /// ``APIError/decodedBody(as:)``.
  /// - Parameters:
  ///   - type: The error model.
  ///   - decoder: The decoder; the client's by default.
  /// - Returns: The endpoint.
  public func failure<Failure: Decodable & Sendable>(
    _ type: Failure.Type, decoder: JSONDecoder? = nil
  ) -> Endpoint {
    var copy = self
    copy.failureDecoding = .json(type, decoder: decoder)
    return copy
  }
}

extension APIError {
  /// The body of an unacceptable answer as the app's error model: the value the endpoint's (or
  /// the client's) ``FailureDecoding`` decoded, else the body decoded as JSON now; `nil` for other
  /// errors and for a body that is not such a value.
  /// - Parameter type: The error model.
  /// - Returns: The decoded value, or `nil`.
  public func decodedBody<Failure: Decodable>(as type: Failure.Type) -> Failure? {
    guard case .unacceptableStatus(let response) = self else { return nil }
    if let decoded = response.decodedFailure as? Failure {
      return decoded
    }
    return try? JSONDecoder().decode(Failure.self, from: response.body)
  }
}
