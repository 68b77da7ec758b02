/// An HTTP request method such as `GET` or `POST`.
///
/// Methods are an open set: the common ones are static members, and any other token can be
/// written as a string literal (`"PROPFIND"`).
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral {
  /// The method as it appears on the request line, for example `GET`.
  public let rawValue: String

  /// Create a method from its name as it appears on the request line.
  /// - Parameter rawValue: The method name; it is sent exactly as given (methods are case-sensitive).
  public init(rawValue: String) {
    self.rawValue = rawValue
  }

  /// Create a method from a string literal, for example `"PURGE"`.
  /// - Parameter value: The method name.
  public init(stringLiteral value: String) {
    self.init(rawValue: value)
  }

  /// The `GET` method: read a resource.
  public static let get: HTTPMethod = "GET"
  /// The `POST` method: create a resource or perform an action.
  public static let post: HTTPMethod = "POST"
  /// The `PUT` method: replace a resource.
  public static let put: HTTPMethod = "PUT"
  /// The `PATCH` method: change part of a resource.
  public static let patch: HTTPMethod = "PATCH"
  /// The `DELETE` method: remove a resource.
  public static let delete: HTTPMethod = "DELETE"
  /// The `HEAD` method: like `GET`, without a response body.
  public static let head: HTTPMethod = "HEAD"
  /// The `OPTIONS` method: ask what the server allows.
  public static let options: HTTPMethod = "OPTIONS"

  /// Whether the method is idempotent by definition (RFC 9110, section 9.2.2), so that repeating it
  /// cannot change the outcome: `GET`, `HEAD`, `OPTIONS`, `PUT`, `DELETE` and `TRACE`.
  public var isIdempotent: Bool {
    ["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"].contains(rawValue)
  }
}

extension HTTPMethod {
  /// Whether the method can go on the wire: an RFC 9110 token (ASCII letters, digits and the
  /// symbols that section 5.6.2 allows), so that no space, CR or LF can smuggle a second request.
  public var isValidToken: Bool {
    !rawValue.isEmpty && rawValue.everyByte(HTTPHeaders.isTokenByte)
  }
}

extension HTTPMethod: CustomStringConvertible {
  /// The method name, for example `GET`.
  public var description: String { rawValue }
}
