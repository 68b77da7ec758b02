import Foundation

/// The cookies of a ``CookieJar``, as a value: the storage model (RFC 6265bis §5.7) and the
/// retrieval algorithm (§5.8.3), with no lock and no clock of its own, so that each is tested
/// alone.
struct CookieStore: Sendable {
  /// What identifies a cookie: a new one with the same replaces it (§5.7, step 23).
  struct Key: Hashable, Sendable {
    var name: String
    var domain: String
    var isHostOnly: Bool
    var path: String
  }

  /// A stored cookie, with when it was last sent (for eviction) and the order it was first
  /// stored in (to break ties between equal creation times).
  struct Entry: Sendable {
    var cookie: Cookie
    var lastAccess: Date
    var order: Int
  }

  private(set) var entries: [Key: Entry] = [:]
  private var nextOrder = 0

  /// Store what `field`, received in answer to `url`, sets (§5.6 and §5.7), and evict what has
  /// expired or is over the limits.
  /// - Returns: Why the field was ignored, or `nil` when it was stored.
  mutating func receive(
    _ field: String, from url: URL, now: Date, limits: CookieJar.Limits,
    publicSuffixes: PublicSuffixList
  ) -> RejectedCookie.Reason? {
    guard let host = Self.canonicalHost(of: url) else { return .unsupportedURL }
    let isSecureURL = url.scheme?.lowercased() == "https"
    let parsed: SetCookie
    switch SetCookie.parse(
      field, from: url, now: now, lifetimeLimit: limits.lifetime.seconds)
    {
    case .failure(.controlCharacter): return .controlCharacter
    case .failure(.tooLarge): return .tooLarge
    case .success(let cookie): parsed = cookie
    }
    if parsed.name.isEmpty && parsed.value.isEmpty { return .empty }
    var domain = parsed.domain ?? ""
    if !domain.unicodeScalars.allSatisfy({ $0.value >= 0x01 && $0.value <= 0x7F }) {
      return .domainNotASCII
    }
    // An address names itself only: `Domain` may repeat it (the cookie stays host-only).
    if !domain.isEmpty, ConnectionOptions.isAddress(host) {
      guard domain == host else { return .foreignDomain }
      domain = ""
    }
    if !domain.isEmpty, publicSuffixes.isPublicSuffix(domain) {
      guard domain == host else { return .publicSuffix }
      domain = ""
    }
    if !domain.isEmpty, !Self.domainMatches(host, domain) { return .foreignDomain }
    var cookie = Cookie(
      name: parsed.name, value: parsed.value, domain: domain.isEmpty ? host : domain,
      isHostOnly: domain.isEmpty, path: parsed.path ?? SetCookie.defaultPath(of: url),
      expires: parsed.maxAge ?? parsed.expires, isSecure: parsed.isSecure,
      isHTTPOnly: parsed.isHTTPOnly, sameSite: parsed.sameSite, created: now)
    if cookie.isSecure && !isSecureURL { return .secureOverHTTP }
    if !cookie.isSecure && !isSecureURL && shadowsSecureCookie(cookie) {
      return .shadowsSecureCookie
    }
    if cookie.sameSite == .none && !cookie.isSecure { return .sameSiteNoneWithoutSecure }
    let lowercasedName = cookie.name.lowercased()
    if lowercasedName.hasPrefix("__secure-") && !cookie.isSecure { return .securePrefix }
    if lowercasedName.hasPrefix("__host-")
      && !(cookie.isSecure && cookie.isHostOnly && parsed.path != nil && cookie.path == "/")
    {
      return .hostPrefix
    }
    let lowercasedValue = cookie.value.lowercased()
    if cookie.name.isEmpty
      && (lowercasedValue.hasPrefix("__secure-") || lowercasedValue.hasPrefix("__host-"))
    {
      return .prefixInValue
    }
    let key = Key(
      name: cookie.name, domain: cookie.domain, isHostOnly: cookie.isHostOnly, path: cookie.path)
    var order = nextOrder
    if let old = entries[key] {
      cookie.created = old.cookie.created
      order = old.order
    } else {
      nextOrder += 1
    }
    entries[key] = Entry(cookie: cookie, lastAccess: now, order: order)
    evict(now: now, limits: limits, domain: cookie.domain)
    return nil
  }

  /// The cookies to send with a request to `url`, in the order to send them (longest path
  /// first, then oldest first), marked as sent at `now`.
  mutating func retrieve(for url: URL, now: Date, publicSuffixes: PublicSuffixList) -> [Cookie] {
    removeExpired(now: now)
    guard let host = Self.canonicalHost(of: url) else { return [] }
    let isSecureURL = url.scheme?.lowercased() == "https"
    let path = Self.requestPath(of: url)
    let chosen = entries.filter { _, entry in
      let cookie = entry.cookie
      let domainMatches =
        cookie.isHostOnly
        ? host == cookie.domain
        : Self.domainMatches(host, cookie.domain)
          && !publicSuffixes.isPublicSuffix(cookie.domain)
      return domainMatches && Self.pathMatches(path, cookie.path)
        && (isSecureURL || !cookie.isSecure)
    }
    .sorted { a, b in
      let (x, y) = (a.value, b.value)
      if x.cookie.path.utf8.count != y.cookie.path.utf8.count {
        return x.cookie.path.utf8.count > y.cookie.path.utf8.count
      }
      if x.cookie.created != y.cookie.created { return x.cookie.created < y.cookie.created }
      return x.order < y.order
    }
    for (key, _) in chosen { entries[key]?.lastAccess = now }
    return chosen.map(\.value.cookie)
  }

  /// The `Cookie` field value for `cookies`: `a=1; b=2` (§5.8.3, step 6).
  static func header(for cookies: [Cookie]) -> String {
    cookies.map { cookie in
      (cookie.name.isEmpty ? "" : cookie.name + "=") + cookie.value
    }.joined(separator: "; ")
  }

  /// A `Cookie` field holding the pairs of `appField` (a field the app set itself) and then
  /// `cookies`, but for those whose name `appField` already gives: the app's own value wins.
  /// `nil` when both are empty.
  static func merging(_ appField: String?, _ cookies: [Cookie]) -> String? {
    let own = appField.map(names(in:)) ?? []
    let added = cookies.filter { !own.contains($0.name) }
    let parts = [
      appField.flatMap { $0.isEmpty ? nil : $0 }, added.isEmpty ? nil : header(for: added),
    ]
    .compactMap { $0 }
    return parts.isEmpty ? nil : parts.joined(separator: "; ")
  }

  /// The names in a `Cookie` field: what precedes `=` in each `;`-separated pair, trimmed (the
  /// empty name for a pair without one).
  static func names(in field: String) -> Set<String> {
    Set(
      field.split(separator: ";").map { pair in
        guard let equals = pair.firstIndex(of: "=") else { return "" }
        return pair[..<equals].trimmingCharacters(in: .whitespaces)
      })
  }

  /// Every cookie that has not expired at `now`.
  mutating func all(now: Date) -> [Cookie] {
    removeExpired(now: now)
    return entries.values.sorted { $0.order < $1.order }.map(\.cookie)
  }

  /// Remove the cookies with these keys.
  mutating func remove(_ keys: Set<Key>) {
    for key in keys { entries[key] = nil }
  }

  /// Put back cookies a jar's file held, each with when it was last sent, in the order they were
  /// first stored (one with the key of an earlier one replaces it), then keep within `limits`
  /// by the order ``receive`` evicts in: for each domain, then over the whole store.
  mutating func restore(_ cookies: [(cookie: Cookie, lastAccess: Date)], limits: CookieJar.Limits) {
    for (cookie, lastAccess) in cookies {
      let key = Key(
        name: cookie.name, domain: cookie.domain, isHostOnly: cookie.isHostOnly, path: cookie.path)
      entries[key] = Entry(
        cookie: cookie, lastAccess: lastAccess, order: entries[key]?.order ?? nextOrder)
      nextOrder += 1
    }
    for (_, inDomain) in Dictionary(grouping: entries, by: \.value.cookie.domain)
    where inDomain.count > limits.cookiesPerDomain {
      let evicted = Self.evictionOrder(Dictionary(uniqueKeysWithValues: inDomain.map { $0 }))
      for key in evicted.prefix(inDomain.count - limits.cookiesPerDomain) { entries[key] = nil }
    }
    if entries.count > limits.cookies {
      for key in Self.evictionOrder(entries).prefix(entries.count - limits.cookies) {
        entries[key] = nil
      }
    }
  }

  /// Every cookie with its key, for choosing outside the lock what to remove.
  var keyedCookies: [(Key, Cookie)] { entries.map { ($0.key, $0.value.cookie) } }

  /// Whether a cookie from plain `http` would overlay a `Secure` one (§5.7, step 16): same
  /// name, domains matching either way, and its path within the secure one's.
  private func shadowsSecureCookie(_ cookie: Cookie) -> Bool {
    entries.values.contains { entry in
      let existing = entry.cookie
      return existing.isSecure && existing.name == cookie.name
        && (Self.domainMatches(existing.domain, cookie.domain)
          || Self.domainMatches(cookie.domain, existing.domain))
        && Self.pathMatches(cookie.path, existing.path)
    }
  }

  /// Evict what has expired, then what is over the limits: for `domain`, its cookies that are
  /// not `Secure` first, least recently sent first; then over the whole store alike.
  private mutating func evict(now: Date, limits: CookieJar.Limits, domain: String) {
    removeExpired(now: now)
    let inDomain = entries.filter { $0.value.cookie.domain == domain }
    if inDomain.count > limits.cookiesPerDomain {
      for key in Self.evictionOrder(inDomain).prefix(inDomain.count - limits.cookiesPerDomain) {
        entries[key] = nil
      }
    }
    if entries.count > limits.cookies {
      for key in Self.evictionOrder(entries).prefix(entries.count - limits.cookies) {
        entries[key] = nil
      }
    }
  }

  /// Keys in the order to evict them: not `Secure` before `Secure`, then least recently sent,
  /// then first stored.
  private static func evictionOrder(_ entries: [Key: Entry]) -> [Key] {
    entries.sorted { a, b in
      if a.value.cookie.isSecure != b.value.cookie.isSecure { return !a.value.cookie.isSecure }
      if a.value.lastAccess != b.value.lastAccess { return a.value.lastAccess < b.value.lastAccess }
      return a.value.order < b.value.order
    }.map(\.key)
  }

  /// Remove every cookie whose expiry is `now` or earlier.
  private mutating func removeExpired(now: Date) {
    if entries.values.contains(where: { $0.cookie.expires.map { $0 <= now } ?? false }) {
      entries = entries.filter { $0.value.cookie.expires.map { $0 > now } ?? true }
    }
  }

  /// `url`'s host, in lower case, when it is `http` or `https` and has an ASCII host name or
  /// address; `nil` otherwise (§5.1.2: a name Errand cannot put in ASCII form is refused).
  static func canonicalHost(of url: URL) -> String? {
    guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
      var host = url.host(percentEncoded: true)?.lowercased(), !host.isEmpty,
      host.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0 != "%" })
    else { return nil }
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    return host
  }

  /// The path a request to `url` has, for matching cookie paths: `/` when empty.
  static func requestPath(of url: URL) -> String {
    let path = url.path(percentEncoded: true)
    return path.isEmpty ? "/" : path
  }

  /// Whether `host` domain-matches `domain` (§5.1.3): the same, or a host name (not an
  /// address) ending in `.` and `domain`.
  static func domainMatches(_ host: String, _ domain: String) -> Bool {
    host == domain
      || (host.hasSuffix("." + domain) && !ConnectionOptions.isAddress(host) && !domain.isEmpty
        && !ConnectionOptions.isAddress(domain))
  }

  /// Whether `requestPath` path-matches `cookiePath` (§5.1.4).
  static func pathMatches(_ requestPath: String, _ cookiePath: String) -> Bool {
    guard requestPath.utf8.starts(with: cookiePath.utf8) else { return false }
    return requestPath.utf8.count == cookiePath.utf8.count || cookiePath.hasSuffix("/")
      || requestPath.utf8.dropFirst(cookiePath.utf8.count).first == UInt8(ascii: "/")
  }
}
