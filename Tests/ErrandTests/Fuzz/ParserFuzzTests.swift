import Foundation
import TestSupport
import Testing

@testable import Errand

/// Random `Link` values and event streams: what is written parses back, in any chunking, and
/// mutated input never crashes a parser. Small by default; full size with `ERRAND_FULL_SIZE=1`.
@Suite(.timeLimit(.minutes(5))) struct ParserFuzzTests {
  static let targetCharacters = Array("abcXYZ019-._~/?=&,;%:@!$'()*+")
  static let quotedCharacters = Array("abc ;,=<>\"\\\t'xyz")

  static func string(_ from: [Character], _ random: inout SeededGenerator, maximum: Int) -> String {
    String(
      (0..<Int.random(in: 0...maximum, using: &random)).map { _ in
        from.randomElement(using: &random) ?? "a"
      })
  }

  static func whitespace(_ random: inout SeededGenerator) -> String {
    ["", " ", "\t", "  ", " \t"].randomElement(using: &random) ?? ""
  }

  /// `bytes` with up to seven random edits: a byte replaced, inserted (from `alphabet`) or
  /// removed.
  static func mutated(
    _ bytes: [UInt8], from alphabet: [UInt8], _ random: inout SeededGenerator
  ) -> [UInt8] {
    var bytes = bytes
    for _ in 0...Int.random(in: 0...6, using: &random) where !bytes.isEmpty {
      let index = Int.random(in: 0..<bytes.count, using: &random)
      switch Int.random(in: 0..<3, using: &random) {
      case 0: bytes[index] = alphabet.randomElement(using: &random) ?? 0
      case 1: bytes.insert(alphabet.randomElement(using: &random) ?? 0, at: index)
      default: bytes.remove(at: index)
      }
    }
    return bytes
  }

  /// A quoted string holding `text`, with `"` and `\` escaped.
  static func quoted(_ text: String) -> String {
    "\""
      + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
        of: "\"", with: "\\\"") + "\""
  }

  @Test(arguments: [UInt64(1), 2, 3])
  func randomLinkValuesParseBack(seed: UInt64) throws {
    var random = SeededGenerator(seed: seed)
    let base = try #require(URL(string: "https://api.example.com/v1/"))
    for _ in 0..<TestSize.count(small: 300, full: 5_000) {
      let count = Int.random(in: 1...6, using: &random)
      var written: [(target: String, relations: [String], title: String)] = []
      var members: [String] = []
      for index in 0..<count {
        let target =
          "https://a.example/\(index)/"
          + Self.string(Self.targetCharacters.filter { $0 != ">" }, &random, maximum: 12)
        let relations = (0..<Int.random(in: 1...3, using: &random)).map { _ in
          ["next", "prev", "last", "first", "https://x.example/rel"].randomElement(using: &random)
            ?? "next"
        }
        let title = Self.string(Self.quotedCharacters, &random, maximum: 10)
        let separator = Bool.random(using: &random) ? " " : "\t"
        var member = "<\(target)>"
        var parameters = [
          "rel=" + Self.quoted(relations.joined(separator: separator)),
          "title=" + Self.quoted(title),
        ]
        if Bool.random(using: &random) { parameters.reverse() }
        if Bool.random(using: &random) { parameters.append("rel=ignored") }
        for parameter in parameters {
          member += Self.whitespace(&random) + ";" + Self.whitespace(&random) + parameter
        }
        members.append(member)
        written.append((target, relations, title))
      }
      let value = members.joined(
        separator: Self.whitespace(&random) + "," + Self.whitespace(&random))
      let parsed = LinkHeader(value, relativeTo: base).links
      guard parsed.count == written.count else {
        Issue.record("\(value) gave \(parsed.count) links, not \(written.count)")
        continue
      }
      for (link, expected) in zip(parsed, written) {
        #expect(link.url.absoluteString == URL(string: expected.target)?.absoluteString, "\(value)")
        #expect(link.relations == Set(expected.relations), "\(value)")
        #expect(link.parameters["title"] == expected.title, "\(value)")
      }
    }
  }

  @Test(arguments: [UInt64(4), 5])
  func mutatedLinkValuesNeverCrash(seed: UInt64) {
    var random = SeededGenerator(seed: seed)
    let alphabet = Array("<>;,=\" \t\\rel=next".utf8) + [0, 0xFF, 0xC3]
    let valid = Array(#"<https://a.example/2>; rel="next"; title="a; b", </3>; rel=last"#.utf8)
    for _ in 0..<TestSize.count(small: 2_000, full: 50_000) {
      let bytes = Self.mutated(valid, from: alphabet, &random)
      let text = String(decoding: bytes, as: UTF8.self)
      let links = LinkHeader(text, relativeTo: URL(string: "https://a.example/"))
      #expect(links.links.count <= text.filter { $0 == "<" }.count)
    }
  }

  @Test(arguments: [UInt64(6), 7, 8])
  func randomEventStreamsParseBackInAnyChunking(seed: UInt64) throws {
    var random = SeededGenerator(seed: seed)
    let dataCharacters = Array("ab :é\u{0301}x")
    for _ in 0..<TestSize.count(small: 200, full: 3_000) {
      var events: [ServerSentEvent] = []
      var lastID: String?
      for _ in 0..<Int.random(in: 1...5, using: &random) {
        let lines = (0..<Int.random(in: 1...3, using: &random)).map { _ in
          Self.string(dataCharacters, &random, maximum: 6)
        }
        if Bool.random(using: &random) {
          lastID = "id-\(Int.random(in: 0...99, using: &random))"
        }
        let type = Bool.random(using: &random) ? "message" : "update"
        events.append(ServerSentEvent(event: type, data: lines.joined(separator: "\n"), id: lastID))
      }
      let ending = ["\n", "\r\n", "\r"].randomElement(using: &random) ?? "\n"
      let text = events.map(\.wireFormat).joined().replacingOccurrences(of: "\n", with: ending)
      let bytes = Data(text.utf8)
      var parser = ServerSentEventParser()
      var parsed: [ServerSentEvent] = []
      var start = 0
      while start < bytes.count {
        let end = min(bytes.count, start + Int.random(in: 1...7, using: &random))
        parsed += try parser.push(bytes.subdata(in: start..<end))
        start = end
      }
      parser.finish()
      #expect(parsed == events, "\(text.debugDescription)")
    }
  }
}
