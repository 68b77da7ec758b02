import Errand
import Foundation

extension HAR {
  /// A query parameter of a request's URL, decoded.
  ///
  /// Printed with its value hidden when `Redaction.default` names the parameter as secret
  /// (`token`, `api_key`, `signature`, …).
  public struct QueryParameter: Sendable, Hashable, Codable, CustomStringConvertible,
    CustomReflectable
  {
    /// The parameter's name.
    public var name: String
    /// The parameter's value.
    public var value: String
    /// A note.
    public var comment: String?

    /// Create a query parameter.
    /// - Parameters:
    ///   - name: The parameter's name.
    ///   - value: The parameter's value.
    ///   - comment: A note.
    public init(name: String, value: String, comment: String? = nil) {
      self.name = name
      self.value = value
      self.comment = comment
    }

    private enum CodingKeys: String, CodingKey {
      case name, value, comment
    }

    /// Read a query parameter; a missing value reads as empty.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` when the name is missing or a field has the wrong type.
    public init(from decoder: any Decoder) throws {
      let pair = try HAR.NamedValue(from: decoder)
      self.init(name: pair.name, value: pair.value, comment: pair.comment)
    }

    /// `name=value`, the value hidden when it is secret.
    public var description: String { "\(name)=\(shownValue)" }

    /// The name and the value, hidden when it is secret.
    public var customMirror: Mirror {
      Mirror(self, children: ["name": name, "value": shownValue], displayStyle: .struct)
    }

    private var shownValue: String {
      Redaction.default.queryParameters.contains(name.lowercased())
        ? HTTPHeaders.redactedValue : value
    }
  }
}
