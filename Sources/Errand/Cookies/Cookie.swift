import Foundation

/// A cookie as a ``CookieJar`` keeps it: what a server set with `Set-Cookie`, and where it may
/// go back (RFC 6265bis §5.7).
///
/// No printed form shows the value: ``description``, `dump` and debuggers show `***` in its
/// place, so that logging a jar's cookies does not log a session.
public struct Cookie: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
  /// How a cookie goes with requests from another site (RFC 6265bis §5.6.7). An API client
  /// makes every request on its own behalf, so a jar sends a cookie whatever its `SameSite`;
  /// the attribute is kept, and `None` still requires `Secure`.
  public struct SameSite: Sendable, Hashable, CustomStringConvertible {
    let name: String

    /// `SameSite=Strict`.
    public static let strict = SameSite(name: "Strict")
    /// `SameSite=Lax`.
    public static let lax = SameSite(name: "Lax")
    /// `SameSite=None`: only with `Secure`.
    public static let none = SameSite(name: "None")
    /// No `SameSite` attribute, or one with another value.
    public static let `default` = SameSite(name: "Default")

    /// The enforcement's name, as the attribute spells it (`Default` for none).
    public var description: String { name }
  }

  /// The cookie's name; empty for a cookie set without one (`Set-Cookie: token`).
  public var name: String
  /// The cookie's value: never printed.
  public var value: String
  /// The host it goes to (``isHostOnly``), or the domain whose hosts it goes to: in lower case,
  /// without a leading dot.
  public var domain: String
  /// Whether it goes to ``domain`` alone (no `Domain` attribute), not to its subdomains.
  public var isHostOnly: Bool
  /// The path it goes to, and the paths below it.
  public var path: String
  /// When it expires, or `nil` for a cookie that lasts as long as the jar (no `Expires` or
  /// `Max-Age`).
  public var expires: Date?
  /// Whether it goes over `https` only.
  public var isSecure: Bool
  /// Whether it was set `HttpOnly` (kept; an API client has no scripts to hide it from).
  public var isHTTPOnly: Bool
  /// Its `SameSite` attribute.
  public var sameSite: SameSite
  /// When it was first set: cookies with paths of the same length are sent oldest first.
  public var created: Date

  /// A cookie.
  /// - Parameters:
  ///   - name: Its name.
  ///   - value: Its value.
  ///   - domain: The host or domain it goes to.
  ///   - isHostOnly: Whether it goes to `domain` alone; `true` by default.
  ///   - path: The path it goes to; `/` by default.
  ///   - expires: When it expires; `nil` (the default) for as long as the jar lasts.
  ///   - isSecure: Whether it goes over `https` only; `false` by default.
  ///   - isHTTPOnly: Whether it was set `HttpOnly`; `false` by default.
  ///   - sameSite: Its `SameSite` attribute; `.default` by default.
  ///   - created: When it was set.
  public init(
    name: String, value: String, domain: String, isHostOnly: Bool = true, path: String = "/",
    expires: Date? = nil, isSecure: Bool = false, isHTTPOnly: Bool = false,
    sameSite: SameSite = .default, created: Date
  ) {
    self.name = name
    self.value = value
    self.domain = domain
    self.isHostOnly = isHostOnly
    self.path = path
    self.expires = expires
    self.isSecure = isSecure
    self.isHTTPOnly = isHTTPOnly
    self.sameSite = sameSite
    self.created = created
  }

  /// The cookie without its value: `session=*** for api.example.com/ (secure, expires
  /// 2026-12-31T00:00:00Z)`.
  public var description: String {
    var flags: [String] = []
    if isSecure { flags.append("secure") }
    if isHTTPOnly { flags.append("HttpOnly") }
    if sameSite != .default { flags.append("SameSite=\(sameSite)") }
    if let expires { flags.append("expires \(ISO8601DateFormatter().string(from: expires))") }
    let scope = (isHostOnly ? "" : ".") + domain + path
    return "\(name)=*** for \(scope)" + (flags.isEmpty ? "" : " (\(flags.joined(separator: ", ")))")
  }

  /// The cookie's fields for `dump`, debuggers and test failures, with the value as `***`.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "name": name, "value": "***", "domain": domain, "isHostOnly": isHostOnly, "path": path,
        "expires": expires as Any, "isSecure": isSecure, "isHTTPOnly": isHTTPOnly,
        "sameSite": sameSite, "created": created,
      ], displayStyle: .struct)
  }
}
