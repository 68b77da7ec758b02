import Errand
import Foundation

extension HAR {
  /// An entry's response.
  ///
  /// Printed with its headers, cookies and body as they print themselves (secrets hidden, the
  /// body by its size) and its redirect's secrets hidden.
  public struct Response: Sendable, Hashable, Codable, CustomStringConvertible, CustomReflectable {
    /// The status code; `0` when no response came (an aborted or blocked request).
    public var status: Int
    /// The reason phrase, such as `OK`.
    public var statusText: String
    /// The protocol, such as `HTTP/1.1` or `h2`.
    public var httpVersion: String
    /// The cookies set.
    public var cookies: [Cookie]
    /// The header fields, in order.
    public var headers: [Header]
    /// The body.
    public var content: Content
    /// The `Location` of a redirect, or empty.
    public var redirectURL: String
    /// The length of the head in bytes, or `-1` when not known.
    public var headersSize: Int
    /// The length of the body as received in bytes, or `-1` when not known.
    public var bodySize: Int
    /// A note.
    public var comment: String?

    /// Create a response.
    /// - Parameters:
    ///   - status: The status code.
    ///   - statusText: The reason phrase.
    ///   - httpVersion: The protocol.
    ///   - cookies: The cookies set.
    ///   - headers: The header fields.
    ///   - content: The body.
    ///   - redirectURL: The `Location` of a redirect, or empty.
    ///   - headersSize: The length of the head, or `-1`.
    ///   - bodySize: The length of the body as received, or `-1`.
    ///   - comment: A note.
    public init(
      status: Int, statusText: String = "", httpVersion: String = "HTTP/1.1",
      cookies: [Cookie] = [], headers: [Header] = [], content: Content = Content(),
      redirectURL: String = "", headersSize: Int = -1, bodySize: Int = -1, comment: String? = nil
    ) {
      self.status = status
      self.statusText = statusText
      self.httpVersion = httpVersion
      self.cookies = cookies
      self.headers = headers
      self.content = content
      self.redirectURL = redirectURL
      self.headersSize = headersSize
      self.bodySize = bodySize
      self.comment = comment
    }

    private enum CodingKeys: String, CodingKey {
      case status, statusText, httpVersion, cookies, headers, content, redirectURL, headersSize
      case bodySize, comment
    }

    /// Read a response, leniently: lists that are missing read as empty, a missing body as an
    /// empty one, sizes as `-1`.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` when the status is missing or a field has the wrong type.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      status = try container.decode(Int.self, forKey: .status)
      statusText = try container.text(.statusText) ?? ""
      httpVersion = try container.text(.httpVersion) ?? ""
      cookies = try container.value(.cookies, or: [])
      headers = try container.value(.headers, or: [])
      content = try container.value(.content, or: Content())
      redirectURL = try container.text(.redirectURL) ?? ""
      headersSize = try container.size(.headersSize)
      bodySize = try container.size(.bodySize)
      comment = try container.decodeIfPresent(String.self, forKey: .comment)
    }

    /// Write the response; a size below `-1` is written as `-1`.
    /// - Parameter encoder: The encoder.
    /// - Throws: The encoder's errors.
    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(status, forKey: .status)
      try container.encode(statusText, forKey: .statusText)
      try container.encode(httpVersion, forKey: .httpVersion)
      try container.encode(cookies, forKey: .cookies)
      try container.encode(headers, forKey: .headers)
      try container.encode(content, forKey: .content)
      try container.encode(redirectURL, forKey: .redirectURL)
      try container.encode(max(headersSize, -1), forKey: .headersSize)
      try container.encode(max(bodySize, -1), forKey: .bodySize)
      try container.encodeIfPresent(comment, forKey: .comment)
    }

    /// The status and the body's size and type, for example `200 OK (application/json, 42 bytes)`.
    public var description: String {
      "\(status)\(statusText.isEmpty ? "" : " \(statusText)") (\(content))"
    }

    /// The response's fields, its redirect's secrets hidden.
    public var customMirror: Mirror {
      Mirror(
        self,
        children: [
          "status": status, "statusText": statusText, "httpVersion": httpVersion,
          "cookies": cookies, "headers": headers, "content": content,
          "redirectURL": Redaction.default.redact(urlText: redirectURL),
        ], displayStyle: .struct)
    }
  }
}
