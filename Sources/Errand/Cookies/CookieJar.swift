import Foundation

/// The cookies one client keeps: stored from `Set-Cookie` and sent back in `Cookie` by the rules
/// of RFC 6265bis, the same whatever the transport.
///
/// ```swift
/// let jar = CookieJar()
/// let rejected = jar.store(["session=abc; Path=/; Secure; HttpOnly"],
///                          from: URL(string: "https://api.example.com/login")!)
/// jar.cookieHeader(for: URL(string: "https://api.example.com/v1/me")!)  // "session=abc"
/// ```
///
/// What a jar enforces:
/// - **Where a cookie goes.** Back to the host that set it (no `Domain`), or to a domain above it
///   that is not a public suffix (``PublicSuffixList``: `Domain=co.uk` from `bank.co.uk` is
///   refused), and to its path and the paths below. A host name is matched in lower case; an IP
///   address only exactly.
/// - **Secure cookies.** `Secure` ones are set and sent over `https` only, and a cookie from plain
///   `http` cannot shadow one; `__Secure-` and `__Host-` names keep their promises, in any case.
/// - **Sizes.** A field whose name and value exceed 4096 bytes, or an attribute over 1024, is
///   ignored; a domain keeps at most ``Limits/cookiesPerDomain`` cookies and the jar at most
///   ``Limits/cookies``, evicting those not `Secure` first, then the least recently sent.
/// - **Time.** `Max-Age` wins over `Expires`; no cookie lasts longer than ``Limits/lifetime``
///   (400 days); an expired cookie is removed, on the jar's `now`.
///
/// Values never appear in a printed form of the jar, its ``Cookie``s or a ``RejectedCookie``.
///
/// A jar lives in memory; one made with
/// ``init(persistingTo:fileProtection:publicSuffixes:limits:now:)`` also keeps its lasting
/// cookies in a file across launches.
public final class CookieJar: Sendable, CustomStringConvertible, CustomReflectable {
  /// How much a jar keeps.
  public struct Limits: Sendable, Hashable {
    /// The most cookies for one domain (RFC 6265bis asks for at least 50); at least 1, whether
    /// set here or in the initializer.
    public var cookiesPerDomain: Int {
      didSet { cookiesPerDomain = max(1, cookiesPerDomain) }
    }
    /// The most cookies in the jar (RFC 6265bis asks for at least 3000); at least 1.
    public var cookies: Int {
      didSet { cookies = max(1, cookies) }
    }
    /// The longest a cookie lasts, whatever its `Expires` or `Max-Age` say; at least zero.
    public var lifetime: Duration {
      didSet { lifetime = max(.zero, lifetime) }
    }

    /// Limits.
    /// - Parameters:
    ///   - cookiesPerDomain: The most cookies for one domain; 50 by default.
    ///   - cookies: The most cookies in the jar; 3000 by default.
    ///   - lifetime: The longest a cookie lasts; 400 days by default.
    public init(
      cookiesPerDomain: Int = 50, cookies: Int = 3000, lifetime: Duration = .seconds(34_560_000)
    ) {
      self.cookiesPerDomain = max(1, cookiesPerDomain)
      self.cookies = max(1, cookies)
      self.lifetime = max(.zero, lifetime)
    }
  }

  /// The public suffixes no cookie may be set for.
  public let publicSuffixes: PublicSuffixList
  /// How much the jar keeps.
  public let limits: Limits
  /// The current date, by which cookies are created and expire.
  let now: @Sendable () -> Date
  let state = Locked(CookieStore())
  /// The file the jar keeps its lasting cookies in, if any.
  let file: CookieFile?

  /// An empty jar.
  /// - Parameters:
  ///   - publicSuffixes: The public suffixes no cookie may be set for; the bundled snapshot by
  ///     default.
  ///   - limits: How much the jar keeps.
  ///   - now: The current date; the system's by default. Give a test's own to expire cookies
  ///     on its schedule.
  public init(
    publicSuffixes: PublicSuffixList = .bundled, limits: Limits = Limits(),
    now: @escaping @Sendable () -> Date = { Date() }
  ) {
    self.publicSuffixes = publicSuffixes
    self.limits = limits
    self.now = now
    file = nil
  }

  /// A jar that saves to `file` after each change, when there is one.
  init(
    publicSuffixes: PublicSuffixList, limits: Limits, now: @escaping @Sendable () -> Date,
    file: CookieFile?
  ) {
    self.publicSuffixes = publicSuffixes
    self.limits = limits
    self.now = now
    self.file = file
  }

  /// Store what a response's `Set-Cookie` fields set.
  /// - Parameters:
  ///   - setCookieFields: The `Set-Cookie` field values, one cookie each.
  ///   - url: The URL that answered with them.
  /// - Returns: The fields that were ignored, and why, in their order; empty when every one was
  ///   stored (a cookie that expires at once, `Max-Age=0`, is stored: it removes the one it
  ///   replaces).
  @discardableResult
  public func store(_ setCookieFields: [String], from url: URL) -> [RejectedCookie] {
    let now = self.now()
    let host = CookieStore.canonicalHost(of: url) ?? url.host ?? ""
    let rejected = state.withLock { store in
      setCookieFields.compactMap { field in
        store.receive(
          field, from: url, now: now, limits: limits, publicSuffixes: publicSuffixes
        ).map { RejectedCookie(name: Self.name(in: field), host: host, reason: $0) }
      }
    }
    if rejected.count < setCookieFields.count {
      file?.save(state, now: now)
    }
    return rejected
  }

  /// The cookies that go with a request to `url`, in the order they are sent: longest path
  /// first, then the oldest first.
  /// - Parameter url: The request's URL.
  /// - Returns: The cookies; none for a URL that is not `http` or `https`.
  public func cookies(for url: URL) -> [Cookie] {
    let now = self.now()
    return state.withLock { $0.retrieve(for: url, now: now, publicSuffixes: publicSuffixes) }
  }

  /// The `Cookie` field for a request to `url`: `a=1; b=2`, or `nil` when no cookie goes with it.
  /// - Parameter url: The request's URL.
  /// - Returns: The field's value, or `nil`.
  public func cookieHeader(for url: URL) -> String? {
    let cookies = cookies(for: url)
    return cookies.isEmpty ? nil : CookieStore.header(for: cookies)
  }

  /// Every cookie in the jar that has not expired, in the order they were first stored.
  public var allCookies: [Cookie] {
    let now = self.now()
    return state.withLock { $0.all(now: now) }
  }

  /// Remove every cookie: at sign-out, say.
  public func removeAll() {
    state.withLock { $0 = CookieStore() }
    file?.save(state, now: now())
  }

  /// Remove the cookies `shouldRemove` picks. It is called outside the jar's lock, so it may use
  /// the jar; a cookie stored meanwhile under another name, domain or path is kept.
  /// - Parameter shouldRemove: Whether to remove a cookie.
  public func remove(where shouldRemove: (Cookie) -> Bool) {
    let chosen = Set(state.withLock { $0.keyedCookies }.filter { shouldRemove($0.1) }.map(\.0))
    state.withLock { $0.remove(chosen) }
    file?.save(state, now: now())
  }

  /// How many cookies the jar holds, never their values, and the name of its file, never its
  /// folder: `cookie jar (3 cookies)`, `cookie jar (3 cookies, kept in cookies.json)`.
  public var description: String {
    let count = state.withLock { $0.entries.count }
    let kept = file.map { ", kept in \($0.name)" } ?? ""
    return "cookie jar (\(count) cookie\(count == 1 ? "" : "s")\(kept))"
  }

  /// The jar for `dump`, debuggers and test failures: its cookies (values hidden), limits and
  /// the name of its file.
  public var customMirror: Mirror {
    var children: KeyValuePairs<String, Any> = ["cookies": allCookies, "limits": limits]
    if let file {
      children = ["cookies": allCookies, "limits": limits, "file": file.name]
    }
    return Mirror(self, children: children, displayStyle: .class)
  }

  /// The name a field sets, for a rejection: what precedes `=` in what precedes `;`, trimmed;
  /// empty for a field with a control character (nothing of it is repeated).
  private static func name(in field: String) -> String {
    guard !field.unicodeScalars.contains(where: SetCookie.isControl) else { return "" }
    let pair = field.prefix { $0 != ";" }
    guard let equals = pair.firstIndex(of: "=") else { return "" }
    return pair[..<equals].trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
  }
}
