@_spi(Transports) import Errand
import Foundation

/// Records real HTTP exchanges into a cassette file and replays them, so that a test written once
/// against a real API runs offline ever after (as Python's vcrpy does).
///
/// ```swift
/// // Records on the first run (the file does not exist yet), replays on every later run.
/// let cassette = CassetteTransport(named: "dogs", mode: .once, upstream: URLSessionTransport())
/// let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, transport: cassette)
/// let dogs = try await client.send(Endpoint<[Dog]>(path: "dogs"))
/// ```
///
/// Secrets never reach the file: headers, query values and JSON or form body fields named by the
/// `Redaction` are written as `<redacted>` (and a redacted query value matches any value on
/// replay). Each recorded exchange plays once unless `allowsRepeats` is set;
/// ``verifyAllPlayed()`` reports exchanges that were never asked for.
public actor CassetteTransport: Transport {
  /// When to record and when to replay.
  public enum Mode: Sendable, Hashable {
    /// Record if the cassette does not exist, else replay only.
    case once
    /// Replay only; a missing cassette or an unmatched request is an error.
    case none
    /// Always record, replacing the cassette.
    case all
    /// Replay what the cassette holds and record requests it does not.
    case newEpisodes
  }

  /// The cassette file.
  public nonisolated let url: URL
  /// When to record and when to replay.
  public nonisolated let mode: Mode
  let upstream: (any Transport)?
  private let matching: Matching
  private let redaction: Redaction
  private let allowsRepeats: Bool
  private let location: CallSite
  /// Why the transport must not touch its file (a name that leads out of its folder), thrown by
  /// every request.
  private let refusal: CassetteError?

  private var cassette: Cassette?
  private var played: [Bool] = []
  private var recording = false

  /// Create a cassette transport for a file.
  /// - Parameters:
  ///   - url: The cassette file.
  ///   - mode: When to record and when to replay.
  ///   - upstream: The transport that records go through; needed by every mode but `.none`.
  ///   - matching: What a request must share with a recorded one.
  ///   - redaction: Which secrets to write as `<redacted>`.
  ///   - allowsRepeats: Whether a recorded exchange may answer more than once.
  ///   - fileID: Where the transport is created, for ``verifyAllPlayed()``.
  ///   - filePath: Where the transport is created.
  ///   - line: Where the transport is created.
  ///   - column: Where the transport is created.
  public init(
    url: URL, mode: Mode = .once, upstream: (any Transport)? = nil, matching: Matching = .default,
    redaction: Redaction = .default, allowsRepeats: Bool = false, fileID: String = #fileID,
    filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) {
    self.init(
      url: url, mode: mode, upstream: upstream, matching: matching, redaction: redaction,
      allowsRepeats: allowsRepeats, refusal: nil,
      location: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Create a cassette transport that throws `refusal`, when there is one, instead of touching
  /// its file.
  private init(
    url: URL, mode: Mode, upstream: (any Transport)?, matching: Matching, redaction: Redaction,
    allowsRepeats: Bool, refusal: CassetteError?, location: CallSite
  ) {
    self.url = url
    self.mode = mode
    self.upstream = upstream
    self.matching = matching
    self.redaction = redaction
    self.allowsRepeats = allowsRepeats
    self.refusal = refusal
    self.location = location
  }

  /// Create a cassette transport for `cassettes/<name>.json` in the `Fixtures/` folder above the
  /// calling file. The name may hold folders (`dogs/list`) but no `..` segment: such a transport
  /// touches no file, and every request throws ``CassetteError/unwritable(path:reason:)``.
  /// - Parameters:
  ///   - name: The cassette's name, without `.json`.
  ///   - mode: When to record and when to replay.
  ///   - upstream: The transport that records go through.
  ///   - matching: What a request must share with a recorded one.
  ///   - redaction: Which secrets to write as `<redacted>`.
  ///   - allowsRepeats: Whether a recorded exchange may answer more than once.
  ///   - fileID: Where the transport is created.
  ///   - filePath: Where the transport is created; `Fixtures/` is searched above it.
  ///   - line: Where the transport is created.
  ///   - column: Where the transport is created.
  public init(
    named name: String, mode: Mode = .once, upstream: (any Transport)? = nil,
    matching: Matching = .default,
    redaction: Redaction = .default, allowsRepeats: Bool = false, fileID: String = #fileID,
    filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) {
    let folder =
      (try? Fixtures.nearest(to: filePath).directory)
      ?? URL(fileURLWithPath: filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures")
    let cassettes = folder.appendingPathComponent("cassettes", isDirectory: true)
    let url = cassettes.appendingPathComponent("\(name).json")
    // A name may hold folders (`dogs/list`), never a way out of `cassettes/` (`../../x`).
    let leaves = name.split(separator: "/", omittingEmptySubsequences: false).contains("..")
    self.init(
      url: url, mode: mode, upstream: upstream, matching: matching, redaction: redaction,
      allowsRepeats: allowsRepeats,
      refusal: leaves
        ? .unwritable(
          path: url.path,
          reason: "its name \"\(name)\" leads out of \(cassettes.path); a cassette's name may "
            + "hold folders but no \"..\"")
        : nil,
      location: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// A transport that replays `cassette`, already read (from a HAR), and records nothing.
  init(
    replaying cassette: Cassette, url: URL, matching: Matching, allowsRepeats: Bool,
    location: CallSite
  ) {
    self.url = url
    self.mode = .none
    self.upstream = nil
    self.matching = matching
    self.redaction = .default
    self.allowsRepeats = allowsRepeats
    self.location = location
    self.refusal = nil
    self.cassette = cassette
    self.played = Array(repeating: false, count: cassette.exchanges.count)
  }

  /// Answer from the cassette, or send upstream and record, as the mode says.
  /// - Parameter request: The request.
  /// - Returns: The recorded or fresh response.
  /// - Throws: ``CassetteError`` for a missing, invalid or unmatched cassette; the upstream's
  ///   errors, which are not recorded; `APIError.invalidRequest` for a request that fails
  ///   `HTTPRequest.validate()`.
  public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
    try await send(request, exchange: Exchange())
  }

  /// ``send(_:)`` within a call: a request recorded goes to the upstream with the call's
  /// `exchange` (its deadline, its cancellation, its listeners, its cookie jar), so an upstream
  /// that follows redirects stores their cookies in the client's jar as it does without the
  /// cassette; its body is collected whole before it is recorded.
  func send(_ request: HTTPRequest, exchange: Exchange) async throws -> HTTPResponse {
    try request.validate()  // as every transport does, replaying or recording
    let request = try request.readingBodyFile()
    if let recorded = try played(request) {
      if let code = recorded.droppedWith {
        throw URLError(code, userInfo: [NSURLErrorFailingURLErrorKey: request.url])
      }
      return recorded.response
    }
    guard let upstream else { throw CassetteError.noUpstream(path: url.path) }
    var buffered = exchange
    buffered.streams = false
    let response = try await upstream.send(request, as: buffered).settlingBody(
      limit: request.maximumResponseSize, streams: false, deadline: exchange.deadline)
    try record(Cassette.Exchange(request: request, response: response))
    return response
  }

  /// The recorded exchange that answers `request`, marked played; `nil` when this run records
  /// it instead.
  /// - Throws: ``CassetteError/noMatch(request:path:recorded:)`` when nothing answers and the
  ///   mode does not record.
  func played(_ request: HTTPRequest) throws -> Cassette.Exchange? {
    let cassette = try prepare()
    if !recording || mode == .newEpisodes, let index = match(request, in: cassette) {
      played[index] = true
      var exchange = cassette.exchanges[index]
      exchange.response = exchange.response.droppingRedactedCookies()
      exchange.response.url = request.url
      return exchange
    }
    guard recording else {
      throw CassetteError.noMatch(
        // What the kit's reports hide: the request's redaction and the default on top, so a
        // client with a narrower redaction does not see its token quoted.
        request: request.reportedDescription, path: url.path,
        recorded: cassette.exchanges.enumerated().map { index, exchange in
          "\(Self.shown(exchange.request))\(played[index] ? " (played)" : "")"
        })
    }
    return nil
  }

  /// The recorded exchanges that no request has played, as `METHOD URL`.
  public var unplayedExchanges: [String] {
    guard let cassette else { return [] }
    return zip(cassette.exchanges, played).filter { !$0.1 }.map { Self.shown($0.0.request) }
  }

  /// A recorded request as lists print it: its method and its URL, the secrets that
  /// `Redaction.default` and its own redaction hide hidden (a HAR replayed as it came holds
  /// them).
  private static func shown(_ request: HTTPRequest) -> String {
    "\(request.method) \(request.reportRedaction.redact(request.url))"
  }

  /// Report recorded exchanges that were never played, as a Swift Testing issue at the line that
  /// created this transport when Swift Testing runs the test.
  /// - Returns: The unplayed exchanges.
  @discardableResult
  public func verifyAllPlayed() -> [String] {
    let unplayed = unplayedExchanges
    if !unplayed.isEmpty {
      location.recordIssue(
        "Cassette \(url.lastPathComponent) has unplayed exchanges:\n"
          + CassetteError.capped(unplayed).joined(separator: "\n"))
    }
    return unplayed
  }

  // MARK: Private

  /// Load the cassette on first use and decide whether this run records.
  private func prepare() throws(CassetteError) -> Cassette {
    if let refusal {
      throw refusal
    }
    if let cassette {
      return cassette
    }
    let exists = FileManager.default.fileExists(atPath: url.path)
    let loaded: Cassette
    switch mode {
    case .none:
      loaded = try Cassette.load(from: url)
    case .once:
      recording = !exists
      loaded = exists ? try Cassette.load(from: url) : Cassette()
    case .all:
      recording = true
      loaded = Cassette()
    case .newEpisodes:
      recording = true
      loaded = exists ? try Cassette.load(from: url) : Cassette()
    }
    cassette = loaded
    played = Array(repeating: false, count: loaded.exchanges.count)
    return loaded
  }

  func record(_ exchange: Cassette.Exchange) throws(CassetteError) {
    // What the cassette hides, and what the client that sent the request calls secret.
    let redaction = redaction.merging(exchange.request.redaction)
    let redacted = exchange.redacted(with: redaction)
    let outcome = Cassette.saving.withLock { _ -> Result<Void, CassetteError> in
      var updated = cassette ?? Cassette()
      // Another transport over the same file (a parallel test with the same cassette name) may
      // have recorded since this one read it. Outside `.all`, which replaces the file, a file
      // only grows: keep what the other wrote. Those exchanges count as played here: they are
      // not this transport's to replay, nor for its verifyAllPlayed() to report.
      if mode != .all, let onDisk = try? Cassette.load(from: url),
        onDisk.exchanges.count > updated.exchanges.count
      {
        played += Array(
          repeating: true, count: onDisk.exchanges.count - updated.exchanges.count)
        updated = onDisk
      }
      updated.exchanges.append(redacted)
      do throws(CassetteError) {
        try updated.save(to: url)
      } catch {
        return .failure(error)
      }
      cassette = updated
      played.append(true)
      return .success(())
    }
    try outcome.get()
  }

  private func match(_ request: HTTPRequest, in cassette: Cassette) -> Int? {
    cassette.exchanges.indices.first { index in
      (allowsRepeats || !played[index])
        && matching.matches(recorded: cassette.exchanges[index].request, request)
    }
  }
}

/// A cassette takes each request with its call's ``Errand/Exchange``: what it records goes to
/// the upstream within the call (its deadline, cancellation, listeners and cookie jar).
extension CassetteTransport: ExchangeTransport {
  /// Answer as ``send(_:)`` or ``stream(_:)`` do, as the exchange asks, the upstream getting
  /// the exchange.
  /// - Parameters:
  ///   - request: The request.
  ///   - exchange: The call's exchange.
  /// - Returns: The recorded or fresh response (its head, with the body following, when the
  ///   exchange streams).
  /// - Throws: What ``send(_:)`` throws.
  public func exchange(_ request: HTTPRequest, _ exchange: Exchange) async throws -> HTTPResponse {
    exchange.streams
      ? try await stream(request, exchange: exchange) : try await send(request, exchange: exchange)
  }
}
