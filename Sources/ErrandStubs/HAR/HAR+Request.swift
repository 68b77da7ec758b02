import Errand
import Foundation

extension HAR {
  /// An entry's request.
  ///
  /// Printed with its URL's secret query values and user info hidden (by `Redaction.default`),
  /// and its headers, cookies and body as they print themselves.
  public struct Request: Sendable, Hashable, Codable, CustomStringConvertible, CustomReflectable {
    /// The method, such as `GET`.
    public var method: String
    /// The absolute URL, with the query.
    public var url: String
    /// The protocol, such as `HTTP/1.1` or `h2`.
    public var httpVersion: String
    /// The cookies sent.
    public var cookies: [Cookie]
    /// The header fields, in order.
    public var headers: [Header]
    /// The URL's query parameters, decoded.
    public var queryString: [QueryParameter]
    /// The body, if the request had one.
    public var postData: PostData?
    /// The length of the head in bytes, or `-1` when not known.
    public var headersSize: Int
    /// The length of the body in bytes, or `-1` when not known.
    public var bodySize: Int
    /// A note.
    public var comment: String?

    /// Create a request.
    /// - Parameters:
    ///   - method: The method.
    ///   - url: The absolute URL.
    ///   - httpVersion: The protocol.
    ///   - cookies: The cookies sent.
    ///   - headers: The header fields.
    ///   - queryString: The query parameters.
    ///   - postData: The body, if any.
    ///   - headersSize: The length of the head, or `-1`.
    ///   - bodySize: The length of the body, or `-1`.
    ///   - comment: A note.
    public init(
      method: String, url: String, httpVersion: String = "HTTP/1.1", cookies: [Cookie] = [],
      headers: [Header] = [], queryString: [QueryParameter] = [], postData: PostData? = nil,
      headersSize: Int = -1, bodySize: Int = -1, comment: String? = nil
    ) {
      self.method = method
      self.url = url
      self.httpVersion = httpVersion
      self.cookies = cookies
      self.headers = headers
      self.queryString = queryString
      self.postData = postData
      self.headersSize = headersSize
      self.bodySize = bodySize
      self.comment = comment
    }

    private enum CodingKeys: String, CodingKey {
      case method, url, httpVersion, cookies, headers, queryString, postData, headersSize
      case bodySize, comment
    }

    /// Read a request, leniently: lists that are missing read as empty, sizes as `-1`.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` when the method or the URL is missing, or a field has the wrong
    ///   type.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      method = try container.decode(String.self, forKey: .method)
      url = try container.decode(String.self, forKey: .url)
      httpVersion = try container.text(.httpVersion) ?? ""
      cookies = try container.value(.cookies, or: [])
      headers = try container.value(.headers, or: [])
      queryString = try container.value(.queryString, or: [])
      postData = try container.decodeIfPresent(PostData.self, forKey: .postData)
      headersSize = try container.size(.headersSize)
      bodySize = try container.size(.bodySize)
      comment = try container.decodeIfPresent(String.self, forKey: .comment)
    }

    /// Write the request; a size below `-1` is written as `-1`.
    /// - Parameter encoder: The encoder.
    /// - Throws: The encoder's errors.
    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(method, forKey: .method)
      try container.encode(url, forKey: .url)
      try container.encode(httpVersion, forKey: .httpVersion)
      try container.encode(cookies, forKey: .cookies)
      try container.encode(headers, forKey: .headers)
      try container.encode(queryString, forKey: .queryString)
      try container.encodeIfPresent(postData, forKey: .postData)
      try container.encode(max(headersSize, -1), forKey: .headersSize)
      try container.encode(max(bodySize, -1), forKey: .bodySize)
      try container.encodeIfPresent(comment, forKey: .comment)
    }

    /// The method and the URL, its secrets hidden.
    public var description: String { "\(method) \(HAR.redactedURL(url, with: .default))" }

    /// The request's fields, redacted by `Redaction.default` as ``HAR/redacted(with:)`` does
    /// (a secret it carries is hidden wherever it repeats it).
    public var customMirror: Mirror {
      let shown = redacted(with: .default, scrubbing: HAR.ordered(secretValues(with: .default)))
      return Mirror(
        self,
        children: [
          "method": method, "url": shown.url,
          "httpVersion": httpVersion, "cookies": shown.cookies, "headers": shown.headers,
          "queryString": shown.queryString, "postData": shown.postData as Any,
        ], displayStyle: .struct)
    }
  }
}
