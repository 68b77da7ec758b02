import Foundation

/// A bearer token and how long it stays valid, as an ``ExpiringTokenProvider`` hands it over.
///
/// No printed form shows the token: ``description``, `dump` and debuggers show how long it lasts.
public struct AccessToken: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
  /// The token, without the `Bearer ` prefix: never printed.
  public var value: String
  /// How long it stays valid from when it is handed over (OAuth's `expires_in`), or `nil` when
  /// the provider does not know.
  public var lifetime: Duration?

  /// A token valid for `lifetime` from now.
  /// - Parameters:
  ///   - value: The token, without the `Bearer ` prefix.
  ///   - lifetime: How long it stays valid; `nil` (the default) when unknown.
  public init(_ value: String, lifetime: Duration? = nil) {
    self.value = value
    self.lifetime = lifetime
  }

  /// A token valid until `expiresAt` (a JWT's `exp`, say).
  /// - Parameters:
  ///   - value: The token, without the `Bearer ` prefix.
  ///   - expiresAt: When it stops being valid.
  ///   - now: The current date; the system's by default.
  public init(_ value: String, expiresAt: Date, now: Date = Date()) {
    self.value = value
    // Clamped, so that a nonsensical expiry (a JWT's `exp` in milliseconds, say) cannot trap:
    // at most about 3,000 years either way; not a number is no expiry known.
    let seconds = expiresAt.timeIntervalSince(now)
    self.lifetime =
      seconds.isNaN
      ? nil : .milliseconds(Int64((min(max(seconds, -1e11), 1e11) * 1000).rounded(.down)))
  }

  /// The token's lifetime, never its value: `access token (valid for 3600 s)`.
  public var description: String {
    guard let lifetime else { return "access token (lifetime unknown)" }
    return "access token (valid for \(lifetime.decimalSeconds) s)"
  }

  /// The token for `dump` and debuggers, with the value as `***`.
  public var customMirror: Mirror {
    Mirror(self, children: ["value": "***", "lifetime": lifetime as Any], displayStyle: .struct)
  }
}

/// A ``TokenProvider`` that knows when its tokens expire, so that
/// ``BearerAuthenticationMiddleware`` refreshes a token before it expires rather than after a
/// `401`, and never sends one it knows has expired.
///
/// ```swift
/// struct SessionTokens: ExpiringTokenProvider {
///   let store: TokenStore
///   func currentAccessToken() async throws -> AccessToken? {
///     await store.current.map { AccessToken($0.token, expiresAt: $0.expiry) }
///   }
///   func refreshAccessToken() async throws -> AccessToken {
///     let fresh = try await store.refresh()
///     return AccessToken(fresh.token, lifetime: .seconds(fresh.expiresIn))
///   }
/// }
/// ```
public protocol ExpiringTokenProvider: TokenProvider {
  /// The token to send now, with how long it stays valid, or `nil` when there is none yet.
  func currentAccessToken() async throws -> AccessToken?

  /// Get a new token, with how long it stays valid. Errand calls it at most once at a time.
  /// - Throws: Why no token could be had; every request waiting for it fails with this error.
  func refreshAccessToken() async throws -> AccessToken
}

extension ExpiringTokenProvider {
  /// The value of ``currentAccessToken()``.
  public func currentToken() async throws -> String? {
    try await currentAccessToken()?.value
  }

  /// The value of ``refreshAccessToken()``.
  public func refreshToken() async throws -> String {
    try await refreshAccessToken().value
  }
}

/// A refresh handed over a token that had already expired: it is not sent.
public struct ExpiredTokenError: Error, Hashable, CustomStringConvertible {
  /// How long ago, by its lifetime, it expired (zero or negative lifetime).
  public var lifetime: Duration

  /// The error.
  /// - Parameter lifetime: The lifetime the token came with.
  public init(lifetime: Duration) {
    self.lifetime = lifetime
  }

  /// What happened, without the token.
  public var description: String {
    "The token provider handed over a token that had already expired "
      + "(lifetime \(lifetime.decimalSeconds) s); it was not sent"
  }
}
