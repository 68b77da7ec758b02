import Errand
import Foundation

/// The lenient reading every HAR type shares: tools differ in what they leave out, in how they
/// write numbers and in the extras they add (`_initiator`, `_priority`, …, which are ignored),
/// and a value that is missing or `null` takes the HAR 1.2 default.
extension KeyedDecodingContainer {
  /// The value, or `fallback` when it is missing or `null`.
  func value<T: Decodable>(_ key: Key, or fallback: T) throws -> T {
    try decodeIfPresent(T.self, forKey: key) ?? fallback
  }

  /// A string that some tools write as a number (`connection`, `serverIPAddress`); `nil` when
  /// missing or `null`.
  func text(_ key: Key) throws -> String? {
    guard contains(key), try !decodeNil(forKey: key) else { return nil }
    if let number = try? decode(NumberText.self, forKey: key) {
      return number.text
    }
    return try decode(String.self, forKey: key)
  }

  /// A size in bytes: `-1` (unknown) when missing, `null`, negative or not a finite number of
  /// bytes; a fraction is dropped.
  func size(_ key: Key) throws -> Int {
    guard let number = try decodeIfPresent(Double.self, forKey: key), number.isFinite,
      number >= 0, number < 9e15
    else { return -1 }
    return Int(number)
  }

  /// A time in milliseconds: `-1` (does not apply) when missing, `null`, negative or not finite,
  /// or `0` for the times HAR requires (`send`, `wait`, `receive`, an entry's `time`).
  func milliseconds(_ key: Key, required: Bool = false) throws -> Double {
    guard let number = try decodeIfPresent(Double.self, forKey: key), number.isFinite,
      number >= 0
    else { return required ? 0 : -1 }
    return number
  }

  /// A date in ISO 8601; `fallback` when missing or `null`.
  func date(_ key: Key, or fallback: Date) throws -> Date {
    guard let text = try decodeIfPresent(String.self, forKey: key) else { return fallback }
    guard let date = HARDate.date(text) else {
      throw DecodingError.dataCorruptedError(
        forKey: key, in: self,
        debugDescription: "\"\(DiagnosticText.cut(text, to: 40))\" is not an ISO 8601 date")
    }
    return date
  }
}

extension KeyedEncodingContainer {
  /// A time as HAR writes it: a finite number, or `fallback` for one that is not.
  mutating func encode(milliseconds: Double, fallback: Double, forKey key: Key) throws {
    try encode(milliseconds.isFinite ? milliseconds : fallback, forKey: key)
  }
}

extension HAR {
  /// The date a HAR gets when a tool leaves it out, and what cassettes, which keep no dates,
  /// export: 1970-01-01T00:00:00.000Z.
  static let unknownDate = Date(timeIntervalSince1970: 0)

  /// A name, a value and a note, as a header field and a query parameter are written, read
  /// leniently for both: the name is required, a missing or `null` value reads as empty, and a
  /// value written as a number reads as its digits.
  struct NamedValue: Decodable {
    var name: String
    var value: String
    var comment: String?

    private enum CodingKeys: String, CodingKey {
      case name, value, comment
    }

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      name = try container.decode(String.self, forKey: .name)
      value = try container.text(.value) ?? ""
      comment = try container.decodeIfPresent(String.self, forKey: .comment)
    }
  }
}

/// A number read where HAR has text: its digits as written when ``JSONValueDecoder`` reads it
/// (`12345678901234567890`, `1.10`), else as near as a `Double` gives them.
private struct NumberText: Decodable {
  let text: String

  init(from decoder: any Decoder) throws {
    if let json = decoder as? JSONValueDecoder, case .number(let raw) = json.value {
      text = raw
      return
    }
    let number = try decoder.singleValueContainer().decode(Double.self)
    guard number.isFinite else {
      throw DecodingError.dataCorrupted(
        DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "not finite"))
    }
    text =
      number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
  }
}
