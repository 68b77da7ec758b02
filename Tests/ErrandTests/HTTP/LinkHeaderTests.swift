import Errand
import Foundation
import TestSupport
import Testing

/// `LinkHeader` against RFC 8288: the examples of its section 3.5, the parsing algorithm of its
/// appendix B, and the cases other parsers' published suites check (quoted separators, empty
/// targets, repeated `rel`, tabs between relation types).
@Suite(.timeLimit(.minutes(3))) struct LinkHeaderTests {
  static let base = URL(string: "https://api.example.com/v1/dogs?page=1")!

  /// A header value and the links it holds, as `target rel rel…` lines.
  struct Case: Sendable, CustomTestStringConvertible {
    let name: String
    let value: String
    let links: [String]
    var testDescription: String { name }
  }

  static let cases: [Case] = [
    // RFC 8288, section 3.5.
    Case(
      name: "RFC 8288 3.5: previous chapter with a title",
      value: #"<http://example.com/TheBook/chapter2>; rel="previous"; title="previous chapter""#,
      links: ["http://example.com/TheBook/chapter2 previous"]),
    Case(
      name: "RFC 8288 3.5: a relative target and an extension relation",
      value: #"</>; rel="http://example.net/foo""#,
      links: ["https://api.example.com/ http://example.net/foo"]),
    Case(
      name: "RFC 8288 3.5: an anchor",
      value: ##"</terms>; rel="copyright"; anchor="#foo""##,
      links: ["https://api.example.com/terms copyright"]),
    Case(
      name: "RFC 8288 3.5: two links with title* values",
      value: "</TheBook/chapter2>; rel=\"previous\"; title*=UTF-8'de'letztes%20Kapitel, "
        + "</TheBook/chapter4>; rel=\"next\"; title*=UTF-8'de'n%c3%a4chstes%20Kapitel",
      links: [
        "https://api.example.com/TheBook/chapter2 previous",
        "https://api.example.com/TheBook/chapter4 next",
      ]),
    Case(
      name: "RFC 8288 3.5: two relation types",
      value: #"<http://example.org/>; rel="start http://example.net/relation/other""#,
      links: ["http://example.org/ http://example.net/relation/other start"]),
    // Appendix B and the cases that used to fail.
    Case(
      name: "a quoted ; and , do not split",
      value:
        #"<https://a.example/back>; title="back; rel=next, <x>"; rel=prev, <https://a.example/2>; rel="next""#,
      links: ["https://a.example/back prev", "https://a.example/2 next"]),
    Case(
      name: "an escaped quote inside a quoted value",
      value: #"<https://a.example/1>; title="say \"hi\"; rel=next"; rel=last"#,
      links: ["https://a.example/1 last"]),
    Case(
      name: "an empty target is the base URL",
      value: #"<>; rel="next""#, links: ["https://api.example.com/v1/dogs?page=1 next"]),
    Case(
      name: "only the first rel counts",
      value: #"<https://a.example/1>; rel="prev"; rel="next""#,
      links: ["https://a.example/1 prev"]),
    Case(
      name: "a parameter without its ; is not a parameter",
      value: #"<https://a.example/1> rel="next""#, links: ["https://a.example/1"]),
    Case(
      name: "relation types split on tabs as on spaces",
      value: "<https://a.example/1>; rel=\"prev\tnext\"",
      links: ["https://a.example/1 next prev"]),
    Case(
      name: "unquoted, upper-case and spaced",
      value: "<https://a.example/1> ;REL = NEXT",
      links: ["https://a.example/1 next"]),
    Case(
      name: "a comma inside the target",
      value: #"<https://a.example/p?ids=1,2>; rel="next""#,
      links: ["https://a.example/p?ids=1,2 next"]),
    Case(
      name: "empty list elements",
      value: #", ,<https://a.example/1>; rel=next,, <https://a.example/2>; rel=last"#,
      links: ["https://a.example/1 next", "https://a.example/2 last"]),
    Case(
      name: "text that is not a link ends the field",
      value: #"<https://a.example/1>; rel="next" junk, <https://a.example/2>; rel=last"#,
      links: ["https://a.example/1 next"]),
    Case(name: "garbage", value: "garbage", links: []),
    Case(name: "an unclosed target", value: "<https://a.example/1; rel=next", links: []),
    Case(
      name: "an unclosed quote runs to the end",
      value: #"<https://a.example/1>; rel=next; title="open, <https://a.example/2>; rel=last"#,
      links: ["https://a.example/1 next"]),
  ]

  @Test(arguments: cases)
  func parsesAsRFC8288Says(_ example: Case) {
    let header = LinkHeader(example.value, relativeTo: Self.base)
    let shown = header.links.map { link in
      ([link.url.absoluteString] + link.relations.sorted()).joined(separator: " ")
    }
    #expect(shown == example.links)
  }

  @Test func parametersAreKeptUnquotedWithTheFirstOfARepeatedNameWinning() throws {
    let header = LinkHeader(
      #"<https://a.example/1>; rel=next; title="a \"b\"; c"; TITLE=second; crossorigin"#)
    let link = try #require(header.links.first)
    #expect(link.parameters == ["rel": "next", "title": #"a "b"; c"#, "crossorigin": ""])
  }

  @Test func everyLinkFieldIsRead() {
    var headers = HTTPHeaders()
    headers.add("Link", #"<https://a.example/9>; rel="last""#)
    headers.add("Link", #"<https://a.example/2>; rel="next""#)
    #expect(LinkHeader(headers).url(for: "next")?.absoluteString == "https://a.example/2")
    // A field that does not parse does not hide the next one.
    var broken = HTTPHeaders()
    broken.add("Link", "<https://a.example/9; rel=last")
    broken.add("Link", #"<https://a.example/2>; rel="next""#)
    #expect(LinkHeader(broken).url(for: "next")?.absoluteString == "https://a.example/2")
  }

  @Test func manyLinksParseInOnePass() {
    let count = 8_000
    let value = (1...count).map { "<https://a.example/\($0)>; rel=\"item\"; title=\"t; \($0)\"" }
      .joined(separator: ", ")
    let header = LinkHeader(value + #", <https://a.example/next>; rel=next"#)
    #expect(header.links.count == count + 1)
    #expect(header.url(for: "next")?.absoluteString == "https://a.example/next")
  }
}
