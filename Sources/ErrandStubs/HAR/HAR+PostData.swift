import Errand
import Foundation

extension HAR {
  /// A request's body.
  ///
  /// Printed with its size and type only: a body may hold a password.
  public struct PostData: Sendable, Hashable, Codable, CustomStringConvertible, CustomReflectable {
    /// The body's media type, as the `Content-Type` header says.
    public var mimeType: String
    /// The fields of a form, for tools that write them instead of ``text``.
    public var params: [Param]?
    /// The body as text, or as base64 when ``encoding`` says so.
    public var text: String?
    /// `base64` when ``text`` is base64 (a binary body; an extension of HAR 1.2 that tools
    /// such as Charles and mitmproxy write), else `nil`.
    public var encoding: String?
    /// A note.
    public var comment: String?

    /// Create a request body.
    /// - Parameters:
    ///   - mimeType: The body's media type.
    ///   - params: The fields of a form, if written as fields.
    ///   - text: The body as text or base64.
    ///   - encoding: `base64` when `text` is base64.
    ///   - comment: A note.
    public init(
      mimeType: String, params: [Param]? = nil, text: String? = nil, encoding: String? = nil,
      comment: String? = nil
    ) {
      self.mimeType = mimeType
      self.params = params
      self.text = text
      self.encoding = encoding
      self.comment = comment
    }

    private enum CodingKeys: String, CodingKey {
      case mimeType, params, text, encoding, comment
    }

    /// Read a request body, leniently: a missing type reads as empty.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` when a field has the wrong type.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      mimeType = try container.text(.mimeType) ?? ""
      params = try container.decodeIfPresent([Param].self, forKey: .params)
      text = try container.decodeIfPresent(String.self, forKey: .text)
      encoding = try container.text(.encoding)
      comment = try container.decodeIfPresent(String.self, forKey: .comment)
    }

    /// The type and size, for example `application/json, 42 bytes`.
    public var description: String {
      "\(mimeType.isEmpty ? "no type" : mimeType), \(text?.utf8.count ?? 0) bytes"
        + (params.map { ", \($0.count) fields" } ?? "")
    }

    /// The type, the encoding and the size; not the body.
    public var customMirror: Mirror {
      Mirror(
        self,
        children: [
          "mimeType": mimeType, "encoding": encoding as Any,
          "text": "\(text?.utf8.count ?? 0) bytes", "params": params as Any,
        ], displayStyle: .struct)
    }
  }

  /// A field of a form body.
  ///
  /// Printed with its value hidden.
  public struct Param: Sendable, Hashable, Codable, CustomStringConvertible, CustomReflectable {
    /// The field's name.
    public var name: String
    /// The field's value, or a file's contents.
    public var value: String?
    /// The name of an uploaded file.
    public var fileName: String?
    /// The media type of an uploaded file.
    public var contentType: String?
    /// A note.
    public var comment: String?

    /// Create a form field.
    /// - Parameters:
    ///   - name: The field's name.
    ///   - value: The field's value.
    ///   - fileName: The name of an uploaded file.
    ///   - contentType: The media type of an uploaded file.
    ///   - comment: A note.
    public init(
      name: String, value: String? = nil, fileName: String? = nil, contentType: String? = nil,
      comment: String? = nil
    ) {
      self.name = name
      self.value = value
      self.fileName = fileName
      self.contentType = contentType
      self.comment = comment
    }

    /// `name=<redacted>`.
    public var description: String { "\(name)=\(HTTPHeaders.redactedValue)" }

    /// The field's name and file, its value hidden.
    public var customMirror: Mirror {
      Mirror(
        self,
        children: [
          "name": name, "value": HTTPHeaders.redactedValue, "fileName": fileName as Any,
          "contentType": contentType as Any,
        ], displayStyle: .struct)
    }
  }
}
