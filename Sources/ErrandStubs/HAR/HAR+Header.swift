import Errand
import Foundation

extension HAR {
  /// A header field of a request or a response.
  ///
  /// Printed (`description`, `dump`, a test's failure message) with its value hidden when
  /// `Redaction.default` names the header as secret (`Authorization`, `Cookie`, API keys).
  public struct Header: Sendable, Hashable, Codable, CustomStringConvertible, CustomReflectable {
    /// The field's name.
    public var name: String
    /// The field's value.
    public var value: String
    /// A note.
    public var comment: String?

    /// Create a header field.
    /// - Parameters:
    ///   - name: The field's name.
    ///   - value: The field's value.
    ///   - comment: A note.
    public init(name: String, value: String, comment: String? = nil) {
      self.name = name
      self.value = value
      self.comment = comment
    }

    private enum CodingKeys: String, CodingKey {
      case name, value, comment
    }

    /// Read a header field; a missing value reads as empty.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` when the name is missing or a field has the wrong type.
    public init(from decoder: any Decoder) throws {
      let pair = try HAR.NamedValue(from: decoder)
      self.init(name: pair.name, value: pair.value, comment: pair.comment)
    }

    /// `Name: value`, the value hidden when it is secret.
    public var description: String { "\(name): \(shownValue)" }

    /// The name and the value, hidden when it is secret.
    public var customMirror: Mirror {
      Mirror(self, children: ["name": name, "value": shownValue], displayStyle: .struct)
    }

    private var shownValue: String {
      Redaction.default.redact(HTTPHeaders([HTTPHeaders.Field(name: name, value: value)]))
        .fields.first?.value ?? HTTPHeaders.redactedValue
    }
  }
}
