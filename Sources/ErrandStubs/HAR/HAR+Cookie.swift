import Errand
import Foundation

extension HAR {
  /// A cookie sent with a request or set by a response.
  ///
  /// Printed with its value hidden, always: cookies carry sessions.
  public struct Cookie: Sendable, Hashable, Codable, CustomStringConvertible, CustomReflectable {
    /// The cookie's name.
    public var name: String
    /// The cookie's value.
    public var value: String
    /// The path it applies to.
    public var path: String?
    /// The domain it applies to.
    public var domain: String?
    /// When it expires, as the tool wrote it (ISO 8601).
    public var expires: String?
    /// Whether scripts cannot read it.
    public var httpOnly: Bool?
    /// Whether it is sent over HTTPS only.
    public var secure: Bool?
    /// A note.
    public var comment: String?

    /// Create a cookie.
    /// - Parameters:
    ///   - name: The cookie's name.
    ///   - value: The cookie's value.
    ///   - path: The path it applies to.
    ///   - domain: The domain it applies to.
    ///   - expires: When it expires.
    ///   - httpOnly: Whether scripts cannot read it.
    ///   - secure: Whether it is sent over HTTPS only.
    ///   - comment: A note.
    public init(
      name: String, value: String, path: String? = nil, domain: String? = nil,
      expires: String? = nil, httpOnly: Bool? = nil, secure: Bool? = nil, comment: String? = nil
    ) {
      self.name = name
      self.value = value
      self.path = path
      self.domain = domain
      self.expires = expires
      self.httpOnly = httpOnly
      self.secure = secure
      self.comment = comment
    }

    private enum CodingKeys: String, CodingKey {
      case name, value, path, domain, expires, httpOnly, secure, comment
    }

    /// Read a cookie, leniently; a missing value reads as empty.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` when the name is missing or a field has the wrong type.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      name = try container.decode(String.self, forKey: .name)
      value = try container.text(.value) ?? ""
      path = try container.text(.path)
      domain = try container.text(.domain)
      expires = try container.text(.expires)
      httpOnly = try container.decodeIfPresent(Bool.self, forKey: .httpOnly)
      secure = try container.decodeIfPresent(Bool.self, forKey: .secure)
      comment = try container.decodeIfPresent(String.self, forKey: .comment)
    }

    /// `name=<redacted>`.
    public var description: String { "\(name)=\(HTTPHeaders.redactedValue)" }

    /// The cookie's fields, its value hidden.
    public var customMirror: Mirror {
      Mirror(
        self,
        children: [
          "name": name, "value": HTTPHeaders.redactedValue, "path": path as Any,
          "domain": domain as Any, "expires": expires as Any,
        ], displayStyle: .struct)
    }
  }
}
