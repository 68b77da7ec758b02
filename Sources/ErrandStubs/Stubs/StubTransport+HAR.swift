import Errand
import Foundation

extension StubTransport {
  /// Answer requests from a HAR (captured in browser developer tools, Charles, Proxyman, or
  /// exported by Errand): one route per distinct request, in the order of the entries, matching
  /// the method, the scheme, host and port, the URL path and the query (items in any order; a
  /// `<redacted>` value matches any value); requests that repeat are answered in turn, as
  /// ``StubResponse/sequence(_:)`` does, the last answer again once they run out, with the
  /// request's own URL. Entries that share all that but disagree on the value of a credential
  /// header (one `Redaction.default` hides) or on the body are routes of their own, each matching
  /// only a request with the same value (any value for `<redacted>`, none for an entry that
  /// carried none) or the same body (JSON by content; `<redacted>` in it stands for any text):
  /// one caller is never answered with another's entry.
  ///
  /// ```swift
  /// let har = try HAR(data: try Fixtures.nearest().data("har/checkout.har"))
  /// let skipped = try await stub.on(har: har)   // entries with status 0, and why
  /// ```
  ///
  /// Every entry is checked before any route is added, so a HAR that cannot be replayed adds
  /// none. Like every route, one no request used is reported (by the `.stubbed` trait,
  /// ``verifyAllRoutesUsed()``) unless `allowingUnused`: a captured session often holds more
  /// than a test asks for.
  /// - Parameters:
  ///   - har: The archive.
  ///   - limits: How large a body to replay.
  ///   - allowingUnused: Whether the routes may go unused without being reported.
  ///   - fileID: Where the routes are registered; filled in by the compiler.
  ///   - filePath: Where the routes are registered; filled in by the compiler.
  ///   - line: Where the routes are registered; filled in by the compiler.
  ///   - column: Where the routes are registered; filled in by the compiler.
  /// - Returns: The entries left out (status `0`: no response), and why.
  /// - Throws: ``HARError`` naming the entry and the field that cannot be replayed.
  @discardableResult
  public func on(
    har: HAR, limits: HAR.Limits = .default, allowingUnused: Bool = false,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line,
    column: Int = #column
  ) throws(HARError) -> [HAR.SkippedEntry] {
    let exchanges = try har.replayedExchanges(limits: limits)
    // Entries that share a method and URL are told apart by what they disagree on: a credential
    // header two of them carry with different values, or the body. Where they agree, or one
    // carries a credential the others do not, nothing more is matched.
    var seen: [String: (values: [String: Set<String>], bodies: Set<Data>)] = [:]
    for (_, exchange) in exchanges {
      let key = Self.routeKey(exchange.request)
      var found = seen[key] ?? ([:], [])
      for (name, value) in Self.credentialValues(of: exchange.request) {
        found.values[name, default: []].insert(value)
      }
      found.bodies.insert(exchange.request.body ?? Data())
      seen[key] = found
    }
    let disagreements = seen.mapValues { found in
      (names: Set(found.values.filter { $0.value.count > 1 }.keys), body: found.bodies.count > 1)
    }
    var order: [String] = []
    var groups: [String: (request: HTTPRequest, entries: [Int], answers: [StubResponse])] = [:]
    var told: [String: (names: [String], body: Bool)] = [:]
    for (index, exchange) in exchanges {
      let base = Self.routeKey(exchange.request)
      let apart = disagreements[base] ?? ([], false)
      let names = apart.names.sorted()
      let values = Self.credentialValues(of: exchange.request)
      let key =
        ([base] + names.map { values[$0] ?? "\u{2}" }
        + [apart.body ? (exchange.request.body ?? Data()).base64EncodedString() : ""])
        .joined(separator: "\u{1}")
      if groups[key] == nil {
        order.append(key)
        groups[key] = (exchange.request, [], [])
        told[key] = (names, apart.body)
      }
      groups[key]?.entries.append(index)
      var response = exchange.response.droppingRedactedCookies()
      response.url = nil  // the live request's URL, as a cassette answers
      groups[key]?.answers.append(.response(response))
    }
    for key in order {
      guard let group = groups[key], let apart = told[key] else { continue }
      let answer = group.answers.count == 1 ? group.answers[0] : .sequence(group.answers)
      var matcher = Self.matcher(for: group.request, entries: group.entries)
      let values = Self.credentialValues(of: group.request)
      for name in apart.names {
        matcher = matcher && Self.credential(name, values[name])
      }
      if apart.body {
        matcher = matcher && Self.body(group.request.body ?? Data())
      }
      on(
        matcher, allowingUnused ? answer.allowingUnused() : answer,
        fileID: fileID, filePath: filePath, line: line, column: column)
    }
    return har.skippedEntries
  }

  /// The journal as a HAR: each request with its answer, the date it arrived and, from the
  /// answer's metrics, how long it waited (on the stub's clock). Redacted by `redaction` merged
  /// with each request's own (the client's `Configuration.redaction`), as cassettes are, a secret
  /// any request carried hidden in every entry: nothing secret reaches the archive, or the file ``HAR/write(to:redaction:)`` writes. A request
  /// still waiting, or answered with an error, has status `0` and a comment that says which; a
  /// streamed answer has its head only.
  /// - Parameter redaction: What is secret, on top of what each request's redaction hides.
  /// - Returns: The archive.
  public func har(redaction: Redaction = .default) -> HAR {
    let entries = journal.map { exchange in
      (Self.entry(exchange), redaction.merging(exchange.request.redaction))
    }
    // A secret one request carried is hidden wherever any entry repeats it.
    let secrets = HAR.ordered(entries.flatMap { $0.0.secretValues(with: $0.1) })
    return HAR(entries: entries.map { $0.0.redacted(with: $0.1, scrubbing: secrets) })
  }

  private static func entry(_ exchange: StubExchange) -> HAR.Entry {
    guard let response = exchange.response else {
      let comment =
        exchange.error.map { "The stub threw \(StubExchange.summary(of: $0))." }
        ?? "No answer yet."
      return HAR.Entry(
        startedDateTime: exchange.date, request: HAR.Request(exchange.request),
        response: HAR.Response(status: 0, content: HAR.Content(mimeType: "x-unknown")),
        comment: comment)
    }
    var timings = HAR.Timings()
    if let metrics = response.metrics {
      timings = Self.timings(metrics)
    }
    return HAR.Entry(
      startedDateTime: exchange.date, time: timings.total,
      request: HAR.Request(exchange.request), response: HAR.Response(response),
      timings: timings, serverIPAddress: response.metrics?.remoteAddress,
      comment: exchange.streamed ? "The body was streamed; the journal keeps the head only." : nil)
  }

  /// HAR's phases from an answer's metrics (the stub's own, on its clock, or those a route or an
  /// upstream reported); `-1` for a phase the metrics do not cover.
  private static func timings(_ metrics: TransferMetrics) -> HAR.Timings {
    func span(_ start: Duration?, _ end: Duration?) -> Double {
      guard let start, let end, end >= start else { return -1 }
      return HAR.milliseconds(end - start)
    }
    var timings = HAR.Timings(
      dns: span(metrics.domainLookupStart, metrics.domainLookupEnd),
      connect: span(metrics.connectStart, metrics.connectEnd),
      ssl: span(metrics.secureConnectionStart, metrics.secureConnectionEnd))
    if let start = metrics.responseStart {
      timings.wait = max(span(metrics.requestStart ?? .zero, start), 0)
      timings.receive = max(span(start, metrics.responseEnd), 0)
    }
    return timings
  }

  /// What makes two requests the same route, unless their credentials or bodies disagree: the
  /// method, the scheme, host and port, the path and the query's items.
  private static func routeKey(_ request: HTTPRequest) -> String {
    let parts = URLComponents(url: request.url, resolvingAgainstBaseURL: true)
    let items = (parts?.queryItems ?? []).map { "\($0.name)=\($0.value ?? "")" }.sorted()
    return
      ([request.method.rawValue, origin(of: request.url), parts?.percentEncodedPath ?? ""]
      + items)
      .joined(separator: "\u{0}")
  }

  /// The scheme, host and port (the scheme's own when the URL names none), lowercased.
  static func origin(of url: URL) -> String {
    let scheme = url.scheme?.lowercased() ?? ""
    let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
    return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
  }

  /// The request's credential headers (those `Redaction.default` hides), names lowercased.
  static func credentials(of request: HTTPRequest) -> [(name: String, value: String)] {
    request.headers.fields.compactMap { field in
      Redaction.default.hidesHeader(field.name) ? (field.name.lowercased(), field.value) : nil
    }
  }

  /// The request's credential headers by lowercased name, repeated values joined.
  private static func credentialValues(of request: HTTPRequest) -> [String: String] {
    Dictionary(credentials(of: request).map { ($0.name, $0.value) }) { "\($0)\u{0}\($1)" }
  }

  /// A route for requests like `recorded`: its method, scheme, host and port, path and query, as
  /// a cassette's default matching compares them. The recorded URL is parsed once, and a live
  /// one only when its path is the route's: a HAR of thousands of URLs makes thousands of
  /// routes.
  private static func matcher(for recorded: HTTPRequest, entries: [Int]) -> RequestMatcher {
    let shown = Redaction.default.redact(recorded.url)
    let path = recorded.url.path
    let origin = origin(of: recorded.url)
    let parts = URLComponents(url: recorded.url, resolvingAgainstBaseURL: true)
    let encodedPath = parts?.percentEncodedPath
    let items = parts?.queryItems ?? []
    let which =
      entries.count == 1
      ? "entry \(entries[0])" : "entries \(entries.map(String.init).joined(separator: ", "))"
    let target = RequestMatcher(
      "\(shown) (HAR \(which))", hint: (nil, path),
      sentInstead: { "URL: expected \(shown), sent \($0.reportRedaction.redact($0.url))" },
      matches: { live in
        guard live.url.path == path, Self.origin(of: live.url) == origin else { return false }
        let liveParts = URLComponents(url: live.url, resolvingAgainstBaseURL: true)
        return liveParts?.percentEncodedPath == encodedPath
          && CassetteTransport.Matching.default.queriesMatch(items, liveParts?.queryItems ?? [])
      })
    return .method(recorded.method) && target
  }

  /// Requests that carry this credential header with this value (any value when it is
  /// `<redacted>`), or, for `nil`, that do not carry it; described and reported with the value
  /// hidden.
  private static func credential(_ name: String, _ value: String?) -> RequestMatcher {
    let wildcard = value == HTTPHeaders.redactedValue
    let expected = value == nil ? "none" : "the recorded value"
    return RequestMatcher(
      "header \(name): \(value == nil ? "none" : HTTPHeaders.redactedValue)", hint: (nil, nil),
      written: "header \(name): \(value ?? "none")",
      sentInstead: { request in
        let sent = request.headers.values(for: name).isEmpty ? "none" : "another value"
        return "header \(name): expected \(expected), sent \(sent)"
      },
      matches: { request in
        let values = request.headers.values(for: name)
        guard let value else { return values.isEmpty }
        return wildcard ? !values.isEmpty : values.joined(separator: "\u{0}") == value
      })
  }

  /// Requests whose body is the recorded one (JSON compared by content; a `<redacted>` in the
  /// recorded body stands for any text); reported without the bodies, which may hold secrets.
  private static func body(_ recorded: Data) -> RequestMatcher {
    let pattern = Self.redactedPattern(recorded)
    return RequestMatcher(
      "the recorded body (\(recorded.count) bytes)", hint: (nil, nil),
      written: "body \(recorded.base64EncodedString())",
      sentInstead: { request in
        "body: expected the recorded \(recorded.count) bytes, sent \(request.body?.count ?? 0) "
          + "bytes that differ"
      },
      matches: { request in
        let live = request.body ?? Data()
        if live == recorded || JSONDiff.equal(recorded, live) {
          return true
        }
        return pattern.map { Self.matches(String(decoding: live, as: UTF8.self), $0) } ?? false
      })
  }

  /// The recorded body's text split at each `<redacted>` (or `%3Credacted%3E`), or `nil` when it
  /// holds none.
  private static func redactedPattern(_ body: Data) -> [Substring]? {
    let text = String(decoding: body, as: UTF8.self)
      .replacingOccurrences(of: "%3Credacted%3E", with: HTTPHeaders.redactedValue)
    let pieces = text.split(
      separator: HTTPHeaders.redactedValue, omittingEmptySubsequences: false)
    return pieces.count > 1 ? pieces : nil
  }

  /// Whether `text` is the pieces in order with any text between them.
  private static func matches(_ text: String, _ pieces: [Substring]) -> Bool {
    guard let first = pieces.first, let last = pieces.last, text.hasPrefix(first) else {
      return false
    }
    var rest = text.dropFirst(first.count)
    for piece in pieces.dropFirst().dropLast() {
      guard let found = rest.range(of: piece) else { return false }
      rest = rest[found.upperBound...]
    }
    return rest.count >= last.count && rest.hasSuffix(last)
  }
}
