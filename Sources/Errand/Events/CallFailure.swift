import Foundation

/// How a call failed, as an ``EventListener`` hears it (``CallEvent/Kind/callFailed(error:)``):
/// which step failed, the status or the `URLError` code where there is one, how many attempts
/// were made, and the error's description. Nothing in it is secret.
///
/// ```swift
/// struct FailureCounter: EventListener {
///   func callFailed(_ event: CallEvent, failure: CallFailure) {
///     if failure.kind == .unacceptableStatus, let status = failure.status, status >= 500 {
///       print("\(event.endpoint): server error \(status) after \(failure.attempts) attempts")
///     }
///   }
/// }
/// ```
public struct CallFailure: Sendable, Hashable, CustomStringConvertible {
  /// Which step failed.
  public var kind: APIError.Kind
  /// The status of the answer, for ``APIError/unacceptableStatus(_:)`` and
  /// ``APIError/decoding(_:_:)``; `nil` otherwise.
  public var status: Int?
  /// The code of the `URLError` underneath a ``APIError/transport(_:)`` error, when it is one;
  /// `nil` otherwise.
  public var urlErrorCode: URLError.Code?
  /// How many times the request was sent (``APIError/Context/attempts``): more than 1 when
  /// ``RetryMiddleware`` retried it.
  public var attempts: Int
  /// The error's ``APIError/errorDescription``, which names the request with its secrets hidden.
  public var description: String

  /// Create a failure as a listener would hear it.
  /// - Parameters:
  ///   - kind: Which step failed.
  ///   - status: The status of the answer, if one came.
  ///   - urlErrorCode: The code of the underlying `URLError`, if any.
  ///   - attempts: How many times the request was sent.
  ///   - description: The error's description.
  public init(
    kind: APIError.Kind, status: Int? = nil, urlErrorCode: URLError.Code? = nil, attempts: Int = 1,
    description: String
  ) {
    self.kind = kind
    self.status = status
    self.urlErrorCode = urlErrorCode
    self.attempts = attempts
    self.description = description
  }

  /// The failure of a call that threw `error`.
  /// - Parameter error: The error the call threw.
  public init(_ error: APIError) {
    self.init(
      kind: error.kind, status: error.response?.status, urlErrorCode: error.urlError?.code,
      attempts: error.context?.attempts ?? 1,
      description: error.errorDescription ?? String(describing: error))
  }
}
