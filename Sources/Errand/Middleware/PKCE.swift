import Foundation

/// A Proof Key for Code Exchange (RFC 7636) for an app that runs OAuth's authorization-code flow
/// in its own UI: send ``challenge`` (with ``method``) in the authorization request, then
/// ``verifier`` with the code when exchanging it for tokens.
///
/// ```swift
/// let pkce = PKCE()
/// authorize.queryItems += [
///   URLQueryItem(name: "code_challenge", value: pkce.challenge),
///   URLQueryItem(name: "code_challenge_method", value: PKCE.method),
/// ]
/// // … later, in the token request: "code_verifier": pkce.verifier
/// ```
///
/// No printed form shows the verifier (it is the secret half); the challenge may be shown.
public struct PKCE: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
  /// The code challenge method: `S256`, the SHA-256 of the verifier (RFC 7636 §4.2).
  public static let method = "S256"

  /// The verifier: 43 to 128 characters of `A-Z a-z 0-9 - . _ ~`.
  public let verifier: String

  /// A verifier of 32 random bytes from the system's secure generator, base64url-encoded: 43
  /// characters (the entropy RFC 7636 §7.1 recommends).
  public init() {
    var generator = SystemRandomNumberGenerator()
    let bytes = Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    verifier = Self.base64URL(bytes)
  }

  /// A verifier you made: for tests, and for a flow that resumes with one it stored.
  /// - Parameter verifier: The verifier.
  /// - Throws: ``InvalidCredentialError`` when it is not 43 to 128 characters of
  ///   `A-Z a-z 0-9 - . _ ~` (RFC 7636 §4.1), never quoting it.
  public init(verifier: String) throws {
    let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
    guard (43...128).contains(verifier.count), verifier.allSatisfy(allowed.contains) else {
      throw InvalidCredentialError(
        reason: "a PKCE verifier is 43 to 128 characters of A-Z, a-z, 0-9, '-', '.', '_', '~'")
    }
    self.verifier = verifier
  }

  /// The code challenge: base64url of the SHA-256 of the verifier, without padding.
  public var challenge: String {
    Self.base64URL(SHA256Digest.hash(Data(verifier.utf8)))
  }

  /// The challenge, never the verifier.
  public var description: String { "PKCE (S256, challenge \(challenge))" }

  /// The challenge alone, for `dump` and debuggers.
  public var customMirror: Mirror { Mirror(self, children: ["challenge": challenge]) }

  /// `data` in base64url without padding (RFC 4648 §5).
  static func base64URL(_ data: Data) -> String {
    data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
      .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
  }
}
