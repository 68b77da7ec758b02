import Foundation

/// One stored response: what it answers (its URL and the request headers its `Vary` names), how
/// old it was when stored and since when, and how long it stays fresh (RFC 9111 §4.2).
struct CacheEntry: Sendable {
  var response: HTTPResponse
  /// The request headers the response's `Vary` names (lowercased), with the values they had.
  var varying: [String: String]
  /// `Age` when stored.
  var initialAge: Duration
  /// Time since the response was stored, on the client's clock.
  var stored: Stopwatch
  /// How long the response stays fresh; `nil` when it must be revalidated before every use.
  var lifetime: Duration?

  var key: String { Self.key(for: response.request?.url ?? response.url) }

  static func key(for url: URL?) -> String {
    guard let url else { return "" }
    var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
    components?.fragment = nil
    return components?.string ?? url.absoluteString
  }

  init(
    response: HTTPResponse, varying: [String: String], initialAge: Duration, stored: Stopwatch,
    lifetime: Duration?
  ) {
    self.response = response
    self.varying = varying
    self.initialAge = initialAge
    self.stored = stored
    self.lifetime = lifetime
  }

  /// The entry for a response to `request`, received now; `nil` when RFC 9111 §3 says not to
  /// store it (or it could never be used without heuristics: no freshness and no validator).
  init?(
    _ response: HTTPResponse, for request: HTTPRequest, clock: any Clock<Duration>,
    heuristic: Double? = nil
  ) {
    let control = CacheControl(response.headers)
    guard request.method == "GET", response.bodyStream == nil, !control.noStore,
      !CacheControl(request.headers).noStore, Self.storableStatuses.contains(response.status)
    else { return nil }
    let vary = response.headers.values(for: "Vary").flatMap { $0.split(separator: ",") }
      .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
    // `*` never matches; past a few dozen names a response is not worth keeping apart.
    guard !vary.contains("*"), Set(vary).count <= Self.mostVaryingHeaders else { return nil }
    var varying: [String: String] = [:]
    for name in vary {
      varying[name] = request.headers.values(for: name).joined(separator: ",")
    }
    let lifetime =
      Self.freshnessLifetime(response.headers, control: control)
      ?? heuristic.flatMap { Self.heuristicLifetime(response.headers, fraction: $0) }
    let hasValidator = response.headers["ETag"] != nil || response.headers["Last-Modified"] != nil
    guard lifetime != nil || hasValidator else { return nil }
    var stored = response
    stored.request = request
    self.response = stored
    self.varying = varying
    self.initialAge = .seconds(CacheControl.deltaSeconds(response.headers["Age"]) ?? 0)
    self.stored = Stopwatch(clock)
    self.lifetime = control.noCache ? nil : lifetime
  }

  /// The most request headers one stored response may vary on.
  static let mostVaryingHeaders = 32

  /// Statuses a cache may store (RFC 9110 §15.1's "heuristically cacheable" ones and `200`).
  static let storableStatuses: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]

  /// `max-age`, else `Expires` minus `Date` (RFC 9111 §4.2.1); no heuristics.
  private static func freshnessLifetime(_ headers: HTTPHeaders, control: CacheControl) -> Duration?
  {
    if let maxAge = control.maxAge {
      return .seconds(maxAge)
    }
    guard let expires = headers["Expires"] else { return nil }
    // An invalid Expires (such as "0") means already expired.
    guard let expiry = HTTPDate.parse(expires) else { return .zero }
    let date = HTTPDate.parse(headers["Date"]) ?? Date()
    let seconds = min(max(0, expiry.timeIntervalSince(date).rounded(.down)), Double(Int32.max))
    return .seconds(Int(seconds))
  }

  /// RFC 9111 §4.2.2: a fraction of the time since `Last-Modified` (as of `Date`), at most a
  /// day; only for a response with neither `max-age` nor `Expires`.
  private static func heuristicLifetime(_ headers: HTTPHeaders, fraction: Double) -> Duration? {
    guard let modified = HTTPDate.parse(headers["Last-Modified"]) else { return nil }
    let date = HTTPDate.parse(headers["Date"]) ?? Date()
    let seconds = min(max(0, date.timeIntervalSince(modified) * fraction), 86_400)
    return .seconds(Int(seconds))
  }

  /// How old the response is now: its `Age` when stored plus the time since.
  var age: Duration { initialAge + stored.elapsed }

  /// Whether it may answer without asking the server.
  var isFresh: Bool {
    guard let lifetime else { return false }
    return age < lifetime
  }

  /// Whether it may stand in for an error now: `stale-if-error` covers its age past freshness,
  /// and `must-revalidate` does not forbid it.
  var mayStandInForError: Bool {
    let control = CacheControl(response.headers)
    guard !control.mustRevalidate, let extra = control.staleIfError else { return false }
    return age < (lifetime ?? .zero) + .seconds(extra)
  }

  /// Whether `request` asks for this variant: the same values of the headers `Vary` names.
  func matches(_ request: HTTPRequest) -> Bool {
    varying.allSatisfy { name, value in
      request.headers.values(for: name).joined(separator: ",") == value
    }
  }

  /// The conditional form of `request`: `If-None-Match` with the stored `ETag`,
  /// `If-Modified-Since` with its `Last-Modified`; `nil` when it has neither.
  func conditional(_ request: HTTPRequest) -> HTTPRequest? {
    let etag = response.headers["ETag"]
    let modified = response.headers["Last-Modified"]
    guard etag != nil || modified != nil else { return nil }
    var conditional = request
    if let etag { conditional.headers["If-None-Match"] = etag }
    if let modified { conditional.headers["If-Modified-Since"] = modified }
    return conditional
  }

  /// This entry after a `304`: the stored body with the new headers in place of the stored ones
  /// of the same names (RFC 9111 §3.2; framing headers stay), stored anew now.
  func revalidated(
    by notModified: HTTPResponse, clock: any Clock<Duration>, heuristic: Double?
  ) -> CacheEntry? {
    var merged = response
    let kept: Set<String> = ["content-length", "transfer-encoding", "content-encoding"]
    for name in Set(notModified.headers.fields.map { $0.name.lowercased() })
    where !kept.contains(name) {
      merged.headers.remove(name)
      for value in notModified.headers.values(for: name) {
        merged.headers.add(name, value)
      }
    }
    guard let request = response.request else { return nil }
    return CacheEntry(merged, for: request, clock: clock, heuristic: heuristic)
  }
}
