import Errand
import Foundation

/// The differences between two JSON documents, as lines a person can read: key order does not
/// matter, numbers compare by value (`1.50` equals `1.5`), and each difference names its path.
enum JSONDiff {
  /// The most difference lines reported; the rest are counted in a last line.
  static let maximumLines = DiagnosticText.maximumItems

  static func differences(expected: Data, actual: Data) -> [String] {
    let wanted: JSONValue
    do {
      wanted = try JSONValue.parse(expected)
    } catch {
      return ["the expected value is not JSON"]
    }
    guard let sent = try? JSONValue.parse(actual) else {
      let text = String(decoding: actual.prefix(200), as: UTF8.self)
      return ["the body is not JSON: \(text.isEmpty ? "(empty)" : text)"]
    }
    var lines = Lines()
    compare(wanted, sent, at: "$", into: &lines)
    return lines.report
  }

  /// Difference lines, kept to ``maximumLines``; the others are only counted.
  struct Lines {
    var kept: [String] = []
    var dropped = 0

    mutating func append(_ line: @autoclosure () -> String) {
      if kept.count < JSONDiff.maximumLines {
        kept.append(DiagnosticText.cut(line(), to: 2 * DiagnosticText.maximumValue + 100))
      } else {
        dropped += 1
      }
    }

    var report: [String] {
      dropped == 0 ? kept : kept + ["… and \(dropped) more differences"]
    }
  }

  /// A value as a line quotes it: compact JSON, cut to a few hundred characters.
  private static func quoted(_ value: JSONValue) -> String {
    DiagnosticText.cut(value.compact)
  }

  private static func compare(
    _ expected: JSONValue, _ actual: JSONValue, at path: String, into lines: inout Lines
  ) {
    switch (expected, actual) {
    case (.object(let wanted), .object(let sent)):
      // By key, so that the lines come in the same order whatever order either side used.
      var sentByKey: [String: JSONValue] = [:]
      for member in sent where sentByKey[member.key] == nil {
        sentByKey[member.key] = member.value
      }
      var wantedKeys: Set<String> = []
      for member in wanted.sorted(by: { $0.key < $1.key }) {
        wantedKeys.insert(member.key)
        if let other = sentByKey[member.key] {
          compare(member.value, other, at: "\(path).\(member.key)", into: &lines)
        } else {
          lines.append("\(path).\(member.key): missing (expected \(quoted(member.value)))")
        }
      }
      for member in sent.sorted(by: { $0.key < $1.key }) where !wantedKeys.contains(member.key) {
        lines.append("\(path).\(member.key): not expected (sent \(quoted(member.value)))")
      }
    case (.array(let wanted), .array(let sent)):
      for (index, pair) in zip(wanted, sent).enumerated() {
        compare(pair.0, pair.1, at: "\(path)[\(index)]", into: &lines)
      }
      if wanted.count != sent.count {
        lines.append("\(path): expected \(wanted.count) elements, sent \(sent.count)")
      }
    case (.number(let wanted), .number(let sent)):
      if Decimal(string: wanted) != Decimal(string: sent) {
        lines.append("\(path): expected \(wanted), sent \(sent)")
      }
    default:
      if expected != actual {
        lines.append("\(path): expected \(quoted(expected)), sent \(quoted(actual))")
      }
    }
  }
}

extension HTTPRequest {
  /// Decode the request's JSON body, for checking what a test's code sent.
  ///
  /// ```swift
  /// let sent = try await stub.nextRequest()
  /// #expect(try sent.decodeBody(as: NewDog.self) == NewDog(name: "Rex"))
  /// ```
  /// - Parameters:
  ///   - type: The type to decode.
  ///   - decoder: The decoder; a plain `JSONDecoder` by default.
  /// - Returns: The decoded body.
  /// - Throws: `DecodingError`, or a `DecodingError.dataCorrupted` when there is no body.
  public func decodeBody<Value: Decodable>(
    as type: Value.Type, decoder: JSONDecoder = JSONDecoder()
  ) throws -> Value {
    guard let body = try readingBodyFile().body else {
      throw DecodingError.dataCorrupted(
        .init(codingPath: [], debugDescription: "\(self) has no body to decode"))
    }
    return try decoder.decode(Value.self, from: body)
  }

  /// How the request's JSON body differs from `value` encoded as JSON, one line per difference
  /// (key order ignored, numbers compared by value); empty when they are equal.
  ///
  /// ```swift
  /// #expect(try await stub.nextRequest().jsonBodyDifferences(from: NewDog(name: "Rex")) == [])
  /// // $.name: expected "Rex", sent "Max"
  /// ```
  /// - Parameters:
  ///   - value: What the body should be.
  ///   - encoder: The encoder for `value`.
  /// - Returns: The differences.
  public func jsonBodyDifferences(
    from value: some Encodable, encoder: JSONEncoder = JSONEncoder()
  ) -> [String] {
    guard let expected = try? encoder.encode(value) else {
      return ["the expected value does not encode as JSON"]
    }
    let sent = (try? readingBodyFile())?.body ?? Data()
    return JSONDiff.differences(expected: expected, actual: sent)
  }
}
