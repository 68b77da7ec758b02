import Foundation

/// What a ``CookieJar``'s file holds: a format marker and version, then one record per cookie
/// that outlives the process (session cookies are never written), with only what a cookie needs.
/// No URL: a cookie's domain and path are all that say where it goes. Values are base64, so that
/// they are not found by searching the disk for them; that hides, it does not protect.
struct CookieFileContents: Codable {
  /// The marker that says the file is a jar's.
  static let format = "errand-cookie-jar"
  /// This version of the format.
  static let version = 1

  var format: String
  var version: Int
  var cookies: [CookieFileRecord]

  init(cookies: [CookieFileRecord]) {
    format = Self.format
    version = Self.version
    self.cookies = cookies
  }

  /// The marker and version, then the records only when they are this version's.
  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    format = try container.decode(String.self, forKey: .format)
    version = try container.decode(Int.self, forKey: .version)
    let isCurrent = format == Self.format && version == Self.version
    cookies = isCurrent ? try container.decode([CookieFileRecord].self, forKey: .cookies) : []
  }
}

/// One cookie in a jar's file: dates as seconds since 1970, the value base64.
struct CookieFileRecord: Codable {
  var name: String
  var value: String
  var domain: String
  var hostOnly: Bool
  var path: String
  var expires: Double
  var secure: Bool
  var httpOnly: Bool
  var sameSite: String
  var created: Double
  var lastAccess: Double

  /// The record of `entry`, or `nil` for a session cookie (no expiry), which is not written.
  init?(_ entry: CookieStore.Entry) {
    let cookie = entry.cookie
    guard let expires = cookie.expires,
      [expires, cookie.created, entry.lastAccess].allSatisfy({ $0.timeIntervalSince1970.isFinite })
    else { return nil }
    name = cookie.name
    value = Data(cookie.value.utf8).base64EncodedString()
    domain = cookie.domain
    hostOnly = cookie.isHostOnly
    path = cookie.path
    self.expires = expires.timeIntervalSince1970
    secure = cookie.isSecure
    httpOnly = cookie.isHTTPOnly
    sameSite = cookie.sameSite.name
    created = cookie.created.timeIntervalSince1970
    lastAccess = entry.lastAccess.timeIntervalSince1970
  }

  /// The cookie again, with when it was last sent, if it is one the jar could have stored and it
  /// has not expired at `now`: the same checks as a `Set-Cookie` field passes (sizes, control
  /// characters, prefixes, `SameSite=None` with `Secure`), a domain that is no public suffix of
  /// `publicSuffixes` (even for a host-only cookie), a domain cookie for no address, and an
  /// expiry within `limits`' lifetime from `now` (a later one is brought back to it). Dates in
  /// the future are brought back to `now`.
  func cookie(now: Date, limits: CookieJar.Limits, publicSuffixes: PublicSuffixList)
    -> (cookie: Cookie, lastAccess: Date)?
  {
    guard let bytes = Data(base64Encoded: value), let value = String(data: bytes, encoding: .utf8),
      Self.isPair(name: name, value: value), Self.isDomain(domain), Self.isPath(path),
      !publicSuffixes.isPublicSuffix(domain),
      hostOnly || !ConnectionOptions.isAddress(domain)
    else { return nil }
    let sameSite: Cookie.SameSite
    switch self.sameSite {
    case Cookie.SameSite.strict.name: sameSite = .strict
    case Cookie.SameSite.lax.name: sameSite = .lax
    case Cookie.SameSite.none.name: sameSite = .none
    case Cookie.SameSite.default.name: sameSite = .default
    default: return nil
    }
    let lowercasedName = name.lowercased()
    let lowercasedValue = value.lowercased()
    guard expires > now.timeIntervalSince1970, sameSite != .none || secure,
      !lowercasedName.hasPrefix("__secure-") || secure,
      !lowercasedName.hasPrefix("__host-") || (secure && hostOnly && path == "/"),
      !name.isEmpty
        || !(lowercasedValue.hasPrefix("__secure-") || lowercasedValue.hasPrefix("__host-"))
    else { return nil }
    let latest = now.timeIntervalSince1970 + limits.lifetime.seconds
    let cookie = Cookie(
      name: name, value: value, domain: domain, isHostOnly: hostOnly, path: path,
      expires: Date(timeIntervalSince1970: min(expires, latest)), isSecure: secure,
      isHTTPOnly: httpOnly, sameSite: sameSite,
      created: Date(timeIntervalSince1970: min(created, now.timeIntervalSince1970)))
    return (cookie, Date(timeIntervalSince1970: min(lastAccess, now.timeIntervalSince1970)))
  }

  /// Whether `name` and `value` are what a `Set-Cookie` field can set: trimmed, no control
  /// character, no `;` (nor `=` in the name), not both empty, at most 4096 bytes together.
  private static func isPair(name: String, value: String) -> Bool {
    let blank = CharacterSet(charactersIn: " \t")
    return !(name.isEmpty && value.isEmpty) && name.utf8.count + value.utf8.count <= 4096
      && !name.contains("=") && !name.contains(";") && !value.contains(";")
      && ![name, value].contains { text in
        text.unicodeScalars.contains(where: SetCookie.isControl)
          || text.unicodeScalars.first.map(blank.contains) ?? false
          || text.unicodeScalars.last.map(blank.contains) ?? false
      }
  }

  /// Whether `domain` is a host or domain a jar keeps: lower-case ASCII without spaces, `%`, `/`
  /// or `;`, no leading dot, at most 1024 bytes.
  private static func isDomain(_ domain: String) -> Bool {
    !domain.isEmpty && domain.utf8.count <= 1024 && !domain.hasPrefix(".")
      && domain.unicodeScalars.allSatisfy { scalar in
        scalar.isASCII && scalar.value > 0x20 && scalar.value != 0x7F
          && !"%/;".unicodeScalars.contains(scalar) && !("A"..."Z").contains(scalar)
      }
  }

  /// Whether `path` is a cookie path: from `/`, at most 1024 bytes, no control character or `;`.
  private static func isPath(_ path: String) -> Bool {
    path.hasPrefix("/") && path.utf8.count <= 1024 && !path.contains(";")
      && !path.unicodeScalars.contains(where: SetCookie.isControl)
  }
}
