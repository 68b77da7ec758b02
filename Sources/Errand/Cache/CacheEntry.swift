import Foundation

/// One stored response: what it answers (its URL and the request headers its `Vary` names), how
/// old it was when stored and since when, and how long it stays fresh (RFC 9111 §4.2).
struct CacheEntry: Sendable {
  var response: HTTPResponse
  /// The request headers the response's `Vary` names (lowercased), with the values they had
  /// (`nil` for a header the request did not carry, which only its absence matches, RFC 9111
  /// §4.1), and under ``credentialsKey`` the fingerprint of the request's credentials.
  var varying: [String: String?]
  /// `Age` when stored.
  var initialAge: Duration
  /// Time since the response was stored, on the client's clock.
  var stored: Stopwatch
  /// How long the response stays fresh; `nil` when it must be revalidated before every use.
  var lifetime: Duration?

  var key: String { Self.key(for: response.request?.url ?? response.url) }

  /// The key of what is stored for `url`: the URL without its fragment, its scheme and host in
  /// lower case and a default port left out, so that every spelling of one origin finds the same
  /// entries (and a `Location` that writes `:443` invalidates them).
  static func key(for url: URL?) -> String {
    guard let url else { return "" }
    guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
      return url.absoluteString
    }
    components.fragment = nil
    let scheme = components.scheme?.lowercased()
    components.scheme = scheme
    components.percentEncodedHost = components.percentEncodedHost?.lowercased()
    if (scheme == "https" && components.port == 443) || (scheme == "http" && components.port == 80)
    {
      components.port = nil
    }
    return components.string ?? url.absoluteString
  }

  init(
    response: HTTPResponse, varying: [String: String?], initialAge: Duration, stored: Stopwatch,
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
    guard !vary.contains("*"), Set(vary).count <= Self.mostVaryingHeaders,
      !Self.isEventStream(response.headers), !Self.isEventStream(request.headers, accept: true),
      request.headers["Last-Event-ID"] == nil
    else { return nil }
    // A validator that cannot be sent back (a control byte in it) is not kept: a conditional
    // request carrying it would be refused, and the URL would fail for as long as it is stored.
    var response = response
    for name in ["ETag", "Last-Modified"]
    where !response.headers.values(for: name).allSatisfy(HTTPHeaders.canSend) {
      response.headers.remove(name)
    }
    // A cookie the server set is the caller's own: a stored answer never hands it to whoever the
    // cache answers next (as browsers' caches keep no `Set-Cookie` either).
    for name in Self.unstoredHeaders {
      response.headers.remove(name)
    }
    var varying: [String: String?] = [:]
    for name in vary {
      varying[name] = Self.value(of: name, in: request)
    }
    // Always there, `nil` for none: an answer to credentials matches only the same ones, and
    // an answer to none only none.
    varying.updateValue(Self.credentials(of: request), forKey: Self.credentialsKey)
    let lifetime =
      Self.freshnessLifetime(response.headers, control: control)
      ?? heuristic.flatMap { Self.heuristicLifetime(response.headers, fraction: $0) }
    let hasValidator = response.headers["ETag"] != nil || response.headers["Last-Modified"] != nil
    guard lifetime != nil || hasValidator else { return nil }
    var stored = response
    stored.request = request
    self.response = stored
    self.varying = varying
    self.initialAge = .seconds(CacheControl.age(response.headers) ?? 0)
    self.stored = Stopwatch(clock)
    self.lifetime = control.noCache ? nil : lifetime
  }

  /// Response headers never stored: they are meant for the one caller who received them.
  static let unstoredHeaders = ["Set-Cookie", "Set-Cookie2"]

  /// The value of request header `name` as `Vary` compares it: its field values joined by
  /// commas, or `nil` when the request does not carry it.
  static func value(of name: String, in request: HTTPRequest) -> String? {
    if name == credentialsKey {
      return credentials(of: request)
    }
    let values = request.headers.values(for: name)
    return values.isEmpty ? nil : values.joined(separator: ",")
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

  /// Whether it may answer a request with these directives without asking the server
  /// (RFC 9111 §5.2.1): fresh, no older than the request's `max-age`, with the request's
  /// `min-fresh` left; or stale by no more than its `max-stale`, unless the response says
  /// `must-revalidate` (§4.2.4).
  func satisfies(_ request: CacheControl) -> Bool {
    guard let lifetime else { return false }
    let age = age
    if let maxAge = request.maxAge, age > .seconds(maxAge) { return false }
    if let minFresh = request.minFresh, lifetime - age < .seconds(minFresh) { return false }
    if age < lifetime { return true }
    guard let maxStale = request.maxStale, !CacheControl(response.headers).mustRevalidate else {
      return false
    }
    return maxStale == .max || age - lifetime <= .seconds(maxStale)
  }

  /// Whether it may stand in for an error now: `stale-if-error` covers its age past freshness,
  /// and `must-revalidate` does not forbid it.
  var mayStandInForError: Bool {
    let control = CacheControl(response.headers)
    guard !control.mustRevalidate, let extra = control.staleIfError else { return false }
    return age < (lifetime ?? .zero) + .seconds(extra)
  }

  /// Whether `request` asks for this variant: the same values of the headers `Vary` names, and
  /// the same credentials (or none, if the stored request carried none): an answer to one user
  /// never reaches another, nor an anonymous answer someone who sends credentials.
  func matches(_ request: HTTPRequest) -> Bool {
    // A record without the key (none is written so) counts as an answer to no credentials.
    guard varying[Self.credentialsKey] ?? nil == Self.credentials(of: request) else { return false }
    return varying.allSatisfy { name, value in Self.value(of: name, in: request) == value }
  }

  /// The name of the header, never sent, in which ``CachingMiddleware`` hands the store a
  /// fingerprint of the client's own default headers (see ``RequestContext/clientHeaders``): not
  /// a header name (a space cannot be in one), and part of ``credentials(of:)``.
  static let clientHeadersKey = " client headers"

  /// Where ``varying`` keeps the fingerprint of the stored request's credentials: not a header
  /// name (a space cannot be in one), so no `Vary` can collide with it.
  static let credentialsKey = " credentials"

  /// A fingerprint of the credentials `request` carries in its headers (those its redaction
  /// hides), or `nil` when it carries none. A hash, not the values: it may be written to disk.
  /// Credentials in the URL (a user, a secret query value) are part of the URL, and so of the key.
  static func credentials(of request: HTTPRequest) -> String? {
    let secret = request.headers.fields.filter {
      $0.name == clientHeadersKey || request.redaction.hidesHeader($0.name)
    }
    guard !secret.isEmpty else { return nil }
    let text = secret.map { "\($0.name.lowercased()): \($0.value)" }.sorted().joined(
      separator: "\n")
    return DiskCacheStore.hash(text, seed: 2) + DiskCacheStore.hash(text, seed: 3)
  }

  /// Whether `request` carries credentials: a header, a query parameter or a URL user or
  /// password that its redaction hides.
  static func isAuthenticated(_ request: HTTPRequest, redaction: Redaction) -> Bool {
    let redaction = redaction.merging(request.redaction)
    if request.headers.fields.contains(where: { redaction.hidesHeader($0.name) }) { return true }
    guard let components = URLComponents(url: request.url, resolvingAgainstBaseURL: true) else {
      return true
    }
    if components.user != nil || components.password != nil { return true }
    return (components.queryItems ?? []).contains {
      redaction.queryParameters.contains($0.name.lowercased())
    }
  }

  /// Whether `headers` are those of an event stream (`Content-Type`, or with `accept`, the
  /// `Accept` of a request that asks for one): never stored or answered from a cache, since
  /// a reconnection must reach the server.
  static func isEventStream(_ headers: HTTPHeaders, accept: Bool = false) -> Bool {
    let value = headers[accept ? "Accept" : "Content-Type"]?.lowercased() ?? ""
    return value.contains("text/event-stream")
  }

  /// The conditional form of `request`: `If-None-Match` with the stored `ETag`,
  /// `If-Modified-Since` with its `Last-Modified`; `nil` when it has neither (or neither can be
  /// sent).
  func conditional(_ request: HTTPRequest) -> HTTPRequest? {
    let etag = response.headers["ETag"].flatMap { HTTPHeaders.canSend($0) ? $0 : nil }
    let modified = response.headers["Last-Modified"].flatMap { HTTPHeaders.canSend($0) ? $0 : nil }
    guard etag != nil || modified != nil else { return nil }
    var conditional = request
    if let etag { conditional.headers["If-None-Match"] = etag }
    if let modified { conditional.headers["If-Modified-Since"] = modified }
    return conditional
  }

  /// Whether a `304` is about this stored response (RFC 9111 §4.3.4): its `ETag`, if it has one,
  /// is the stored one (compared strongly when both are strong, weakly otherwise); a `304`
  /// without an `ETag` is taken as this response's, the only one stored for the request.
  func isSelected(by notModified: HTTPResponse) -> Bool {
    guard let new = notModified.headers["ETag"]?.trimmingCharacters(in: .whitespaces) else {
      return true
    }
    guard let stored = response.headers["ETag"]?.trimmingCharacters(in: .whitespaces) else {
      return false
    }
    let weak = { (tag: String) in tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag }
    if !new.hasPrefix("W/") && !stored.hasPrefix("W/") {
      return new == stored
    }
    return weak(new) == weak(stored)
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
