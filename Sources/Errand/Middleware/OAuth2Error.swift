import Foundation

/// The token endpoint refused a grant with an OAuth error (RFC 6749 §5.2): `invalid_grant`,
/// `invalid_client`, …
///
/// ``isInvalidGrant`` is the one to act on: the refresh token was revoked or has expired, the
/// ``OAuth2TokenProvider`` has removed it from its ``TokenStorage``, and the user must sign in
/// again. ``OAuth2TokenProvider/requiresSignIn(_:)`` finds it inside the error a call fails with.
///
/// The server's text is cleaned before it is kept: control characters removed, the code cut to 64
/// characters and the description to 200, and any token or secret the request carried replaced
/// by `***`. No printed form shows a token, the client secret or the request's body.
public struct OAuth2Error: Error, Hashable, CustomStringConvertible, LocalizedError {
  /// The refresh token (or authorization code) is invalid, expired or revoked: sign in again.
  public static let invalidGrant = "invalid_grant"
  /// The client could not be authenticated: its ID or secret is wrong.
  public static let invalidClient = "invalid_client"
  /// The request is malformed.
  public static let invalidRequest = "invalid_request"
  /// The scope asked for is invalid or wider than granted.
  public static let invalidScope = "invalid_scope"
  /// The client may not use this grant.
  public static let unauthorizedClient = "unauthorized_client"
  /// The server does not support this grant.
  public static let unsupportedGrantType = "unsupported_grant_type"

  /// The `error` code, as the server sent it (cleaned).
  public var code: String
  /// The server's `error_description`, cleaned, or `nil`.
  public var message: String?
  /// The HTTP status of the answer (`400` or `401`, usually).
  public var status: Int

  /// The error.
  /// - Parameters:
  ///   - code: The `error` code.
  ///   - message: The `error_description`, if any.
  ///   - status: The HTTP status.
  public init(code: String, message: String? = nil, status: Int = 400) {
    self.init(code: code, message: message, status: status, hiding: [])
  }

  /// The error, with every one of `secrets` in the server's text replaced by `***`.
  init(code: String, message: String?, status: Int, hiding secrets: [String]) {
    self.code = OAuth2Text.clean(code, limit: 64, hiding: secrets)
    self.message = message.map { OAuth2Text.clean($0, limit: 200, hiding: secrets) }
    self.status = status
  }

  /// Whether the server answered `invalid_grant`: the refresh token is no good, and the user must
  /// sign in again.
  public var isInvalidGrant: Bool { code == Self.invalidGrant }

  /// `The token endpoint refused the grant: invalid_grant (HTTP 400): Token revoked`.
  public var description: String {
    let text = "The token endpoint refused the grant: \(code) (HTTP \(status))"
    return message.map { "\(text): \($0)" } ?? text
  }

  /// The same as ``description``.
  public var errorDescription: String? { description }
}

/// The token endpoint could not be used, or its answer could not: an endpoint that is not HTTPS,
/// an answer that is not a token response, no refresh token to spend.
///
/// No printed form shows a token, the client secret or the request's body.
public struct OAuth2TokenEndpointError: Error, Hashable, CustomStringConvertible, LocalizedError {
  /// What went wrong, in a word tests and apps can compare.
  public struct Reason: Sendable, Hashable, CustomStringConvertible {
    /// The reason's name.
    public let name: String

    /// The token endpoint's URL is not HTTPS (only a loopback host may use plain HTTP): the
    /// client's secret and refresh token would travel in clear.
    public static let insecureEndpoint = Reason(name: "insecureEndpoint")
    /// The refresh-token grant has no refresh token to spend: the user must sign in.
    public static let noRefreshToken = Reason(name: "noRefreshToken")
    /// The answer's status is neither success nor an OAuth error.
    public static let unexpectedStatus = Reason(name: "unexpectedStatus")
    /// The answer came from another origin than the token endpoint's (after a redirect).
    public static let redirected = Reason(name: "redirected")
    /// The answer is larger than a token response can be.
    public static let responseTooLarge = Reason(name: "responseTooLarge")
    /// The answer is not a JSON object, or a field has the wrong type.
    public static let malformedResponse = Reason(name: "malformedResponse")
    /// The answer has no usable `access_token`.
    public static let missingAccessToken = Reason(name: "missingAccessToken")
    /// The answer's `token_type` is not `Bearer`.
    public static let unsupportedTokenType = Reason(name: "unsupportedTokenType")

    /// The reason's name.
    public var description: String { name }
  }

  /// What went wrong.
  public var reason: Reason
  /// The details, in words, cleaned of tokens and secrets.
  public var detail: String
  /// The HTTP status of the answer, when there was one.
  public var status: Int?

  /// The error.
  /// - Parameters:
  ///   - reason: What went wrong.
  ///   - detail: The details, in words.
  ///   - status: The HTTP status of the answer, if any.
  public init(_ reason: Reason, detail: String, status: Int? = nil) {
    self.init(reason, detail: detail, status: status, hiding: [])
  }

  /// The error, with every one of `secrets` in `detail` replaced by `***`.
  init(_ reason: Reason, detail: String, status: Int?, hiding secrets: [String]) {
    self.reason = reason
    self.detail = OAuth2Text.clean(detail, limit: 300, hiding: secrets)
    self.status = status
  }

  /// `OAuth 2 token endpoint: the token_type is "mac", not Bearer (HTTP 200)`.
  public var description: String {
    let text = "OAuth 2 token endpoint: \(detail)"
    return status.map { "\(text) (HTTP \($0))" } ?? text
  }

  /// The same as ``description``.
  public var errorDescription: String? { description }
}

/// Server text made fit to print.
enum OAuth2Text {
  /// `text` without control characters, with every one of `secrets` replaced by `***`, cut to
  /// `limit` characters (marked with `…`). Secrets go before the cut, so that none is left in
  /// part, and after the controls, so that none can hide behind one.
  static func clean(_ text: String, limit: Int, hiding secrets: [String] = []) -> String {
    var scalars = String.UnicodeScalarView()
    for scalar in text.unicodeScalars where !isControl(scalar) {
      scalars.append(scalar)
    }
    var cleaned = String(scalars)
    for secret in secrets where !secret.isEmpty {
      cleaned = cleaned.replacingOccurrences(of: secret, with: "***")
    }
    guard cleaned.count > limit else { return cleaned }
    return String(cleaned.prefix(limit)) + "…"
  }

  /// C0, DEL, C1, and the bidirectional and line-separator controls that can disguise text.
  private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
    let value = scalar.value
    return value < 0x20 || (0x7F...0x9F).contains(value) || (0x2028...0x202E).contains(value)
      || (0x2066...0x2069).contains(value) || (0x200E...0x200F).contains(value)
  }
}
