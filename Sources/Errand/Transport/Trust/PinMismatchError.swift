import Foundation

/// The server of a pinned host presented a public key that matches none of the keys pinned for
/// it (``TrustPolicy/PinnedKeys``): the connection was closed during the TLS handshake, before
/// any byte of the request was written. A call sees it as ``APIError/transport(_:)``.
///
/// It names the host and the keys expected, never the key presented or the certificate chain.
/// For a report-only pin, the call's listeners hear it in
/// ``CallEvent/Kind/pinMismatchReported(_:)`` and the call goes on.
public struct PinMismatchError: Error, LocalizedError, Hashable, CustomStringConvertible {
  /// The host whose server presented the key.
  public var host: String
  /// The SHA-256 digests pinned for it, in base64.
  public var expected: [String]
  /// Whether the pins were report-only (the call went on).
  public var reportOnly: Bool
  /// The call this error ended, where the client knew it (``APIError/context`` reads it). It
  /// does not take part in equality or hashing.
  public var context: APIError.Context?

  /// An error for `host`.
  /// - Parameters:
  ///   - host: The host.
  ///   - expected: The digests pinned for it.
  ///   - reportOnly: Whether they were report-only.
  public init(host: String, expected: [String], reportOnly: Bool = false) {
    self.host = host
    self.expected = expected
    self.reportOnly = reportOnly
  }

  /// Compare the host, the digests and the mode; the context is not part of the value.
  public static func == (lhs: PinMismatchError, rhs: PinMismatchError) -> Bool {
    lhs.host == rhs.host && lhs.expected == rhs.expected && lhs.reportOnly == rhs.reportOnly
  }

  /// Hash consistently with `==`.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(host)
    hasher.combine(expected)
    hasher.combine(reportOnly)
  }

  /// The host and the keys expected, in one sentence.
  public var description: String {
    let keys = expected.map { "sha256/\($0)" }.joined(separator: ", ")
    return "the server of \(host) presented a public key that matches none pinned for it "
      + "(\(keys))" + (reportOnly ? "; reported only, the call went on" : "; nothing was sent")
  }

  /// The same as ``description``.
  public var errorDescription: String? { description }
}

extension PinMismatchError: CarriesCallContext {}
