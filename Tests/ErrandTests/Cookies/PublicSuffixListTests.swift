import Errand
import ErrandTesting
import Foundation
import Testing

/// The bundled Public Suffix List against the list's own test file, `tests/test_psl.txt` of
/// https://github.com/publicsuffix/list (at e8c9a2b, dedicated to the public domain), kept as
/// `Fixtures/cookies/test_psl.txt`: each `checkPublicSuffix(domain, registrable)` line says the
/// registrable domain of a name, or that it has none.
@Suite(.timeLimit(.minutes(3))) struct PublicSuffixListTests {
  struct Case: Sendable, CustomStringConvertible {
    var domain: String
    var registrable: String?
    var description: String { "\(domain) → \(registrable ?? "none")" }
  }

  /// Every active `checkPublicSuffix` line of the file, but the one with no domain (`null`).
  static func cases() throws -> [Case] {
    let text = String(decoding: try Fixtures.nearest().data("cookies/test_psl.txt"), as: UTF8.self)
    return text.split(separator: "\n").compactMap { line -> Case? in
      guard line.hasPrefix("checkPublicSuffix("), line.hasSuffix(");") else { return nil }
      let arguments = line.dropFirst("checkPublicSuffix(".count).dropLast(2)
        .split(separator: ",", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
      func unquoted(_ text: String) -> String? {
        text == "null" ? nil : String(text.dropFirst().dropLast())
      }
      guard arguments.count == 2, let domain = unquoted(arguments[0]) else { return nil }
      return Case(domain: domain, registrable: unquoted(arguments[1]))
    }
  }

  @Test func theFileHasItsCases() throws {
    #expect(try Self.cases().count == 77)
  }

  @Test(arguments: try cases())
  func registrableDomain(_ check: Case) {
    #expect(PublicSuffixList.bundled.registrableDomain(of: check.domain) == check.registrable)
  }

  /// The snapshot is dated, holds both sections, and reads a list's own text format too.
  @Test func theSnapshotIsDatedAndComplete() {
    let list = PublicSuffixList.bundled
    #expect(PublicSuffixList.snapshotDate == "2026-08-19")
    #expect(list.count > 9_000)
    for suffix in ["com", "co.uk", "github.io", "s3.amazonaws.com", "xn--fiqs8s"] {
      #expect(list.isPublicSuffix(suffix), "\(suffix)")
    }
    for name in ["example.com", "bank.co.uk", "user.github.io"] {
      #expect(!list.isPublicSuffix(name), "\(name)")
    }
    #expect(!"\(list)".contains("github"))
    var dumped = ""
    dump(list, to: &dumped)
    #expect(dumped.count < 200)
  }

  /// Wildcards and exceptions as the list's format writes them.
  @Test func aListReadFromText() {
    let list = PublicSuffixList(
      rules: """
        // comment
        com
        *.ck
        !www.ck

        example.com    trailing words are ignored
        """)
    #expect(list.count == 4)
    #expect(list.publicSuffix(of: "a.b.ck") == "b.ck")
    #expect(list.publicSuffix(of: "www.ck") == "ck")
    #expect(list.registrableDomain(of: "www.ck") == "www.ck")
    #expect(list.isPublicSuffix("example.com"))
    #expect(list.registrableDomain(of: "a.example.com") == "a.example.com")
    #expect(list.publicSuffix(of: "unlisted") == "unlisted")
    #expect(list.publicSuffix(of: "a..b") == nil)
    #expect(list.publicSuffix(of: "127.0.0.1") == nil)
    #expect(list.registrableDomain(of: "Sub.Example.COM.") == "sub.example.com")
  }
}
