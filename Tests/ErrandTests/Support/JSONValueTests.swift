import Errand
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct JSONValueTests {
  @Test(arguments: [
    #"{"b":1,"a":[true,false,null],"c":{"d":"e"}}"#,
    #"[1,-2,3.5,1e10,-0.25E-3,0]"#,
    #"{"text":"quote \" backslash \\ tab \t line \n unicode é 🐕"}"#,
    #"[]"#, #"{}"#, #"[[],{}]"#,
  ])
  func compactRoundTripsExactly(text: String) throws {
    let value = try JSONValue.parse(Data(text.utf8))
    #expect(value.compact == text)
  }

  @Test func keepsKeyOrderAndNumberText() throws {
    let value = try JSONValue.parse(Data(#"{"z": 1.50, "a": 10000000000000000000001}"#.utf8))
    #expect(value.compact == #"{"z":1.50,"a":10000000000000000000001}"#)
  }

  @Test func prettyPrintsWithShortScalarArraysInline() throws {
    let value = try JSONValue.parse(
      Data(#"{"h":[["Accept","*/*"]],"n":[1,2],"o":{"k":"v"},"e":[]}"#.utf8))
    #expect(
      value.pretty == """
        {
          "h": [
            ["Accept", "*/*"]
          ],
          "n": [1, 2],
          "o": {
            "k": "v"
          },
          "e": []
        }
        """)
  }

  @Test(arguments: [
    ("{\"a\":1,}", 1, 8, "expected a quoted key"),
    ("{\n  \"a\": tru\n}", 2, 8, "expected true"),
    ("[1 2]", 1, 4, "expected ',' or ']' in an array"),
    ("\"open", 1, 6, "unterminated string"),
    ("{\"a\":1} x", 1, 9, "unexpected text after the document"),
    ("01", 1, 2, "unexpected text after the document"),
    ("[\"\\x\"]", 1, 5, "invalid escape '\\x'"),
    ("", 1, 1, "unexpected end of the document"),
  ])
  func reportsWhereTheDocumentIsWrong(text: String, line: Int, column: Int, reason: String) {
    #expect(throws: JSONValue.ParseError(line: line, column: column, reason: reason)) {
      try JSONValue.parse(Data(text.utf8))
    }
  }

  @Test func decodesEscapesAndSurrogatePairs() throws {
    let value = try JSONValue.parse(Data(#"["\u00e9\ud83d\udc15\/"]"#.utf8))
    #expect(value == .array([.string("é🐕/")]))
  }
}
