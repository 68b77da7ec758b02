import Foundation
import TestSupport
import Testing

@testable import Errand

/// Random `Cache-Control` and `tracestate` values: what is written parses back, quoted strings
/// included, mutated input never crashes, and nothing that cannot be sent comes out. Small by
/// default; full size with `ERRAND_FULL_SIZE=1`.
@Suite(.timeLimit(.minutes(5))) struct HeaderValueFuzzTests {
  static let names = ["max-age", "no-cache", "private", "x-ext", "stale-if-error", "MAX-STALE"]
  static let valueCharacters = Array("abc019 ,;=\"\\\t-")

  /// A random directive value: a token, or a quoted string with `"` and `\` escaped.
  static func value(_ random: inout SeededGenerator) -> (written: String, meant: String) {
    let text = ParserFuzzTests.string(valueCharacters, &random, maximum: 10)
    if Bool.random(using: &random) || text.contains(where: { " ,;=\"\\\t".contains($0) }) {
      return (ParserFuzzTests.quoted(text), text)
    }
    return (text, text)
  }

  @Test(arguments: [UInt64(11), 12, 13])
  func randomCacheControlValuesParseBack(seed: UInt64) {
    var random = SeededGenerator(seed: seed)
    for _ in 0..<TestSize.count(small: 2_000, full: 50_000) {
      var written: [String] = []
      var meant: [(String, String?)] = []
      for _ in 0..<Int.random(in: 1...5, using: &random) {
        let name = Self.names.randomElement(using: &random) ?? "private"
        let space = ParserFuzzTests.whitespace(&random)
        if Bool.random(using: &random) {
          let value = Self.value(&random)
          written.append(space + name + "=" + value.written + space)
          meant.append((name.lowercased(), value.meant))
        } else {
          written.append(space + name + space)
          meant.append((name.lowercased(), nil))
        }
      }
      let field = written.joined(separator: ",")
      let parsed = CacheControl.directives(field)
      #expect(parsed.map(\.name) == meant.map(\.0), "\(field)")
      #expect(parsed.map(\.value) == meant.map(\.1), "\(field)")
    }
  }

  @Test(arguments: [UInt64(14), 15])
  func mutatedCacheControlValuesNeverCrash(seed: UInt64) {
    var random = SeededGenerator(seed: seed)
    let alphabet = Array("=,\"\\ \tmax-age0123456789".utf8) + [0, 0xFF, 0xC3]
    let valid = Array(#"max-age=600, x-ext="a, \"max-age=0\"", stale-if-error=60"#.utf8)
    for _ in 0..<TestSize.count(small: 2_000, full: 50_000) {
      let bytes = ParserFuzzTests.mutated(valid, from: alphabet, &random)
      let control = CacheControl(["Cache-Control": String(decoding: bytes, as: UTF8.self)])
      #expect((control.maxAge ?? 0) >= 0)
      #expect((control.staleIfError ?? 0) >= 0)
    }
  }

  @Test(arguments: [UInt64(16), 17])
  func randomTracestatesKeepOnlyWhatCanBeSent(seed: UInt64) throws {
    var random = SeededGenerator(seed: seed)
    let alphabet = Array("ab=,; \t\r\n\u{0}\u{7F}\u{A0}é1")
    for _ in 0..<TestSize.count(small: 2_000, full: 50_000) {
      let state = ParserFuzzTests.string(alphabet, &random, maximum: 200)
      let context = try #require(
        TraceContext(
          traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
          tracestate: state))
      guard let kept = context.state else { continue }
      #expect(HTTPHeaders.canSend(kept), "\(kept.debugDescription)")
      #expect(kept.split(separator: ",").count <= TraceContext.maximumStateMembers)
      #expect(kept.split(separator: ",").allSatisfy { $0.contains("=") })
    }
  }
}
