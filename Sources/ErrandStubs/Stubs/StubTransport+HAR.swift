import Errand
import Foundation

extension StubTransport {
  /// Answer requests from a HAR (captured in browser developer tools, Charles, Proxyman, or
  /// exported by Errand): one route per distinct request, in the order of the entries, matching
  /// the method, the URL path and the query (items in any order; a `<redacted>` value matches
  /// any value); requests that repeat are answered in turn, as ``StubResponse/sequence(_:)``
  /// does, the last answer again once they run out.
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
    var order: [String] = []
    var groups: [String: (request: HTTPRequest, entries: [Int], answers: [StubResponse])] = [:]
    for (index, exchange) in try har.replayedExchanges(limits: limits) {
      let key = Self.routeKey(exchange.request)
      if groups[key] == nil {
        order.append(key)
        groups[key] = (exchange.request, [], [])
      }
      groups[key]?.entries.append(index)
      groups[key]?.answers.append(.response(exchange.response.droppingRedactedCookies()))
    }
    for key in order {
      guard let group = groups[key] else { continue }
      let answer = group.answers.count == 1 ? group.answers[0] : .sequence(group.answers)
      on(
        Self.matcher(for: group.request, entries: group.entries),
        allowingUnused ? answer.allowingUnused() : answer,
        fileID: fileID, filePath: filePath, line: line, column: column)
    }
    return har.skippedEntries
  }

  /// The journal as a HAR: each request with its answer, the date it arrived and, from the
  /// answer's metrics, how long it waited (on the stub's clock). Redacted by `redaction` merged
  /// with each request's own (the client's `Configuration.redaction`), as cassettes are: nothing
  /// secret reaches the archive, or the file ``HAR/write(to:redaction:)`` writes. A request
  /// still waiting, or answered with an error, has status `0` and a comment that says which; a
  /// streamed answer has its head only.
  /// - Parameter redaction: What is secret, on top of what each request's redaction hides.
  /// - Returns: The archive.
  public func har(redaction: Redaction = .default) -> HAR {
    HAR(
      entries: journal.map { exchange in
        Self.entry(exchange).redacted(with: redaction.merging(exchange.request.redaction))
      })
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

  /// What makes two requests the same route: the method, the path and the query's items.
  private static func routeKey(_ request: HTTPRequest) -> String {
    let parts = URLComponents(url: request.url, resolvingAgainstBaseURL: true)
    let items = (parts?.queryItems ?? []).map { "\($0.name)=\($0.value ?? "")" }.sorted()
    return ([request.method.rawValue, parts?.percentEncodedPath ?? ""] + items)
      .joined(separator: "\u{0}")
  }

  /// A route for requests like `recorded`: its method, path and query, as a cassette's default
  /// matching compares them. The recorded URL is parsed once, and a live one only when its path
  /// is the route's: a HAR of thousands of URLs makes thousands of routes.
  private static func matcher(for recorded: HTTPRequest, entries: [Int]) -> RequestMatcher {
    let shown = Redaction.default.redact(recorded.url)
    let path = recorded.url.path
    let parts = URLComponents(url: recorded.url, resolvingAgainstBaseURL: true)
    let encodedPath = parts?.percentEncodedPath
    let items = parts?.queryItems ?? []
    let which =
      entries.count == 1
      ? "entry \(entries[0])" : "entries \(entries.map(String.init).joined(separator: ", "))"
    let target = RequestMatcher(
      "\(shown) (HAR \(which))", hint: (nil, path),
      sentInstead: { "URL: expected \(shown), sent \(Redaction.default.redact($0.url))" },
      matches: { live in
        guard live.url.path == path else { return false }
        let liveParts = URLComponents(url: live.url, resolvingAgainstBaseURL: true)
        return liveParts?.percentEncodedPath == encodedPath
          && CassetteTransport.Matching.default.queriesMatch(items, liveParts?.queryItems ?? [])
      })
    return .method(recorded.method) && target
  }
}
