import Foundation

/// One stored response: what it answers (its URL and the request headers its `Vary` names), how
/// old it was when stored and since when, and how long it stays fresh (RFC 9111 §4.2).
struct CacheEntry: Sendable {
  var response: HTTPResponse
  /// The request headers the response's `Vary` names (lowercased), with the values they had
  /// (`nil` for a header the request did not carry, which only its absence matches, RFC 9111
  /// §4.1), and under ``credentialsKey`` the fingerprint of the request's credentials.
  var varying: [String: String?]
  /// How old the response was when stored (RFC 9111 §4.2.3's `corrected_initial_age`).
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
  /// - Parameters:
  ///   - response: The response.
  ///   - request: The request it answers, as the store sees it.
  ///   - clock: The client's clock, on which the entry ages.
  ///   - heuristic: The fraction of the time since `Last-Modified` a response without explicit
  ///     freshness stays fresh, or `nil` for none.
  ///   - now: The wall time the response arrived, for its apparent age (§4.2.3).
  ///   - responseDelay: How long the answer took to arrive after the request left.
  init?(
    _ response: HTTPResponse, for request: HTTPRequest, clock: any Clock<Duration>,
    heuristic: Double? = nil, now: Date = Date(), responseDelay: Duration = .zero
  ) {
    let control = CacheControl(response.headers)
    guard request.method == "GET", response.bodyStream == nil,
      !CacheControl(request.headers).noStore, Self.mayStore(response.status, control)
    else { return nil }
    let vary = response.headers.values(for: "Vary").flatMap { $0.split(separator: ",") }
      .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
    // `*` never matches; past a few dozen names a response is not worth keeping apart.
    guard !vary.contains("*"), Set(vary).count <= Self.mostVaryingHeaders,
      !Self.isEventStream(response.headers), !Self.isEventStream(request.headers, accept: true),
      request.headers["Last-Event-ID"] == nil
    else { return nil }
    let lifetime =
      Self.freshnessLifetime(response.headers, control: control, now: now)
      ?? heuristic.flatMap {
        Self.mayUseHeuristics(response.status, control)
          ? Self.heuristicLifetime(response.headers, fraction: $0, now: now) : nil
      }
    var response = Self.storable(response, control: control)
    let hasValidator = response.headers["ETag"] != nil || response.headers["Last-Modified"] != nil
    guard lifetime != nil || hasValidator else { return nil }
    var varying: [String: String?] = [:]
    for name in vary {
      varying[name] = Self.value(of: name, in: request)
    }
    // Always there, `nil` for none: an answer to credentials matches only the same ones, and
    // an answer to none only none.
    varying.updateValue(Self.credentials(of: request), forKey: Self.credentialsKey)
    response.request = request
    self.response = response
    self.varying = varying
    self.initialAge = Self.correctedInitialAge(
      response.headers, now: now, responseDelay: responseDelay)
    self.stored = Stopwatch(clock)
    self.lifetime = control.noCache ? nil : lifetime
  }

  /// `response` as it is stored (§3.1): without a validator that could not be sent back, the
  /// caller's own cookies, the hop-by-hop headers and those its `Connection` names, the proxy's
  /// own headers, and the headers a `no-cache` directive names.
  static func storable(_ response: HTTPResponse, control: CacheControl) -> HTTPResponse {
    var response = response
    // A validator that cannot be sent back (a control byte in it) is not kept: a conditional
    // request carrying it would be refused, and the URL would fail for as long as it is stored.
    for name in ["ETag", "Last-Modified"]
    where !response.headers.values(for: name).allSatisfy(HTTPHeaders.canSend) {
      response.headers.remove(name)
    }
    for name in unstoredNames(of: response.headers, control: control) {
      response.headers.remove(name)
    }
    return response
  }

  /// The names of the headers of `headers` that are never stored: ``unstoredHeaders``,
  /// ``hopByHopHeaders``, those `Connection` names, and those a `no-cache` directive names.
  static func unstoredNames(of headers: HTTPHeaders, control: CacheControl) -> Set<String> {
    var names = Set(unstoredHeaders.map { $0.lowercased() }).union(hopByHopHeaders)
    for value in headers.values(for: "Connection") {
      for name in value.split(separator: ",") {
        names.insert(name.trimmingCharacters(in: .whitespaces).lowercased())
      }
    }
    names.formUnion(control.noCacheFields)
    return names
  }

  /// Response headers never stored: they are meant for the one caller who received them (as
  /// browsers' caches keep no `Set-Cookie` either).
  static let unstoredHeaders = ["Set-Cookie", "Set-Cookie2"]

  /// The headers that describe one connection (RFC 9110 §7.6.1) or the proxy that forwarded the
  /// response (RFC 9111 §3.1), lowercased: never stored.
  static let hopByHopHeaders: Set<String> = [
    "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade",
    "proxy-authenticate", "proxy-authentication-info", "proxy-authorization",
  ]

  /// Whether a response with this status and these directives may be stored (RFC 9111 §3): a
  /// final status other than `206` (a part is never stored) and `304`; not `no-store` (unless
  /// `must-understand` and the status is one RFC 9110 defines); a status the cache understands
  /// when it says `must-understand`; and explicit freshness, `public` or `private`, or a
  /// heuristically cacheable status.
  static func mayStore(_ status: Int, _ control: CacheControl) -> Bool {
    guard isFinal(status) else { return false }
    if control.mustUnderstand {
      guard understoodStatuses.contains(status) else { return false }
    } else if control.noStore {
      return false
    }
    return control.maxAge != nil || control.hasExpires || control.isPublic || control.isPrivate
      || heuristicallyCacheableStatuses.contains(status)
  }

  /// Whether heuristic freshness may apply (RFC 9111 §4.2.2): a heuristically cacheable status,
  /// or `public`.
  static func mayUseHeuristics(_ status: Int, _ control: CacheControl) -> Bool {
    heuristicallyCacheableStatuses.contains(status) || control.isPublic
  }

  /// Whether a status is one the cache stores at all: final, and neither `206` nor `304`.
  static func isFinal(_ status: Int) -> Bool {
    (200...599).contains(status) && status != 206 && status != 304
  }

  /// RFC 9110 §15.1: the statuses heuristically cacheable (`206` aside: a part is never stored).
  static let heuristicallyCacheableStatuses: Set<Int> = [
    200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501,
  ]

  /// The statuses RFC 9110 defines, whose caching rules the cache knows (`must-understand`).
  static let understoodStatuses: Set<Int> = Set(
    [200, 201, 202, 203, 204, 205, 300, 301, 302, 303, 305, 307, 308, 421, 422, 426]
      + Array(400...417) + Array(500...505))

  /// The value of request header `name` as `Vary` compares it (RFC 9111 §4.1): its field lines
  /// combined into one list, white space around each member left out, or `nil` when the request
  /// does not carry it.
  static func value(of name: String, in request: HTTPRequest) -> String? {
    if name == credentialsKey {
      return credentials(of: request)
    }
    let values = request.headers.values(for: name)
    guard !values.isEmpty else { return nil }
    return values.joined(separator: ",").split(separator: ",", omittingEmptySubsequences: false)
      .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " \t")) }
      .joined(separator: ",")
  }

  /// The most request headers one stored response may vary on.
  static let mostVaryingHeaders = 32

  /// The longest age or lifetime counted: 2^31 seconds (RFC 9111 §1.2.2).
  static let longest: Duration = .seconds(2_147_483_648)

  /// `max-age`, else `Expires` minus `Date` (RFC 9111 §4.2.1), `Date` being the time the
  /// response arrived when it has none that is valid; an `Expires` that is not one HTTP date
  /// means already expired (§5.3). No heuristics.
  private static func freshnessLifetime(
    _ headers: HTTPHeaders, control: CacheControl, now: Date
  ) -> Duration? {
    if let maxAge = control.maxAge {
      return .seconds(maxAge)
    }
    guard control.hasExpires else { return nil }
    guard let expiry = HTTPDate.parse("Expires", in: headers, now: now) else { return .zero }
    let date = HTTPDate.parse("Date", in: headers, now: now) ?? now
    return seconds(expiry.timeIntervalSince(date))
  }

  /// RFC 9111 §4.2.2: a fraction of the time since `Last-Modified` (as of `Date`, else the time
  /// the response arrived), at most a day.
  private static func heuristicLifetime(_ headers: HTTPHeaders, fraction: Double, now: Date)
    -> Duration?
  {
    guard let modified = HTTPDate.parse("Last-Modified", in: headers, now: now) else { return nil }
    let date = HTTPDate.parse("Date", in: headers, now: now) ?? now
    return seconds(min(date.timeIntervalSince(modified) * fraction, 86_400))
  }

  /// RFC 9111 §4.2.3's `corrected_initial_age`: the larger of the apparent age (the time from the
  /// response's `Date` to its arrival) and its `Age` plus the time it took to arrive.
  static func correctedInitialAge(_ headers: HTTPHeaders, now: Date, responseDelay: Duration)
    -> Duration
  {
    let apparent =
      HTTPDate.parse("Date", in: headers, now: now).map {
        seconds(now.timeIntervalSince($0))
      } ?? .zero
    let corrected = min(
      .seconds(CacheControl.age(headers) ?? 0) + max(responseDelay, .zero), longest)
    return max(apparent, corrected)
  }

  /// Whole seconds, from 0 to 2^31.
  private static func seconds(_ interval: TimeInterval) -> Duration {
    guard interval.isFinite else { return interval > 0 ? longest : .zero }
    return .seconds(Int64(min(max(0, interval.rounded(.down)), 2_147_483_648)))
  }

  /// How old the response is now (RFC 9111 §4.2.3's `current_age`): its corrected initial age
  /// plus the time it has been stored.
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

  /// Whether it may answer now while the cache revalidates it in the background (RFC 5861 §3):
  /// stale by no more than its `stale-while-revalidate`, neither `must-revalidate` nor
  /// `no-cache` forbidding it, and the request asking for nothing fresher (no `max-age`,
  /// `min-fresh` or `no-cache` of its own).
  func mayServeWhileRevalidating(_ request: CacheControl) -> Bool {
    let control = CacheControl(response.headers)
    guard let window = control.staleWhileRevalidate, let lifetime, !control.mustRevalidate,
      request.maxAge == nil, request.minFresh == nil, !request.noCache
    else { return false }
    return age < lifetime + .seconds(window)
  }

  /// Whether a `304` to the caller's own conditional `request` confirms this stored response:
  /// the `304`'s `ETag` is the stored one, or, without one, the request's `If-None-Match` lists
  /// the stored `ETag`, or its `If-Modified-Since` is the stored `Last-Modified`.
  func isConfirmed(by notModified: HTTPResponse, for request: HTTPRequest) -> Bool {
    if notModified.headers["ETag"] != nil {
      return isSelected(by: notModified)
    }
    let tags = request.headers.values(for: "If-None-Match")
    if !tags.isEmpty {
      guard let stored = response.headers["ETag"].map(Self.opaque) else { return false }
      return tags.flatMap(Self.entityTags).map(Self.opaque).contains(stored)
    }
    guard let since = HTTPDate.parse("If-Modified-Since", in: request.headers),
      let modified = HTTPDate.parse("Last-Modified", in: response.headers)
    else { return false }
    return since == modified
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
  /// of the same names (RFC 9111 §3.2; framing headers stay, and the headers never stored are
  /// not taken), stored anew now, its age that of the `304`.
  /// - Parameters:
  ///   - notModified: The `304`.
  ///   - clock: The client's clock.
  ///   - heuristic: The cache's heuristic fraction, if any.
  ///   - now: The wall time the `304` arrived.
  ///   - responseDelay: How long it took to arrive.
  /// - Returns: The refreshed entry, or `nil` when what it comes to may not be stored.
  func revalidated(
    by notModified: HTTPResponse, clock: any Clock<Duration>, heuristic: Double?, now: Date,
    responseDelay: Duration
  ) -> CacheEntry? {
    var merged = response
    let kept: Set<String> = ["content-length", "transfer-encoding", "content-encoding"]
    let unstored = Self.unstoredNames(
      of: notModified.headers, control: CacheControl(notModified.headers))
    for name in Set(notModified.headers.fields.map { $0.name.lowercased() })
    where !kept.contains(name) && !unstored.contains(name) {
      merged.headers.remove(name)
      for value in notModified.headers.values(for: name) {
        merged.headers.add(name, value)
      }
    }
    guard let request = response.request,
      var entry = CacheEntry(
        merged, for: request, clock: clock, heuristic: heuristic, now: now,
        responseDelay: responseDelay)
    else { return nil }
    entry.initialAge = Self.correctedInitialAge(
      notModified.headers, now: now, responseDelay: responseDelay)
    return entry
  }
}
