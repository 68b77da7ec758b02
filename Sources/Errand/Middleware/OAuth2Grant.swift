import Foundation

/// How an ``OAuth2TokenProvider`` gets a new access token from the token endpoint (RFC 6749).
public struct OAuth2Grant: Sendable, Hashable, CustomStringConvertible {
  /// The `grant_type` sent: `refresh_token` or `client_credentials`.
  public let grantType: String
  /// The scope asked for, space-separated, or `nil` to leave it to the server.
  public let scope: String?

  private init(grantType: String, scope: String?) {
    self.grantType = grantType
    self.scope = scope
  }

  /// The refresh-token grant (RFC 6749 §6): the refresh token in the ``TokenStorage`` buys a new
  /// access token, and a new refresh token when the server rotates them. For apps whose users
  /// signed in (with the authorization-code flow and ``PKCE``, say).
  /// - Parameter scope: The scope asked for, no wider than the one granted; `nil` (the default)
  ///   keeps the one granted.
  /// - Returns: The grant.
  public static func refreshToken(scope: String? = nil) -> OAuth2Grant {
    OAuth2Grant(grantType: "refresh_token", scope: scope)
  }

  /// The client-credentials grant (RFC 6749 §4.4): the client's own credentials buy an access
  /// token, for a service acting on its own behalf.
  /// - Parameter scope: The scope asked for; `nil` (the default) for the server's default.
  /// - Returns: The grant.
  public static func clientCredentials(scope: String? = nil) -> OAuth2Grant {
    OAuth2Grant(grantType: "client_credentials", scope: scope)
  }

  /// Whether the grant spends a refresh token.
  var usesRefreshToken: Bool { grantType == "refresh_token" }

  /// `refresh_token grant` or `client_credentials grant (scope "read")`.
  public var description: String {
    scope.map { "\(grantType) grant (scope \"\($0)\")" } ?? "\(grantType) grant"
  }
}

/// How the client authenticates to the token endpoint (RFC 6749 §2.3), with its secret.
///
/// No printed form shows the secret: ``description`` and `dump` show the method and client ID.
public struct OAuth2ClientAuthentication: Sendable, CustomStringConvertible, CustomReflectable {
  /// The method, by its registered name: `client_secret_basic`, `client_secret_post` or `none`.
  public let method: String
  /// The client identifier.
  public let clientID: String
  let secret: String?

  private init(method: String, clientID: String, secret: String?) {
    self.method = method
    self.clientID = clientID
    self.secret = secret
  }

  /// HTTP Basic with the client ID and secret, each form-encoded first (`client_secret_basic`,
  /// RFC 6749 §2.3.1): what every server must support.
  /// - Parameters:
  ///   - clientID: The client identifier.
  ///   - secret: The client secret.
  /// - Returns: The authentication.
  public static func basic(clientID: String, secret: String) -> OAuth2ClientAuthentication {
    OAuth2ClientAuthentication(method: "client_secret_basic", clientID: clientID, secret: secret)
  }

  /// The client ID and secret as `client_id` and `client_secret` in the form body
  /// (`client_secret_post`), for servers that do not take Basic.
  /// - Parameters:
  ///   - clientID: The client identifier.
  ///   - secret: The client secret.
  /// - Returns: The authentication.
  public static func post(clientID: String, secret: String) -> OAuth2ClientAuthentication {
    OAuth2ClientAuthentication(method: "client_secret_post", clientID: clientID, secret: secret)
  }

  /// A public client, with no secret (`none`): a mobile or desktop app sends only `client_id`.
  /// - Parameter clientID: The client identifier.
  /// - Returns: The authentication.
  public static func none(clientID: String) -> OAuth2ClientAuthentication {
    OAuth2ClientAuthentication(method: "none", clientID: clientID, secret: nil)
  }

  /// The fields this authentication adds to the form body.
  var formFields: [(String, String)] {
    switch method {
    case "client_secret_post": [("client_id", clientID), ("client_secret", secret ?? "")]
    case "none": [("client_id", clientID)]
    default: []
    }
  }

  /// The `Authorization` value this authentication sends, if any: Basic of the form-encoded ID
  /// and secret (RFC 6749 §2.3.1).
  var authorization: String? {
    guard method == "client_secret_basic" else { return nil }
    let pair = FormEncoding.encode(clientID) + ":" + FormEncoding.encode(secret ?? "")
    return "Basic " + Data(pair.utf8).base64EncodedString()
  }

  /// `client_secret_basic as my-app`, never the secret.
  public var description: String { "\(method) as \(clientID)" }

  /// The method and client ID, for `dump` and debuggers.
  public var customMirror: Mirror {
    Mirror(self, children: ["method": method, "clientID": clientID], displayStyle: .struct)
  }
}

/// `application/x-www-form-urlencoded` (RFC 6749 Appendix B, WHATWG URL): bytes other than
/// `A-Z a-z 0-9 * - . _` percent-encoded, a space as `+`.
enum FormEncoding {
  static func encode(_ text: String) -> String {
    var encoded = ""
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "*"), UInt8(ascii: "-"),
        UInt8(ascii: "."), UInt8(ascii: "_"):
        encoded.unicodeScalars.append(Unicode.Scalar(byte))
      case UInt8(ascii: " "):
        encoded += "+"
      default:
        encoded += String(format: "%%%02X", byte)
      }
    }
    return encoded
  }

  /// `fields` as a form body.
  static func body(_ fields: [(String, String)]) -> Data {
    Data(fields.map { encode($0.0) + "=" + encode($0.1) }.joined(separator: "&").utf8)
  }
}
