import Foundation

/// A `Set-Cookie` field a ``CookieJar`` ignored, and why (RFC 6265bis §5.6 and §5.7): what
/// ``CookieJar/store(_:from:)`` returns for each field it did not store. Names the cookie and the
/// host that set it; never its value.
public struct RejectedCookie: Error, Sendable, Hashable, CustomStringConvertible {
  /// Why a cookie was ignored.
  public struct Reason: Sendable, Hashable, CustomStringConvertible {
    let text: String

    /// The field holds a control character (other than a tab).
    public static let controlCharacter = Reason(text: "it holds a control character")
    /// Name and value together are longer than 4096 bytes.
    public static let tooLarge = Reason(text: "its name and value are longer than 4096 bytes")
    /// Neither a name nor a value.
    public static let empty = Reason(text: "it has neither a name nor a value")
    /// It came from a URL that is not `http` or `https`, or has no host name a cookie can name.
    public static let unsupportedURL = Reason(
      text: "it came from a URL without an ASCII host, or not http or https")
    /// Its `Domain` holds a character that is not ASCII.
    public static let domainNotASCII = Reason(text: "its Domain is not ASCII")
    /// Its `Domain` is a public suffix (`com`, `co.uk`, `github.io`) other than the host itself.
    public static let publicSuffix = Reason(text: "its Domain is a public suffix")
    /// Its `Domain` is neither the host that set it nor a domain above it.
    public static let foreignDomain = Reason(
      text: "its Domain is neither the host that set it nor a parent of it")
    /// `Secure`, from a URL that is not `https`.
    public static let secureOverHTTP = Reason(text: "it is Secure but came over plain http")
    /// From plain `http`, with the name of a `Secure` cookie it would shadow.
    public static let shadowsSecureCookie = Reason(
      text: "it came over plain http with the name of a Secure cookie it would shadow")
    /// `SameSite=None` without `Secure`.
    public static let sameSiteNoneWithoutSecure = Reason(
      text: "it is SameSite=None without Secure")
    /// A `__Secure-` name without `Secure`.
    public static let securePrefix = Reason(text: "its __Secure- name needs Secure")
    /// A `__Host-` name without `Secure`, with a `Domain`, or without `Path=/`.
    public static let hostPrefix = Reason(
      text: "its __Host- name needs Secure, Path=/ and no Domain")
    /// No name, and a value that starts like a `__Secure-` or `__Host-` name.
    public static let prefixInValue = Reason(
      text: "it has no name and a value starting with __Secure- or __Host-")

    /// The reason, as a clause: `its Domain is a public suffix`.
    public var description: String { text }
  }

  /// The cookie's name (empty when it has none, or could not be read).
  public var name: String
  /// The host that set it.
  public var host: String
  /// Why it was ignored.
  public var reason: Reason

  /// A rejection.
  /// - Parameters:
  ///   - name: The cookie's name.
  ///   - host: The host that set it.
  ///   - reason: Why it was ignored.
  public init(name: String, host: String, reason: Reason) {
    self.name = name
    self.host = host
    self.reason = reason
  }

  /// `Cookie "session" from api.example.com was ignored: its Domain is a public suffix`.
  public var description: String {
    let shown = name.count > 64 ? String(name.prefix(64)) + "…" : name
    return "Cookie \"\(shown)\" from \(host) was ignored: \(reason)"
  }
}
