import Errand
import Foundation

/// Decodes a `Decodable` value from a parsed ``JSONValue``: the HAR reader's decoder. Unlike
/// `JSONDecoder`, whose errors on Linux say only that the data is not valid JSON, its errors name
/// the path and what was found there ("expected a number, found a string"), and it never quotes
/// a string it read (a header value may be a secret).
struct JSONValueDecoder: Decoder {
  let value: JSONValue
  let codingPath: [any CodingKey]
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  init(_ value: JSONValue, codingPath: [any CodingKey] = []) {
    self.value = value
    self.codingPath = codingPath
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    guard case .object(let members) = value else {
      throw Self.mismatch(Key.self, expected: "an object", found: value, at: codingPath)
    }
    return KeyedDecodingContainer(KeyedContainer(members: members, codingPath: codingPath))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    guard case .array(let items) = value else {
      throw Self.mismatch([JSONValue].self, expected: "an array", found: value, at: codingPath)
    }
    return UnkeyedContainer(items: items, codingPath: codingPath)
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer {
    SingleValue(value: value, codingPath: codingPath)
  }

  // MARK: Scalars

  static func bool(_ value: JSONValue, at path: [any CodingKey]) throws -> Bool {
    guard case .bool(let flag) = value else {
      throw mismatch(Bool.self, expected: "true or false", found: value, at: path)
    }
    return flag
  }

  static func string(_ value: JSONValue, at path: [any CodingKey]) throws -> String {
    guard case .string(let text) = value else {
      throw mismatch(String.self, expected: "a string", found: value, at: path)
    }
    return text
  }

  /// A number as a `Double`; one too large for a `Double` is infinite, left to the caller.
  static func double(_ value: JSONValue, at path: [any CodingKey]) throws -> Double {
    guard case .number(let raw) = value, let number = Double(raw) else {
      throw mismatch(Double.self, expected: "a number", found: value, at: path)
    }
    return number
  }

  /// A whole number: written as an integer, or with a fraction of zero (`200.0`).
  static func integer<Number: FixedWidthInteger>(
    _ value: JSONValue, at path: [any CodingKey]
  ) throws -> Number {
    guard case .number(let raw) = value else {
      throw mismatch(Number.self, expected: "a whole number", found: value, at: path)
    }
    if let number = Number(raw) {
      return number
    }
    guard let number = Double(raw), number.isFinite, number == number.rounded(),
      let whole = Number(exactly: number)
    else {
      throw DecodingError.dataCorrupted(
        DecodingError.Context(
          codingPath: path,
          debugDescription:
            "expected a whole number in range, found \(DiagnosticText.cut(raw, to: 40))"))
    }
    return whole
  }

  /// A `typeMismatch` that says what was expected and what was found, without quoting a string.
  static func mismatch(
    _ type: Any.Type, expected: String, found value: JSONValue, at path: [any CodingKey]
  ) -> DecodingError {
    DecodingError.typeMismatch(
      type,
      DecodingError.Context(
        codingPath: path, debugDescription: "expected \(expected), found \(describe(value))"))
  }

  private static func describe(_ value: JSONValue) -> String {
    switch value {
    case .null: "null"
    case .bool(let flag): "\(flag)"
    case .number(let raw): "the number \(DiagnosticText.cut(raw, to: 40))"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
  }
}

/// A position in an array, as a coding key.
struct IndexKey: CodingKey {
  let intValue: Int?
  var stringValue: String { "Index \(intValue ?? 0)" }

  init(_ index: Int) {
    intValue = index
  }

  init?(intValue: Int) {
    self.intValue = intValue
  }

  init?(stringValue: String) {
    nil
  }
}

private struct SingleValue: SingleValueDecodingContainer {
  let value: JSONValue
  let codingPath: [any CodingKey]

  func decodeNil() -> Bool { value == .null }
  func decode(_ type: Bool.Type) throws -> Bool { try JSONValueDecoder.bool(value, at: codingPath) }
  func decode(_ type: String.Type) throws -> String {
    try JSONValueDecoder.string(value, at: codingPath)
  }
  func decode(_ type: Double.Type) throws -> Double {
    try JSONValueDecoder.double(value, at: codingPath)
  }
  func decode(_ type: Float.Type) throws -> Float {
    Float(try JSONValueDecoder.double(value, at: codingPath))
  }
  func decode(_ type: Int.Type) throws -> Int { try whole() }
  func decode(_ type: Int8.Type) throws -> Int8 { try whole() }
  func decode(_ type: Int16.Type) throws -> Int16 { try whole() }
  func decode(_ type: Int32.Type) throws -> Int32 { try whole() }
  func decode(_ type: Int64.Type) throws -> Int64 { try whole() }
  func decode(_ type: UInt.Type) throws -> UInt { try whole() }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try whole() }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try whole() }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try whole() }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try whole() }
  func decode<T: Decodable>(_ type: T.Type) throws -> T {
    try T(from: JSONValueDecoder(value, codingPath: codingPath))
  }

  private func whole<Number: FixedWidthInteger>() throws -> Number {
    try JSONValueDecoder.integer(value, at: codingPath)
  }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  /// The members by key; the first of repeated keys wins, as ``JSONValue``'s subscript does.
  let members: [String: JSONValue]
  let codingPath: [any CodingKey]

  init(members: [JSONValue.Member], codingPath: [any CodingKey]) {
    self.members = Dictionary(
      members.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
    self.codingPath = codingPath
  }

  var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

  func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

  func decodeNil(forKey key: Key) throws -> Bool { try member(key) == .null }

  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try scalar(type, key) }
  func decode(_ type: String.Type, forKey key: Key) throws -> String { try scalar(type, key) }
  func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try scalar(type, key) }
  func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try scalar(type, key) }
  func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try scalar(type, key) }
  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try scalar(type, key) }
  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try scalar(type, key) }
  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try scalar(type, key) }
  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try scalar(type, key) }
  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try scalar(type, key) }
  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try scalar(type, key) }
  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try scalar(type, key) }
  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try scalar(type, key) }
  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try scalar(type, key) }
  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try scalar(type, key) }

  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) throws -> KeyedDecodingContainer<NestedKey> {
    try decoder(for: key).container(keyedBy: type)
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try decoder(for: key).unkeyedContainer()
  }

  func superDecoder() throws -> any Decoder {
    JSONValueDecoder(
      .object(members.map { JSONValue.Member(key: $0.key, value: $0.value) }),
      codingPath: codingPath)
  }

  func superDecoder(forKey key: Key) throws -> any Decoder { try decoder(for: key) }

  private func member(_ key: Key) throws -> JSONValue {
    guard let value = members[key.stringValue] else {
      throw DecodingError.keyNotFound(
        key, DecodingError.Context(codingPath: codingPath + [key], debugDescription: "is missing"))
    }
    return value
  }

  private func decoder(for key: Key) throws -> JSONValueDecoder {
    JSONValueDecoder(try member(key), codingPath: codingPath + [key])
  }

  /// Any value, through its own `init(from:)`; scalars come back to ``SingleValue``.
  private func scalar<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T {
    try T(from: decoder(for: key))
  }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
  let items: [JSONValue]
  let codingPath: [any CodingKey]
  var currentIndex = 0

  init(items: [JSONValue], codingPath: [any CodingKey]) {
    self.items = items
    self.codingPath = codingPath
  }

  var count: Int? { items.count }
  var isAtEnd: Bool { currentIndex >= items.count }

  mutating func decodeNil() throws -> Bool {
    guard !isAtEnd, items[currentIndex] == .null else { return false }
    currentIndex += 1
    return true
  }

  mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type) }
  mutating func decode(_ type: String.Type) throws -> String { try next(type) }
  mutating func decode(_ type: Double.Type) throws -> Double { try next(type) }
  mutating func decode(_ type: Float.Type) throws -> Float { try next(type) }
  mutating func decode(_ type: Int.Type) throws -> Int { try next(type) }
  mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) }
  mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) }
  mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) }
  mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) }
  mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) }
  mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) }
  mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) }
  mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) }
  mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) }
  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type) }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type
  ) throws -> KeyedDecodingContainer<NestedKey> {
    try nextDecoder().container(keyedBy: type)
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    try nextDecoder().unkeyedContainer()
  }

  mutating func superDecoder() throws -> any Decoder { try nextDecoder() }

  private mutating func nextDecoder() throws -> JSONValueDecoder {
    guard !isAtEnd else {
      throw DecodingError.valueNotFound(
        JSONValue.self,
        DecodingError.Context(
          codingPath: codingPath + [IndexKey(currentIndex)],
          debugDescription: "the array ends here"))
    }
    defer { currentIndex += 1 }
    return JSONValueDecoder(
      items[currentIndex], codingPath: codingPath + [IndexKey(currentIndex)])
  }

  private mutating func next<T: Decodable>(_ type: T.Type) throws -> T {
    try T(from: nextDecoder())
  }
}
