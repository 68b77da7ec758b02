import Foundation

/// Supplies the bearer token that ``BearerAuthenticationMiddleware`` sends, and a new one when the server
/// rejects it.
///
/// ```swift
/// struct SessionTokens: TokenProvider {
///   let store: TokenStore
///   func currentToken() async throws -> String? { await store.accessToken }
///   func refreshToken() async throws -> String { try await store.refresh() }
/// }
/// ```
public protocol TokenProvider: Sendable {
  /// The token to send now, or `nil` when there is none yet (a refresh then gets one).
  /// - Returns: The token, without the `Bearer ` prefix.
  func currentToken() async throws -> String?

  /// Get a new token, for example with a refresh token. Errand calls it at most once at a time.
  /// - Returns: The new token, without the `Bearer ` prefix.
  /// - Throws: Why no token could be had; every request waiting for it fails with this error.
  func refreshToken() async throws -> String
}
