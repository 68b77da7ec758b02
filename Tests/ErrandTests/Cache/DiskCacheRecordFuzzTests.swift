import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Records on disk that decode (or nearly) but hold values that make no sense: every field of a
/// real record replaced by every class of number and by malformed values, one at a time and then
/// several at once. A record that makes no sense is a miss and its file is removed; one that does
/// answers; none crashes the process.
@Suite(.timeLimit(.minutes(5))) struct DiskCacheRecordFuzzTests {
  /// One field of a stored record replaced by raw JSON (or removed, for `nil`), and whether the
  /// record still makes sense.
  struct Damage: Sendable, CustomTestStringConvertible {
    var field: String
    var json: String?
    var makesSense: Bool
    var testDescription: String { "\(field) = \(json ?? "(missing)")" }
  }

  static let fields = [
    "format", "check", "status", "headers", "varying", "body", "storedAt", "initialAge",
    "lifetime",
  ]
  /// Zero, negative, huge, tiny, `Int.max`, fractional and negative zero.
  static let numbers = [
    "0", "-1", "1e300", "-1e300", "1e-300", "9223372036854775807", "1.5", "-0", "1e308",
    "-9223372036854775808",
  ]

  /// Whether `number` makes sense in `field`: a time stored as seconds since 2001 (a record
  /// written in 2000 or 2001 is old, not absurd), or an age or lifetime from 0 to 2^32 s.
  static func makesSense(_ field: String, _ number: String) -> Bool {
    switch field {
    case "storedAt": ["0", "-1", "1e-300", "1.5", "-0"].contains(number)
    case "initialAge", "lifetime": ["0", "1e-300", "1.5", "-0"].contains(number)
    default: false
    }
  }

  static let damages: [Damage] =
    fields.flatMap { field in
      numbers.map { Damage(field: field, json: $0, makesSense: makesSense(field, $0)) }
        + [Damage(field: field, json: nil, makesSense: field == "lifetime")]
    } + [
      Damage(field: "format", json: "1", makesSense: false),
      Damage(field: "format", json: "3", makesSense: false),
      Damage(field: "check", json: "\"0000000000000000\"", makesSense: false),
      Damage(field: "status", json: "99", makesSense: false),
      Damage(field: "status", json: "206", makesSense: false),
      Damage(field: "status", json: "304", makesSense: false),
      Damage(field: "status", json: "600", makesSense: false),
      Damage(field: "status", json: "500", makesSense: true),
      Damage(field: "status", json: "404", makesSense: true),
      Damage(field: "headers", json: "[[\"Cache-Control\"]]", makesSense: false),
      Damage(
        field: "headers", json: "[[\"Cache-Control\", \"max-age=600\", \"x\"]]", makesSense: false),
      Damage(field: "headers", json: "[[]]", makesSense: false),
      Damage(field: "headers", json: "[[\"\", \"x\"]]", makesSense: false),
      Damage(field: "headers", json: "[[\"a name\", \"x\"]]", makesSense: false),
      Damage(field: "headers", json: "[[\"X-A\", \"a\\r\\nInjected: 1\"]]", makesSense: false),
      Damage(field: "headers", json: "[[1, 2]]", makesSense: false),
      Damage(field: "headers", json: "[]", makesSense: true),
      Damage(field: "varying", json: "{\"\": \"x\"}", makesSense: false),
      Damage(field: "varying", json: "{\"Accept\": \"x\"}", makesSense: false),
      Damage(field: "varying", json: "{\"a b\": \"x\"}", makesSense: false),
      Damage(field: "varying", json: "{\"accept\": \"a\\nb\"}", makesSense: false),
      Damage(
        field: "varying",
        json: "{" + (0..<33).map { "\"x-\($0)\": \"\"" }.joined(separator: ", ") + "}",
        makesSense: false),
      Damage(field: "varying", json: "[\"accept\"]", makesSense: false),
      Damage(field: "varying", json: "{}", makesSense: true),
      Damage(field: "body", json: "\"!! not base64 !!\"", makesSense: false),
      Damage(field: "body", json: "\"\"", makesSense: true),
      Damage(field: "lifetime", json: "null", makesSense: true),
      Damage(field: "storedAt", json: "\"yesterday\"", makesSense: false),
    ]

  /// A folder holding one real record for `/v1/dogs`: its file and its fields.
  static func storedRecord(in folder: URL) async throws -> (URL, [String: Any]) {
    _ = try await DiskCacheFiles.get(HTTPCache(memoryBudget: 0, directory: folder))
    let item = try #require(DiskCacheFiles.entryFiles(under: folder).first)
    let file = folder.appendingPathComponent(item.path)
    let fields = try #require(
      try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
    return (file, fields)
  }

  /// `fields` as JSON, with each of `damages` in place of its field.
  static func json(_ fields: [String: Any], _ damages: [Damage]) throws -> Data {
    var fields = fields
    for damage in damages {
      fields[damage.field] = damage.json.map { _ in "<\(damage.field)>" }
    }
    var text = String(
      decoding: try JSONSerialization.data(withJSONObject: fields, options: .sortedKeys),
      as: UTF8.self)
    for damage in damages {
      if let json = damage.json {
        text = text.replacingOccurrences(of: "\"<\(damage.field)>\"", with: json)
      }
    }
    return Data(text.utf8)
  }

  /// Look `/v1/dogs` up in a new cache on `folder` (only from the cache): a miss that removes the
  /// file when the record makes no sense, else an answer with the file kept.
  static func expectLookUp(in folder: URL, makesSense: Bool, _ what: String) async throws {
    let answer = try await DiskCacheFiles.cached(HTTPCache(memoryBudget: 0, directory: folder))
    let files = DiskCacheFiles.entryFiles(under: folder)
    if makesSense {
      #expect(answer?.status != nil, "\(what): a record that makes sense did not answer")
      #expect(files.count == 1, "\(what)")
    } else {
      #expect(answer == nil, "\(what): a record that makes no sense answered")
      #expect(files.isEmpty, "\(what): the file of a record that makes no sense is still there")
    }
  }

  @Test(arguments: damages)
  func aRecordThatMakesNoSenseIsAMissAndRemoved(_ damage: Damage) async throws {
    try await DiskCacheFiles.withFolder { folder in
      let (file, fields) = try await Self.storedRecord(in: folder)
      try Self.json(fields, [damage]).write(to: file)
      try await Self.expectLookUp(
        in: folder, makesSense: damage.makesSense, damage.testDescription)
    }
  }

  /// Seeded random records: each field either as stored or damaged, several at once.
  @Test(.ownThread) func randomRecordsNeverCrash() async throws {
    try await DiskCacheFiles.withFolder { folder in
      let (file, fields) = try await Self.storedRecord(in: folder)
      var random = SeededGenerator(seed: 0x5EED_CAC4E)
      for _ in 0..<TestSize.count(small: 100, full: 3_000) {
        let damages = Self.fields.compactMap { field -> Damage? in
          guard random.next() % 3 == 0 else { return nil }
          let choices = Self.damages.filter { $0.field == field }
          return choices[Int(random.next() % UInt64(choices.count))]
        }
        try FileManager.default.createDirectory(
          at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Self.json(fields, damages).write(to: file)
        try await Self.expectLookUp(
          in: folder, makesSense: damages.allSatisfy(\.makesSense),
          damages.map(\.testDescription).joined(separator: ", "))
        await Task.yield()
      }
    }
  }
}
