import Errand
import Foundation

extension HAR {
  /// Read a cassette file as a HAR, to open its exchanges in browser developer tools, Charles or
  /// Proxyman, redacted as everything Errand writes is.
  ///
  /// Cassettes keep no dates or timings: every entry starts at 1970-01-01T00:00:00.000Z and takes
  /// no time. HAR has no place for a streamed body's chunks or for a connection that dropped
  /// after them: the entry holds the whole body.
  /// - Parameters:
  ///   - url: The cassette file.
  ///   - redaction: What is secret, on top of what the cassette already hides.
  /// - Throws: ``CassetteError`` for a missing or invalid cassette.
  public init(cassetteAt url: URL, redaction: Redaction = .default) throws(CassetteError) {
    let cassette = try Cassette.load(from: url)
    self.init(
      entries: cassette.exchanges.map { exchange in
        HAR.Entry(
          startedDateTime: HAR.unknownDate, request: HAR.Request(exchange.request),
          response: HAR.Response(exchange.response))
      })
    self = redacted(with: redaction)
  }

  /// Write the archive as a cassette file that ``CassetteTransport`` replays (and a person can
  /// edit), redacted as a recorded cassette is. Entries with status `0` are left out
  /// (``skippedEntries``).
  /// - Parameters:
  ///   - url: The cassette file; its folder is created if need be.
  ///   - redaction: What is secret.
  ///   - limits: How large a body to accept.
  /// - Throws: ``HARError`` naming the entry and the field that cannot be replayed, or
  ///   `.unwritable` naming the file.
  public func writeCassette(
    to url: URL, redaction: Redaction = .default, limits: Limits = .default
  ) throws(HARError) {
    var cassette = Cassette()
    cassette.exchanges = try replayedExchanges(limits: limits).map {
      $0.exchange.redacted(with: redaction)
    }
    do {
      try cassette.save(to: url)
    } catch {
      throw HARError(.unwritable, reason: error.description)
    }
  }
}
