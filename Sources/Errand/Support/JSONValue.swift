import Foundation

/// A JSON document that keeps what Foundation's JSON types lose: the order of object keys and the
/// exact text of numbers. Redaction uses it so that a redacted body keeps its order, and cassettes
/// so that files diff well and bodies replay byte for byte.
package enum JSONValue: Equatable, Sendable {
  case null
  case bool(Bool)
  /// A number, as written.
  case number(String)
  case string(String)
  case array([JSONValue])
  /// An object, members in order.
  case object([Member])

  /// One member of an object.
  package struct Member: Equatable, Sendable {
    package var key: String
    package var value: JSONValue

    package init(key: String, value: JSONValue) {
      self.key = key
      self.value = value
    }
  }

  /// The member with this key, if any.
  package subscript(key: String) -> JSONValue? {
    guard case .object(let members) = self else { return nil }
    return members.first { $0.key == key }?.value
  }

  /// Whether the value is an array or an object.
  package var isContainer: Bool {
    switch self {
    case .array, .object: true
    default: false
    }
  }

  /// Where and why a document is not valid JSON.
  package struct ParseError: Error, Equatable {
    package var line: Int
    package var column: Int
    package var reason: String
    /// Whether the document was refused for nesting deeper than ``JSONValue/maximumDepth``.
    package var isNestedTooDeeply = false

    package init(line: Int, column: Int, reason: String, isNestedTooDeeply: Bool = false) {
      self.line = line
      self.column = column
      self.reason = reason
      self.isNestedTooDeeply = isNestedTooDeeply
    }
  }

  /// The document without whitespace.
  package var compact: String {
    var text = ""
    write(to: &text, indent: nil, level: 0)
    return text
  }

  /// The document indented by two spaces; short arrays of scalars stay on one line.
  package var pretty: String {
    var text = ""
    write(to: &text, indent: "  ", level: 0)
    return text
  }

  private func write(to text: inout String, indent: String?, level: Int) {
    switch self {
    case .null: text += "null"
    case .bool(let value): text += value ? "true" : "false"
    case .number(let raw): text += raw
    case .string(let value): text += Self.quoted(value)
    case .array(let items):
      guard let indent, !items.isEmpty else {
        text += "[" + items.map(\.compact).joined(separator: ",") + "]"
        return
      }
      let inline = "[" + items.map(\.compact).joined(separator: ", ") + "]"
      if items.allSatisfy(\.isScalar) && inline.count <= 100 {
        text += inline
        return
      }
      text += "[\n"
      for (offset, item) in items.enumerated() {
        text += String(repeating: indent, count: level + 1)
        item.write(to: &text, indent: indent, level: level + 1)
        text += offset < items.count - 1 ? ",\n" : "\n"
      }
      text += String(repeating: indent, count: level) + "]"
    case .object(let members):
      guard let indent, !members.isEmpty else {
        text +=
          "{" + members.map { Self.quoted($0.key) + ":" + $0.value.compact }.joined(separator: ",")
          + "}"
        return
      }
      text += "{\n"
      for (offset, member) in members.enumerated() {
        text += String(repeating: indent, count: level + 1) + Self.quoted(member.key) + ": "
        member.value.write(to: &text, indent: indent, level: level + 1)
        text += offset < members.count - 1 ? ",\n" : "\n"
      }
      text += String(repeating: indent, count: level) + "}"
    }
  }

  private var isScalar: Bool {
    switch self {
    case .array, .object: false
    default: true
    }
  }

  /// A string as a JSON literal: quotes, backslashes and control characters escaped.
  package static func quoted(_ string: String) -> String {
    var text = "\""
    for scalar in string.unicodeScalars {
      switch scalar {
      case "\"": text += "\\\""
      case "\\": text += "\\\\"
      case "\n": text += "\\n"
      case "\r": text += "\\r"
      case "\t": text += "\\t"
      case "\u{08}": text += "\\b"
      case "\u{0C}": text += "\\f"
      case _ where scalar.value < 0x20: text += String(format: "\\u%04x", scalar.value)
      default: text.unicodeScalars.append(scalar)
      }
    }
    return text + "\""
  }
}
