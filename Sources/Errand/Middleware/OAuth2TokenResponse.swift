import Foundation

/// A token endpoint's answer, read (RFC 6749 §5.1 and §5.2): tokens granted, or an OAuth error.
enum OAuth2TokenResponse {
  /// The fields of a successful answer that the provider keeps.
  struct Granted {
    var accessToken: String
    /// `expires_in`, in whole seconds, between zero and about 31 years; `nil` when absent.
    var lifetime: Double?
    var refreshToken: String?
    var scope: String?
  }

  case granted(Granted)
  case refused(OAuth2Error)

  /// The longest lifetime kept, in seconds (about 31 years): a larger `expires_in` is clamped.
  static let longestLifetime = 1e9

  /// Read `response` to a request to `endpoint`.
  /// - Parameters:
  ///   - response: The answer.
  ///   - endpoint: The token endpoint the request went to.
  ///   - secrets: The request's tokens and secret, replaced by `***` in any text kept.
  ///   - limit: The largest body read.
  /// - Throws: ``OAuth2TokenEndpointError`` when the answer is not a token response.
  init(_ response: HTTPResponse, from endpoint: URL, hiding secrets: [String], limit: Int) throws {
    let status = response.status
    func failure(_ reason: OAuth2TokenEndpointError.Reason, _ detail: String)
      -> OAuth2TokenEndpointError
    {
      OAuth2TokenEndpointError(reason, detail: detail, status: status, hiding: secrets)
    }
    if let url = response.url, !RedirectPolicy.isSameOrigin(url, endpoint) {
      throw failure(
        .redirected,
        "the answer came from \(url.redactedString), not from the token endpoint's origin")
    }
    guard response.body.count <= limit else {
      throw OAuth2TokenProvider.tooLarge(status: status)
    }
    let json = try? JSONValue.parse(response.body)
    guard (200..<300).contains(status) else {
      // RFC 6749 §5.2: 400 (or 401 for invalid_client) with a JSON `error`.
      if (400..<500).contains(status), case .string(let code)? = json?["error"] {
        var message: String?
        if case .string(let text)? = json?["error_description"] {
          message = text
        }
        self = .refused(OAuth2Error(code: code, message: message, status: status, hiding: secrets))
        return
      }
      throw failure(.unexpectedStatus, "the token endpoint answered HTTP \(status)")
    }
    guard let json, case .object = json else {
      throw failure(.malformedResponse, "the answer is not a JSON object")
    }
    guard case .string(let accessToken)? = json["access_token"], !accessToken.isEmpty else {
      throw failure(.missingAccessToken, "the answer has no access_token")
    }
    // Sent as a header field: only visible ASCII, so that no answer can add a line of its own.
    guard accessToken.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
      throw failure(
        .missingAccessToken, "the access_token holds characters a header field cannot carry")
    }
    guard case .string(let tokenType)? = json["token_type"] else {
      throw failure(.unsupportedTokenType, "the answer has no token_type; Bearer was expected")
    }
    guard tokenType.lowercased() == "bearer" else {
      let shown = OAuth2Text.clean(tokenType, limit: 32, hiding: secrets)
      throw failure(.unsupportedTokenType, "the token_type is \"\(shown)\", not Bearer")
    }
    var refreshToken: String?
    switch json["refresh_token"] {
    case nil, .null?: break
    case .string(let value)? where !value.isEmpty: refreshToken = value
    default: throw failure(.malformedResponse, "the refresh_token is not a string")
    }
    var scope: String?
    if case .string(let value)? = json["scope"] {
      scope = value
    }
    self = .granted(
      Granted(
        accessToken: accessToken, lifetime: try Self.lifetime(json["expires_in"], failure),
        refreshToken: refreshToken, scope: scope))
  }

  /// `expires_in` in seconds: a number, or a string of one (as some servers send it), clamped to
  /// zero and ``longestLifetime``; `nil` when absent.
  private static func lifetime(
    _ value: JSONValue?,
    _ failure: (OAuth2TokenEndpointError.Reason, String) -> OAuth2TokenEndpointError
  ) throws -> Double? {
    let raw: String
    switch value {
    case nil, .null?: return nil
    case .number(let text)?: raw = text
    case .string(let text)?: raw = text.trimmingCharacters(in: .whitespaces)
    default: throw failure(.malformedResponse, "the expires_in is not a number")
    }
    guard let seconds = Double(raw), !seconds.isNaN else {
      throw failure(.malformedResponse, "the expires_in is not a number")
    }
    return min(max(seconds, 0), longestLifetime).rounded(.down)
  }
}
