import Foundation

/// Where an ``OAuth2TokenProvider`` keeps its tokens between launches: the keychain, a file, or
/// memory.
///
/// The provider loads the tokens once, before it first needs them, saves them after every grant
/// (a rotated refresh token is saved before the new access token is used) and removes them when
/// the server answers `invalid_grant`, so that the app signs the user in again.
///
/// Errand ships ``InMemoryTokenStorage`` and ``FileTokenStorage``; a keychain-backed storage is a
/// few lines of your own (see "Authentication and Retries" in the documentation).
///
/// ```swift
/// struct KeychainTokenStorage: TokenStorage {
///   func load() async throws -> StoredTokens? { … }
///   func save(_ tokens: StoredTokens) async throws { … }
///   func remove() async throws { … }
/// }
/// ```
public protocol TokenStorage: Sendable {
  /// The tokens saved last, or `nil` when there are none.
  /// - Throws: Why the tokens could not be read; never quote them.
  func load() async throws -> StoredTokens?

  /// Keep `tokens`, replacing any saved before.
  /// - Parameter tokens: The tokens to keep.
  /// - Throws: Why they could not be kept; never quote them.
  func save(_ tokens: StoredTokens) async throws

  /// Forget the tokens, as when the user signs out; nothing happens when there are none.
  /// - Throws: Why they could not be removed.
  func remove() async throws
}

/// The tokens a ``TokenStorage`` keeps: an access token, when it expires, and a refresh token.
///
/// No printed form shows a token: ``description``, `dump` and debuggers say which are present
/// and when the access token expires. It encodes as JSON with OAuth's names (`access_token`,
/// `expires_at` as seconds since 1970, `refresh_token`, `scope`), for storages that keep bytes.
public struct StoredTokens: Sendable, Hashable, Codable, CustomStringConvertible,
  CustomReflectable
{
  /// The access token, without the `Bearer ` prefix, or `nil` when there is none yet.
  public var accessToken: String?
  /// When the access token stops being valid, or `nil` when unknown.
  public var expiresAt: Date?
  /// The refresh token, or `nil` when the grant needs none (client credentials).
  public var refreshToken: String?
  /// The scope the access token was granted, as the server said, or `nil`.
  public var scope: String?

  /// Tokens to keep.
  /// - Parameters:
  ///   - accessToken: The access token, or `nil` when there is none yet.
  ///   - expiresAt: When the access token stops being valid, or `nil` when unknown.
  ///   - refreshToken: The refresh token, if any.
  ///   - scope: The scope granted, if known.
  public init(
    accessToken: String? = nil, expiresAt: Date? = nil, refreshToken: String? = nil,
    scope: String? = nil
  ) {
    self.accessToken = accessToken
    self.expiresAt = expiresAt
    self.refreshToken = refreshToken
    self.scope = scope
  }

  private enum CodingKeys: String, CodingKey {
    case accessToken = "access_token"
    case expiresAt = "expires_at"
    case refreshToken = "refresh_token"
    case scope
  }

  /// Decode tokens from their JSON form.
  /// - Parameter decoder: The decoder.
  /// - Throws: A decoding error, which names the field, never its value.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    accessToken = try container.decodeIfPresent(String.self, forKey: .accessToken)
    expiresAt = try container.decodeIfPresent(Double.self, forKey: .expiresAt).map {
      Date(timeIntervalSince1970: $0)
    }
    refreshToken = try container.decodeIfPresent(String.self, forKey: .refreshToken)
    scope = try container.decodeIfPresent(String.self, forKey: .scope)
  }

  /// Encode the tokens as JSON, the expiry as seconds since 1970.
  /// - Parameter encoder: The encoder.
  /// - Throws: An encoding error.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encodeIfPresent(accessToken, forKey: .accessToken)
    try container.encodeIfPresent(expiresAt?.timeIntervalSince1970, forKey: .expiresAt)
    try container.encodeIfPresent(refreshToken, forKey: .refreshToken)
    try container.encodeIfPresent(scope, forKey: .scope)
  }

  /// Which tokens are present, never their values:
  /// `stored tokens (access token expiring 2025-01-01T00:00:00Z, refresh token)`.
  public var description: String {
    var parts: [String] = []
    if accessToken != nil {
      parts.append(
        expiresAt.map { "access token expiring \(Self.formatted($0))" } ?? "access token")
    }
    if refreshToken != nil { parts.append("refresh token") }
    return parts.isEmpty
      ? "stored tokens (none)" : "stored tokens (\(parts.joined(separator: ", ")))"
  }

  /// The tokens for `dump` and debuggers, each value as `***`.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "accessToken": accessToken.map { _ in "***" } as Any,
        "expiresAt": expiresAt.map(Self.formatted) as Any,
        "refreshToken": refreshToken.map { _ in "***" } as Any, "scope": scope as Any,
      ], displayStyle: .struct)
  }

  /// `date` in UTC as `2025-01-01T00:00:00Z`, computed from its seconds since 1970, so that no
  /// formatter is made (making them at once on many threads traps on Linux) and no expiry, however
  /// absurd, can trap.
  static func formatted(_ date: Date) -> String {
    let seconds = date.timeIntervalSince1970
    guard seconds.isFinite, abs(seconds) < 1e11 else { return "at \(seconds) s since 1970" }
    let whole = Int64(seconds.rounded(.down))
    let (days, second) = (whole.floorDivided(by: 86_400), whole.floorModulo(86_400))
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468
    let era = z.floorDivided(by: 146_097)
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return "\(year)-\(two(month))-\(two(day))T\(two(second / 3600)):\(two(second % 3600 / 60)):"
      + "\(two(second % 60))Z"
  }
}

extension Int64 {
  fileprivate func floorDivided(by divisor: Int64) -> Int64 {
    let quotient = self / divisor
    return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
  }

  fileprivate func floorModulo(_ divisor: Int64) -> Int64 {
    self - floorDivided(by: divisor) * divisor
  }
}

/// A ``TokenStorage`` in memory: the tokens last as long as the process. For tests, and for apps
/// that sign in at every launch.
public final class InMemoryTokenStorage: TokenStorage, CustomStringConvertible, CustomReflectable {
  private let tokens: Locked<StoredTokens?>

  /// A storage holding `tokens`.
  /// - Parameter tokens: The tokens to start with; none by default.
  public init(_ tokens: StoredTokens? = nil) {
    self.tokens = Locked(tokens)
  }

  /// The tokens held, or `nil`.
  public func load() async throws -> StoredTokens? {
    tokens.withLock { $0 }
  }

  /// Hold `tokens` instead of those held before.
  /// - Parameter tokens: The tokens to hold.
  /// - Throws: Nothing: holding tokens in memory cannot fail.
  public func save(_ tokens: StoredTokens) async throws {
    self.tokens.withLock { $0 = tokens }
  }

  /// Hold no tokens.
  public func remove() async throws {
    tokens.withLock { $0 = nil }
  }

  /// `tokens in memory: stored tokens (refresh token)`, never a token.
  public var description: String {
    "tokens in memory: \(tokens.withLock { $0?.description ?? "none" })"
  }

  /// The stored tokens' mirror (no token shown), for `dump` and debuggers.
  public var customMirror: Mirror {
    Mirror(self, children: ["tokens": tokens.withLock { $0 } as Any], displayStyle: .class)
  }
}
