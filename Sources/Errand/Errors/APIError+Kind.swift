import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension APIError {
  /// Which step failed, without the payload: lets tests and callers compare errors whose payloads
  /// are not `Equatable`.
  ///
  /// ```swift
  /// #expect(error.kind == .unacceptableStatus && error.response?.status == 503)
  /// ```
  public enum Kind: String, Sendable, Hashable, CaseIterable {
    /// ``APIError/invalidRequest(_:)``.
    case invalidRequest
    /// ``APIError/transport(_:)``.
    case transport
    /// ``APIError/unacceptableStatus(_:)``.
    case unacceptableStatus
    /// ``APIError/decoding(_:_:)``.
    case decoding
    /// ``APIError/timedOut(_:)``.
    case timedOut
    /// ``APIError/cancelled(_:)``.
    case cancelled

    /// The kind of an error.
    /// - Parameter error: The error.
    public init(_ error: APIError) {
      switch error {
      case .invalidRequest: self = .invalidRequest
      case .transport: self = .transport
      case .unacceptableStatus: self = .unacceptableStatus
      case .decoding: self = .decoding
      case .timedOut: self = .timedOut
      case .cancelled: self = .cancelled
      }
    }
  }

  /// Which step failed.
  public var kind: Kind { Kind(self) }

  /// The response, for ``unacceptableStatus(_:)`` and ``decoding(_:_:)``; `nil` otherwise.
  public var response: HTTPResponse? {
    switch self {
    case .unacceptableStatus(let response), .decoding(_, let response): response
    default: nil
    }
  }

  /// The error underneath, for ``transport(_:)`` and ``decoding(_:_:)``; `nil` otherwise.
  public var underlyingError: (any Error)? {
    switch self {
    case .transport(let underlying), .decoding(let underlying, _): underlying
    default: nil
    }
  }

  /// The `URLError` underneath a ``transport(_:)`` error, when it is one.
  public var urlError: URLError? {
    underlyingError as? URLError
  }

  /// The reason of an ``invalidRequest(_:)`` error; `nil` otherwise.
  public var invalidRequestReason: String? {
    if case .invalidRequest(let reason) = self { reason } else { nil }
  }
}
