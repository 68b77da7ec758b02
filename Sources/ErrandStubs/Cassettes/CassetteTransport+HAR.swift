import Errand
import Foundation

extension CassetteTransport {
  /// A cassette transport that replays a HAR (captured in browser developer tools, Charles,
  /// Proxyman or exported by Errand) with the cassette's matching rules, and records nothing.
  /// Unlike a cassette's, the default matching (``Matching/har``) compares the host and the
  /// credential headers too: a HAR spans hosts and callers.
  ///
  /// ```swift
  /// let har = try HAR(data: try Fixtures.nearest().data("har/checkout.har"))
  /// let client = APIClient(baseURL: base, transport: try CassetteTransport(har: har))
  /// ```
  ///
  /// Each entry replays its response's status, headers and body (decoded from base64 when the
  /// HAR says so; empty when the tool kept no text). Entries with status `0` (a request that got
  /// no response) are left out: ``HAR/skippedEntries`` says which. HTTP/2 pseudo-headers and
  /// framing headers (`Host`, `Content-Length`, …) are left out of the recorded requests, which
  /// matters only for `.headers` matching.
  /// - Parameters:
  ///   - har: The archive.
  ///   - matching: What a request must share with a recorded one: by default (``Matching/har``)
  ///     the method, the scheme, host and port, the path, the query and the credential headers.
  ///   - allowsRepeats: Whether an entry may answer more than once.
  ///   - limits: How large a body to replay.
  ///   - fileID: Where the transport is created, for ``verifyAllPlayed()``.
  ///   - filePath: Where the transport is created.
  ///   - line: Where the transport is created.
  ///   - column: Where the transport is created.
  /// - Throws: ``HARError`` naming the entry and the field that cannot be replayed (a URL that
  ///   does not parse, a header with CR or LF, a status out of range, invalid base64, a body
  ///   over the limit).
  public init(
    har: HAR, matching: Matching = .har, allowsRepeats: Bool = false,
    limits: HAR.Limits = .default, fileID: String = #fileID, filePath: String = #filePath,
    line: Int = #line, column: Int = #column
  ) throws(HARError) {
    let name = har.log.creator.name.isEmpty ? "a tool" : har.log.creator.name
    try self.init(
      har: har,
      url: URL(fileURLWithPath: "/HAR from \(name.replacingOccurrences(of: "/", with: "-"))"),
      matching: matching, allowsRepeats: allowsRepeats, limits: limits,
      location: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// A cassette transport that replays a HAR file, as ``init(har:matching:allowsRepeats:limits:fileID:filePath:line:column:)``
  /// does; errors name the file.
  /// - Parameters:
  ///   - url: The HAR file.
  ///   - matching: What a request must share with a recorded one: by default (``Matching/har``)
  ///     the method, the scheme, host and port, the path, the query and the credential headers.
  ///   - allowsRepeats: Whether an entry may answer more than once.
  ///   - limits: How large a document and a body to read.
  ///   - fileID: Where the transport is created, for ``verifyAllPlayed()``.
  ///   - filePath: Where the transport is created.
  ///   - line: Where the transport is created.
  ///   - column: Where the transport is created.
  /// - Throws: ``HARError`` for a file that cannot be read, is not a HAR or cannot be replayed.
  public init(
    harAt url: URL, matching: Matching = .har, allowsRepeats: Bool = false,
    limits: HAR.Limits = .default, fileID: String = #fileID, filePath: String = #filePath,
    line: Int = #line, column: Int = #column
  ) throws(HARError) {
    try self.init(
      har: try HAR(contentsOf: url, limits: limits), url: url, matching: matching,
      allowsRepeats: allowsRepeats, limits: limits,
      location: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  private init(
    har: HAR, url: URL, matching: Matching, allowsRepeats: Bool, limits: HAR.Limits,
    location: CallSite
  ) throws(HARError) {
    var cassette = Cassette()
    cassette.exchanges = try har.replayedExchanges(limits: limits).map(\.exchange)
    self.init(
      replaying: cassette, url: url, matching: matching, allowsRepeats: allowsRepeats,
      location: location)
  }
}
