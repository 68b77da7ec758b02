import Errand
import Foundation

extension HAR {
  /// A response's body.
  ///
  /// Printed with its size and type only.
  public struct Content: Sendable, Hashable, Codable, CustomStringConvertible, CustomReflectable {
    /// The body's length in bytes, decoded (after any `Content-Encoding` is undone).
    public var size: Int
    /// How many bytes compression saved, if known.
    public var compression: Int?
    /// The body's media type, as the `Content-Type` header says.
    public var mimeType: String
    /// The body as text, or as base64 when ``encoding`` is `base64`; `nil` when the tool did not
    /// keep it (replayed as an empty body).
    public var text: String?
    /// `base64` when ``text`` is base64, else `nil`.
    public var encoding: String?
    /// A note.
    public var comment: String?

    /// Create a response body.
    /// - Parameters:
    ///   - size: The body's length in bytes.
    ///   - compression: How many bytes compression saved.
    ///   - mimeType: The body's media type.
    ///   - text: The body as text or base64.
    ///   - encoding: `base64` when `text` is base64.
    ///   - comment: A note.
    public init(
      size: Int = 0, compression: Int? = nil, mimeType: String = "", text: String? = nil,
      encoding: String? = nil, comment: String? = nil
    ) {
      self.size = size
      self.compression = compression
      self.mimeType = mimeType
      self.text = text
      self.encoding = encoding
      self.comment = comment
    }

    private enum CodingKeys: String, CodingKey {
      case size, compression, mimeType, text, encoding, comment
    }

    /// Read a response body, leniently: a missing or negative size reads as `0`, a missing type
    /// as empty.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` when a field has the wrong type.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      size = max(try container.size(.size), 0)
      let saved = try container.size(.compression)
      compression = saved >= 0 && container.contains(.compression) ? saved : nil
      mimeType = try container.text(.mimeType) ?? ""
      text = try container.decodeIfPresent(String.self, forKey: .text)
      encoding = try container.text(.encoding)
      comment = try container.decodeIfPresent(String.self, forKey: .comment)
    }

    /// Write the response body; a negative size is written as `0`.
    /// - Parameter encoder: The encoder.
    /// - Throws: The encoder's errors.
    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(max(size, 0), forKey: .size)
      try container.encodeIfPresent(compression.map { max($0, 0) }, forKey: .compression)
      try container.encode(mimeType, forKey: .mimeType)
      try container.encodeIfPresent(text, forKey: .text)
      try container.encodeIfPresent(encoding, forKey: .encoding)
      try container.encodeIfPresent(comment, forKey: .comment)
    }

    /// The type and size, for example `application/json, 42 bytes`.
    public var description: String {
      "\(mimeType.isEmpty ? "no type" : mimeType), \(size) bytes"
    }

    /// The size, the type and the encoding; not the body.
    public var customMirror: Mirror {
      Mirror(
        self,
        children: [
          "size": size, "mimeType": mimeType, "encoding": encoding as Any,
          "text": "\(text?.utf8.count ?? 0) bytes",
        ], displayStyle: .struct)
    }
  }
}
