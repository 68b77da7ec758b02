import Foundation

/// A line of a streamed body (``ResponseStream/lines``, ``JSONLines``) that grew past
/// ``ResponseStream/maximumLineLength``, or an event of a Server-Sent Events stream that grew
/// past ``APIClient/Configuration/maximumEventSize``, before it ended. Iteration throws it as ``APIError/transport(_:)`` and cancels the request: a server
/// that never sends a line ending cannot fill the app's memory.
///
/// ```swift
/// if let tooLong = error.underlyingError as? LineTooLongError { print(tooLong.limit) }
/// ```
public struct LineTooLongError: Error, LocalizedError, Hashable {
  /// What grew too long.
  public enum Unit: String, Sendable, Hashable {
    /// A line of ``ResponseStream/lines`` or ``JSONLines``.
    case line
    /// The data of one Server-Sent Event (its `data` lines together), or one of its lines.
    case event
  }

  /// What grew too long.
  public var unit: Unit
  /// The limit it crossed, in bytes.
  public var limit: Int
  /// The call this error ended, where the client knew it: the request, the attempts made and
  /// the transfer's metrics (``APIError/context`` reads it). It does not take part in equality
  /// or hashing.
  public var context: APIError.Context?

  /// Create the error.
  /// - Parameters:
  ///   - unit: What grew too long.
  ///   - limit: The limit it crossed, in bytes.
  public init(unit: Unit, limit: Int) {
    self.unit = unit
    self.limit = limit
  }

  /// Compare the unit and the limit; the context is not part of the value.
  public static func == (lhs: LineTooLongError, rhs: LineTooLongError) -> Bool {
    lhs.unit == rhs.unit && lhs.limit == rhs.limit
  }

  /// Hash consistently with `==`.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(unit)
    hasher.combine(limit)
  }

  /// What happened, and how to allow more.
  public var errorDescription: String? {
    let setting =
      switch unit {
      case .line:
        "ResponseStream.maximumLineLength (or APIClient.Configuration.maximumLineLength)"
      case .event: "APIClient.Configuration.maximumEventSize"
      }
    let what = unit == .event ? "an event" : "a line"
    return "\(what) of the stream grew past \(limit) bytes without ending; set " + setting
      + " to read longer ones."
  }
}

extension LineTooLongError: CarriesCallContext {}
