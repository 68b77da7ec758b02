import Foundation

/// A call an ``APIClient`` is running, as ``APIClient/inFlight`` lists it: for diagnostics (what
/// is still running at logout, what a slow screen waits for).
///
/// ```swift
/// for call in client.inFlight { print(call) }   // #12 GET dogs (streamed) [feed], since 10:41:07
/// ```
public struct InFlightCall: Sendable, Hashable, Identifiable, CustomStringConvertible {
  /// How the call reads its answer.
  public enum Kind: String, Sendable, Hashable {
    /// The whole answer at once (``APIClient/send(_:)``, ``APIClient/response(for:)``, uploads,
    /// pages).
    case buffered
    /// The answer as it arrives (``APIClient/stream(_:)``, downloads, event streams): running
    /// until its body has been read to the end, has failed, or its reader has left.
    case streamed
    /// An event stream that reconnects (``APIClient/events(_:reconnect:onState:)``), each loop
    /// reading it from the first event it asks for until it ends, its waits between connections
    /// included; each of its connections is listed too, as ``streamed``. Ending it ends that
    /// loop; a loop started later on the same stream runs.
    case eventStream
  }

  /// The call's number in its client, in the order calls started.
  public let id: UInt64
  /// The endpoint: its method and path (or its URL, redacted as the client's
  /// ``APIClient/Configuration/redaction`` says). A reconnecting event stream is listed by its
  /// latest endpoint, and as `(endpoint being made)` while the closure of
  /// ``APIClient/events(reconnect:onState:endpoint:)`` makes its first one.
  public let endpoint: String
  /// The endpoint's tags (``Endpoint/tags``); for a reconnecting event stream, those of its
  /// latest endpoint (none while its first is being made).
  public let tags: Set<String>
  /// How the call reads its answer.
  public let kind: Kind
  /// When the call started, on the wall clock.
  public let started: Date

  /// The call, on one line: its number, endpoint, kind and tags.
  public var description: String {
    let tags = tags.isEmpty ? "" : " [\(tags.sorted().joined(separator: ", "))]"
    return "#\(id) \(endpoint) (\(kind.rawValue))\(tags)"
  }
}
