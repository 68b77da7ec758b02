import Errand
import ErrandTesting
import Foundation

/// A HAR fixture from `Fixtures/har/`.
func harFixture(_ name: String) throws -> HAR {
  try HAR(data: try Fixtures.nearest().data("har/\(name)"))
}

/// A HAR document with these entries (JSON text each), as a tool would write it.
func harDocument(entries: [String], creator: String = #"{"name":"probe","version":"1"}"#) -> Data {
  Data(
    #"{"log":{"version":"1.2","creator":\#(creator),"entries":[\#(entries.joined(separator: ","))]}}"#
      .utf8)
}

/// One entry's JSON, with the parts a probe changes.
func harEntry(
  method: String = "GET", url: String = "https://api.example.com/v1/dogs",
  requestHeaders: String = "[]", status: String = "200", responseHeaders: String = "[]",
  content: String = #"{"size":2,"mimeType":"application/json","text":"[]"}"#,
  extra: String = ""
) -> String {
  #"{"startedDateTime":"2024-01-02T03:04:05.678Z","time":1,"#
    + #""request":{"method":\#(jsonLiteral(method)),"url":\#(jsonLiteral(url)),"#
    + #""httpVersion":"HTTP/1.1","cookies":[],"headers":\#(requestHeaders),"queryString":[],"#
    + #""headersSize":-1,"bodySize":0},"#
    + #""response":{"status":\#(status),"statusText":"OK","httpVersion":"HTTP/1.1","cookies":[],"#
    + #""headers":\#(responseHeaders),"content":\#(content),"redirectURL":"","headersSize":-1,"#
    + #""bodySize":-1},"cache":{},"timings":{"send":0,"wait":1,"receive":0}\#(extra)}"#
}

/// A string as a JSON literal.
func jsonLiteral(_ text: String) -> String {
  let encoder = JSONEncoder()
  encoder.outputFormatting = .withoutEscapingSlashes
  let data = (try? encoder.encode(text)) ?? Data("\"\"".utf8)
  return String(decoding: data, as: UTF8.self)
}

/// The text of bytes, for `contains` checks.
func utf8Text(_ data: Data) -> String {
  String(decoding: data, as: UTF8.self)
}
