import Foundation

/// Adds HTTP Basic credentials (RFC 7617, UTF-8) to endpoints that need authentication:
/// `Authorization: Basic <base64 of user:password>`.
///
/// ```swift
/// let auth = try BasicAuthenticationMiddleware(username: "svc-reports", password: secret)
/// let client = APIClient(server: .production, transport: URLSessionTransport(),
///                        configuration: .init(middleware: [auth]))
/// ```
///
/// As with ``BearerAuthenticationMiddleware``, only endpoints with
/// ``Endpoint/requiresAuthentication`` get the header, and never a call the client keeps its
/// secrets from (an absolute URL on another origin). No printed form shows the password.
public struct BasicAuthenticationMiddleware: Middleware, CustomStringConvertible,
  CustomReflectable
{
  /// The user name.
  public let username: String
  private let header: String

  /// Credentials for every endpoint that needs authentication.
  /// - Parameters:
  ///   - username: The user ID: no `:` (RFC 7617 §2), no control character.
  ///   - password: The password: no control character.
  /// - Throws: ``InvalidCredentialError`` for a user ID or password RFC 7617 does not allow,
  ///   never quoting the password.
  public init(username: String, password: String) throws {
    guard !username.contains(":") else {
      throw InvalidCredentialError(reason: "the user name holds a ':', which Basic cannot carry")
    }
    let isControl = { (scalar: Unicode.Scalar) in scalar.value < 0x20 || scalar.value == 0x7F }
    guard !username.unicodeScalars.contains(where: isControl) else {
      throw InvalidCredentialError(reason: "the user name holds a control character")
    }
    guard !password.unicodeScalars.contains(where: isControl) else {
      throw InvalidCredentialError(reason: "the password holds a control character")
    }
    self.username = username
    header = "Basic " + Data("\(username):\(password)".utf8).base64EncodedString()
  }

  /// Send the request, with the credentials when its endpoint needs them.
  public func intercept(
    _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    guard RequestContext.current?.requiresAuthentication == true else {
      return try await next(request)
    }
    var request = request
    request.headers["Authorization"] = header
    return try await next(request)
  }

  /// The user name, never the password: `Basic authentication as svc-reports`.
  public var description: String { "Basic authentication as \(username)" }

  /// The user name alone, for `dump` and debuggers.
  public var customMirror: Mirror { Mirror(self, children: ["username": username]) }
}

/// A credential a middleware cannot send as given: why, never the secret itself.
public struct InvalidCredentialError: Error, Hashable, CustomStringConvertible, LocalizedError {
  /// What is wrong with it.
  public var reason: String

  /// The error.
  /// - Parameter reason: What is wrong with the credential.
  public init(reason: String) {
    self.reason = reason
  }

  /// `Invalid credential: the user name holds a ':', which Basic cannot carry`.
  public var description: String { "Invalid credential: \(reason)" }
  /// The same as ``description``.
  public var errorDescription: String? { description }
}
