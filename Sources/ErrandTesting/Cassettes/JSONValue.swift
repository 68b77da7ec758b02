import Foundation

/// A JSON document that keeps what Foundation's JSON types lose: the order of object keys and the
/// exact text of numbers. Cassettes use it so that files diff well and bodies replay byte for byte.
enum JSONValue: Equatable, Sendable {
  case null
  case bool(Bool)
  /// A number, as written.
  case number(String)
  case string(String)
  case array([JSONValue])
  /// An object, members in order.
  case object([Member])

  /// One member of an object.
  struct Member: Equatable, Sendable {
    var key: String
    var value: JSONValue
  }

  /// The member with this key, if any.
  subscript(key: String) -> JSONValue? {
    guard case .object(let members) = self else { return nil }
    return members.first { $0.key == key }?.value
  }

  /// Where and why a document is not valid JSON.
  struct ParseError: Error, Equatable {
    var line: Int
    var column: Int
    var reason: String
  }

  /// Parse a document.
  static func parse(_ data: Data) throws(ParseError) -> JSONValue {
    var parser = Parser(bytes: Array(data))
    parser.skipWhitespace()
    let value = try parser.value()
    parser.skipWhitespace()
    guard parser.index == parser.bytes.count else {
      throw parser.error("unexpected text after the document")
    }
    return value
  }

  /// The document without whitespace.
  var compact: String {
    var text = ""
    write(to: &text, indent: nil, level: 0)
    return text
  }

  /// The document indented by two spaces; short arrays of scalars stay on one line.
  var pretty: String {
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
  static func quoted(_ string: String) -> String {
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

/// A recursive-descent JSON parser (RFC 8259) that reports line and column on failure.
private struct Parser {
  let bytes: [UInt8]
  var index = 0

  func error(_ reason: String) -> JSONValue.ParseError {
    let before = bytes[..<min(index, bytes.count)]
    let line = before.filter { $0 == UInt8(ascii: "\n") }.count + 1
    let lineStart = before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
    return JSONValue.ParseError(line: line, column: index - lineStart + 1, reason: reason)
  }

  var current: UInt8? { index < bytes.count ? bytes[index] : nil }

  mutating func skipWhitespace() {
    while let byte = current, [0x20, 0x0A, 0x0D, 0x09].contains(byte) {
      index += 1
    }
  }

  mutating func value() throws(JSONValue.ParseError) -> JSONValue {
    guard let byte = current else { throw error("unexpected end of the document") }
    switch byte {
    case UInt8(ascii: "{"): return try object()
    case UInt8(ascii: "["): return try array()
    case UInt8(ascii: "\""): return .string(try string())
    case UInt8(ascii: "t"): return try literal("true", .bool(true))
    case UInt8(ascii: "f"): return try literal("false", .bool(false))
    case UInt8(ascii: "n"): return try literal("null", .null)
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
    default: throw error("unexpected character '\(Character(Unicode.Scalar(byte)))'")
    }
  }

  mutating func literal(_ word: String, _ value: JSONValue) throws(JSONValue.ParseError)
    -> JSONValue
  {
    let expected = Array(word.utf8)
    guard bytes.count - index >= expected.count,
      Array(bytes[index..<index + expected.count]) == expected
    else {
      throw error("expected \(word)")
    }
    index += expected.count
    return value
  }

  mutating func object() throws(JSONValue.ParseError) -> JSONValue {
    index += 1
    var members: [JSONValue.Member] = []
    skipWhitespace()
    if current == UInt8(ascii: "}") {
      index += 1
      return .object(members)
    }
    while true {
      skipWhitespace()
      guard current == UInt8(ascii: "\"") else { throw error("expected a quoted key") }
      let key = try string()
      skipWhitespace()
      guard current == UInt8(ascii: ":") else {
        throw error("expected ':' after the key \"\(key)\"")
      }
      index += 1
      skipWhitespace()
      members.append(JSONValue.Member(key: key, value: try value()))
      skipWhitespace()
      switch current {
      case UInt8(ascii: ","): index += 1
      case UInt8(ascii: "}"):
        index += 1
        return .object(members)
      default: throw error("expected ',' or '}' in an object")
      }
    }
  }

  mutating func array() throws(JSONValue.ParseError) -> JSONValue {
    index += 1
    var items: [JSONValue] = []
    skipWhitespace()
    if current == UInt8(ascii: "]") {
      index += 1
      return .array(items)
    }
    while true {
      skipWhitespace()
      items.append(try value())
      skipWhitespace()
      switch current {
      case UInt8(ascii: ","): index += 1
      case UInt8(ascii: "]"):
        index += 1
        return .array(items)
      default: throw error("expected ',' or ']' in an array")
      }
    }
  }

  mutating func number() throws(JSONValue.ParseError) -> JSONValue {
    let start = index
    func digits(_ parser: inout Parser) -> Int {
      var count = 0
      while let byte = parser.current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
        parser.index += 1
        count += 1
      }
      return count
    }
    if current == UInt8(ascii: "-") { index += 1 }
    if current == UInt8(ascii: "0") {
      index += 1
    } else if digits(&self) == 0 {
      throw error("expected a digit")
    }
    if current == UInt8(ascii: ".") {
      index += 1
      guard digits(&self) > 0 else { throw error("expected a digit after '.'") }
    }
    if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
      index += 1
      if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
      guard digits(&self) > 0 else { throw error("expected a digit in the exponent") }
    }
    return .number(String(decoding: bytes[start..<index], as: UTF8.self))
  }

  mutating func string() throws(JSONValue.ParseError) -> String {
    index += 1
    var scalars = String.UnicodeScalarView()
    var pending: [UInt8] = []
    func flush(_ parser: Parser) throws(JSONValue.ParseError) {
      guard !pending.isEmpty else { return }
      guard let text = String(bytes: pending, encoding: .utf8) else {
        throw parser.error("invalid UTF-8 in a string")
      }
      scalars.append(contentsOf: text.unicodeScalars)
      pending.removeAll()
    }
    while true {
      guard let byte = current else { throw error("unterminated string") }
      switch byte {
      case UInt8(ascii: "\""):
        try flush(self)
        index += 1
        return String(scalars)
      case UInt8(ascii: "\\"):
        try flush(self)
        index += 1
        scalars.append(try escape())
      case 0..<0x20:
        throw error("control character in a string")
      default:
        pending.append(byte)
        index += 1
      }
    }
  }

  mutating func escape() throws(JSONValue.ParseError) -> Unicode.Scalar {
    guard let byte = current else { throw error("unterminated escape") }
    index += 1
    switch byte {
    case UInt8(ascii: "\""): return "\""
    case UInt8(ascii: "\\"): return "\\"
    case UInt8(ascii: "/"): return "/"
    case UInt8(ascii: "b"): return "\u{08}"
    case UInt8(ascii: "f"): return "\u{0C}"
    case UInt8(ascii: "n"): return "\n"
    case UInt8(ascii: "r"): return "\r"
    case UInt8(ascii: "t"): return "\t"
    case UInt8(ascii: "u"):
      let high = try hex4()
      if (0xD800..<0xDC00).contains(high) {
        guard current == UInt8(ascii: "\\"), index + 1 < bytes.count,
          bytes[index + 1] == UInt8(ascii: "u")
        else {
          throw error("unpaired surrogate")
        }
        index += 2
        let low = try hex4()
        guard (0xDC00..<0xE000).contains(low),
          let scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
        else { throw error("invalid surrogate pair") }
        return scalar
      }
      guard let scalar = Unicode.Scalar(high) else { throw error("invalid \\u escape") }
      return scalar
    default:
      throw error("invalid escape '\\\(Character(Unicode.Scalar(byte)))'")
    }
  }

  mutating func hex4() throws(JSONValue.ParseError) -> UInt32 {
    guard bytes.count - index >= 4,
      let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
    else { throw error("expected four hex digits") }
    index += 4
    return value
  }
}
