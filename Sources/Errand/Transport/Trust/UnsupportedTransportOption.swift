import Foundation

/// A transport was asked for something it cannot do on this platform (a pinned key, a client
/// certificate, a certificate authority of your own with URLSession on Linux, say): it refuses
/// when it is created, rather than sending without it.
public struct UnsupportedTransportOption: Error, Hashable, CustomStringConvertible,
  LocalizedError
{
  /// The option, for example `trust.pins`.
  public var option: String
  /// The transport that refused it.
  public var transport: String
  /// Why, and what can honour it.
  public var reason: String

  /// An error about `option`.
  /// - Parameters:
  ///   - option: The option.
  ///   - transport: The transport that refused it.
  ///   - reason: Why, and what can honour it.
  public init(option: String, transport: String, reason: String) {
    self.option = option
    self.transport = transport
    self.reason = reason
  }

  /// The option, the transport and the reason, on one line.
  public var description: String { "\(transport) cannot honour \(option): \(reason)" }
  /// The same as ``description``.
  public var errorDescription: String? { description }
}
