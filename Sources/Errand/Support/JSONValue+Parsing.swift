import Foundation

extension JSONValue {
  /// The deepest nesting of arrays and objects a document may have, as in Foundation's parser.
  package static let maximumDepth = 512

  /// Parse a document.
  package static func parse(_ data: Data) throws(ParseError) -> JSONValue {
    var parser = Parser(bytes: Array(data))
    parser.skipWhitespace()
    let value = try parser.value()
    parser.skipWhitespace()
    guard parser.index == parser.bytes.count else {
      throw parser.error("unexpected text after the document")
    }
    return value
  }
}

/// A recursive-descent JSON parser (RFC 8259) that reports line and column on failure, and refuses
/// documents nested deeper than ``JSONValue/maximumDepth`` so that no input can exhaust the stack.
private struct Parser {
  let bytes: [UInt8]
  var index = 0
  var depth = 0

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

  mutating func enter() throws(JSONValue.ParseError) {
    depth += 1
    guard depth <= JSONValue.maximumDepth else {
      var tooDeep = error("the document is nested deeper than \(JSONValue.maximumDepth) levels")
      tooDeep.isNestedTooDeeply = true
      throw tooDeep
    }
  }

  mutating func object() throws(JSONValue.ParseError) -> JSONValue {
    try enter()
    defer { depth -= 1 }
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
        // The key only up to a colon, space or `?`: text where a key should be may be a
        // value that a broken document let slip (`"Bearer tok…"`), and messages quote no value.
        let shown = key.prefix { $0 != ":" && $0 != " " && $0 != "?" }.prefix(40)
        let cut = shown.count < key.count ? "…" : ""
        throw error(
          "expected ':' after the key \"\(String(reflecting: String(shown)).dropFirst().dropLast())\(cut)\""
        )
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
    try enter()
    defer { depth -= 1 }
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
