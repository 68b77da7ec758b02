import Errand
import Foundation

/// The one meaning of "the same JSON" in the test kit, and the differences between two documents
/// as lines a person can read, each naming its path. Key order and spacing do not matter; numbers
/// compare by value (`1.50` equals `1.5`, `1e2` equals `100`), but a negative zero is not zero;
/// a key written more than once must come as many times on both sides, with the same values in
/// the same order (parsers differ on which one they keep); strings compare as Swift strings.
///
/// ``equal(_:_:)`` (what `RequestMatcher.jsonBody(_:)` and a cassette's body matching use) is
/// `true` exactly when ``differences(expected:actual:)`` (what their reports print) is empty.
enum JSONDiff {
  /// The most difference lines reported; the rest are counted in a last line.
  static let maximumLines = DiagnosticText.maximumItems

  /// Whether two documents are the same JSON; `false` when either is not JSON.
  static func equal(_ first: Data, _ second: Data) -> Bool {
    guard let first = try? JSONValue.parse(first), let second = try? JSONValue.parse(second) else {
      return false
    }
    return same(first, second)
  }

  /// Whether two parsed documents are the same JSON: counts differences without writing them.
  private static func same(_ first: JSONValue, _ second: JSONValue) -> Bool {
    var lines = Lines(limit: 0)
    compare(first, second, at: "$", into: &lines, redaction: Redaction())
    return lines.isEmpty
  }

  /// How `actual` differs from `expected`, one line per difference, each naming its path.
  ///
  /// A value the redaction hides (a `password` field, a URL's secret query value) reads
  /// `<redacted>`, on either side: a line says that such a field differs, not what it holds.
  /// - Parameters:
  ///   - expected: The expected document.
  ///   - actual: The document sent.
  ///   - redaction: Which fields to hide; a caller passes the request's, merged with the
  ///     default.
  /// - Returns: The lines; empty when the documents are the same JSON.
  static func differences(expected: Data, actual: Data, redaction: Redaction) -> [String] {
    let wanted: JSONValue
    do {
      wanted = try JSONValue.parse(expected)
    } catch {
      return ["the expected value is not JSON"]
    }
    guard let sent = try? JSONValue.parse(actual) else {
      // Read as a form, so that `password=…` is hidden too.
      let shown = redaction.redact(
        body: actual.prefix(200), contentType: "application/x-www-form-urlencoded")
      let text = String(decoding: shown, as: UTF8.self)
      return ["the body is not JSON: \(text.isEmpty ? "(empty)" : DiagnosticText.escaped(text))"]
    }
    var lines = Lines()
    compare(wanted, sent, at: "$", into: &lines, redaction: redaction)
    return lines.report
  }

  /// Difference lines, kept to `limit`; the others are only counted. Each is one line: a key or
  /// a value's line break or bidirectional override is escaped (`\n`, `\u{202E}`).
  struct Lines {
    var limit = JSONDiff.maximumLines
    var kept: [String] = []
    var dropped = 0

    /// Whether no difference was found.
    var isEmpty: Bool { kept.isEmpty && dropped == 0 }

    mutating func append(_ line: @autoclosure () -> String) {
      if kept.count < limit {
        kept.append(
          DiagnosticText.cut(
            DiagnosticText.escaped(line()), to: 2 * DiagnosticText.maximumValue + 100))
      } else {
        dropped += 1
      }
    }

    var report: [String] {
      dropped == 0 ? kept : kept + ["… and \(dropped) more differences"]
    }
  }

  /// A value as a line quotes it: compact JSON with what the redaction hides inside it (fields,
  /// a URL's secret query values) as `<redacted>`, cut to a few hundred characters.
  private static func quoted(_ value: JSONValue, _ redaction: Redaction) -> String {
    let text: String
    switch value {
    case .object, .array:
      let compact = Data(value.compact.utf8)
      text = String(
        decoding: redaction.redact(body: compact, contentType: "application/json"), as: UTF8.self)
    case .string(let string) where string.contains("://"):
      text = JSONValue.string(redaction.redact(urlText: string)).compact
    default:
      text = value.compact
    }
    return DiagnosticText.cut(text)
  }

  private static func compare(
    _ expected: JSONValue, _ actual: JSONValue, at path: String, into lines: inout Lines,
    redaction: Redaction
  ) {
    switch (expected, actual) {
    case (.object(let wanted), .object(let sent)):
      // By key, so that the lines come in the same order whatever order either side used.
      let wantedByKey = valuesByKey(wanted)
      let sentByKey = valuesByKey(sent)
      // A hidden field's values read `<redacted>`, and differ as a whole.
      let hidden = { (key: String) in redaction.bodyFields.contains(key.lowercased()) }
      let shown = { (key: String, value: JSONValue) in
        hidden(key) ? HTTPHeaders.redactedValue : quoted(value, redaction)
      }
      for key in wantedByKey.keys.sorted() {
        let values = wantedByKey[key] ?? []
        let others = sentByKey[key] ?? []
        if others.isEmpty {
          for value in values {
            lines.append("\(path).\(key): missing (expected \(shown(key, value)))")
          }
        } else if values.count != others.count {
          lines.append(
            "\(path).\(key): expected \(times(values.count)), sent \(times(others.count))")
        } else if hidden(key) {
          for (value, other) in zip(values, others) where !same(value, other) {
            let redacted = HTTPHeaders.redactedValue
            lines.append("\(path).\(key): expected \(redacted), sent \(redacted) (they differ)")
          }
        } else {
          for (value, other) in zip(values, others) {
            compare(value, other, at: "\(path).\(key)", into: &lines, redaction: redaction)
          }
        }
      }
      for key in sentByKey.keys.sorted() where wantedByKey[key] == nil {
        for value in sentByKey[key] ?? [] {
          lines.append("\(path).\(key): not expected (sent \(shown(key, value)))")
        }
      }
    case (.array(let wanted), .array(let sent)):
      for (index, pair) in zip(wanted, sent).enumerated() {
        compare(pair.0, pair.1, at: "\(path)[\(index)]", into: &lines, redaction: redaction)
      }
      if wanted.count != sent.count {
        lines.append("\(path): expected \(wanted.count) elements, sent \(sent.count)")
      }
    case (.number(let wanted), .number(let sent)):
      if !sameNumber(wanted, sent) {
        lines.append("\(path): expected \(wanted), sent \(sent)")
      }
    default:
      if expected != actual {
        lines.append(
          "\(path): expected \(quoted(expected, redaction)), sent \(quoted(actual, redaction))")
      }
    }
  }

  /// How often a key was written: `once`, `2 times`.
  private static func times(_ count: Int) -> String {
    count == 1 ? "once" : "\(count) times"
  }

  /// An object's values by key, each key's values in the order they were written.
  private static func valuesByKey(_ members: [JSONValue.Member]) -> [String: [JSONValue]] {
    var values: [String: [JSONValue]] = [:]
    for member in members {
      values[member.key, default: []].append(member.value)
    }
    return values
  }

  /// Whether two numbers, as written, have the same value: as `Decimal`s (38 significant digits)
  /// when both fit one, and exactly when either does not (`1e400`); a negative zero is not zero.
  static func sameNumber(_ first: String, _ second: String) -> Bool {
    if let one = Decimal(string: first), let other = Decimal(string: second) {
      guard one.isZero && other.isZero else { return one == other }
      return first.hasPrefix("-") == second.hasPrefix("-")
    }
    guard let one = ExactNumber(first), let other = ExactNumber(second) else {
      return first == second
    }
    return one == other
  }

  /// A JSON number's exact value, written one way: its sign, its significant digits without
  /// leading or trailing zeros, and the power of ten of the last one (`-1.50e3` is `-`, `15`, 2).
  struct ExactNumber: Equatable {
    var negative: Bool
    var digits: Substring
    var exponent: Int

    /// `nil` when the exponent does not fit an `Int`.
    init?(_ text: String) {
      negative = text.hasPrefix("-")
      let unsigned = negative ? text.dropFirst() : Substring(text)
      let mark = unsigned.firstIndex { $0 == "e" || $0 == "E" }
      var written = 0
      if let mark {
        guard let value = Int(unsigned[unsigned.index(after: mark)...]) else { return nil }
        written = value
      }
      let mantissa = unsigned[..<(mark ?? unsigned.endIndex)]
      let point = mantissa.firstIndex(of: ".")
      let fraction = point.map { mantissa[mantissa.index(after: $0)...] } ?? ""
      var digits = Substring(mantissa[..<(point ?? mantissa.endIndex)] + fraction)
      digits = digits.drop { $0 == "0" }
      var (exponent, overflow) = written.subtractingReportingOverflow(fraction.count)
      while !overflow, digits.last == "0" {
        digits.removeLast()
        (exponent, overflow) = exponent.addingReportingOverflow(1)
      }
      guard !overflow else { return nil }
      self.digits = digits
      self.exponent = digits.isEmpty ? 0 : exponent
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
  /// (key order ignored, numbers compared by value); empty when they are equal. A field that the
  /// request's ``HTTPRequest/redaction``, or `Redaction.default`, hides reads `<redacted>` on
  /// both sides (`$.password: expected <redacted>, sent <redacted> (they differ)`).
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
    return JSONDiff.differences(
      expected: expected, actual: sent, redaction: reportRedaction)
  }
}
