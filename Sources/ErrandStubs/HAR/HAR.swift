import Errand
import Foundation

/// An HTTP Archive (HAR 1.2): the format browser developer tools, Charles, Proxyman, Postman and
/// mitmproxy read and write for recorded HTTP traffic.
///
/// Read one captured in a browser or a proxy, and replay it in a test:
///
/// ```swift
/// let har = try HAR(data: try Fixtures.nearest().data("har/checkout.har"))
/// let client = APIClient(baseURL: base, transport: try CassetteTransport(har: har))
/// // or, as routes of a stub:
/// try await stub.on(har: har)
/// ```
///
/// Write one from a cassette or from what a ``StubTransport`` answered, to open in any of those
/// tools:
///
/// ```swift
/// let exported = try HAR(cassetteAt: cassetteURL)
/// try await stub.har().write(to: URL(fileURLWithPath: "/tmp/session.har"))
/// ```
///
/// Reading is lenient where tools differ: optional fields may be missing or `null`, sizes may be
/// `-1` or written with a fraction, times may be `-1`, and extras whose names start with `_`
/// (`_initiator`, `_priority`, `_resourceType`, …) are ignored. Writing is strict and stable:
/// valid HAR 1.2, dates in UTC with milliseconds, keys sorted, so that writing, reading and
/// writing again gives the same bytes. Everything written is redacted first (``encoded(redaction:)``).
public struct HAR: Sendable, Hashable, Codable {
  /// The archive: who wrote it, and the entries.
  public var log: Log

  /// Create an archive.
  /// - Parameter log: The archive's log.
  public init(log: Log) {
    self.log = log
  }

  /// Create an archive of entries, written by Errand.
  /// - Parameter entries: The entries, in the order the requests started.
  public init(entries: [Entry]) {
    self.init(log: Log(creator: .errand, entries: entries))
  }

  private enum CodingKeys: String, CodingKey {
    case log
  }

  /// Read an archive, leniently (see ``HAR``).
  /// - Parameter decoder: The decoder.
  /// - Throws: `DecodingError` when `log` is missing or a field has the wrong type.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    log = try container.decode(Log.self, forKey: .log)
  }

  /// Write the archive.
  /// - Parameter encoder: The encoder.
  /// - Throws: The encoder's errors.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(log, forKey: .log)
  }
}
