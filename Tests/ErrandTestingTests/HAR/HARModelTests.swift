import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// What each hand-written fixture holds, as its tool wrote it.
struct HARFixtureFacts: Sendable, CustomTestStringConvertible {
  var file: String
  var creator: String
  var entries: Int
  var skipped: [Int]
  /// The first entry's date, as Errand writes it (UTC, milliseconds).
  var firstDate: String
  /// Secrets the fixture carries, which nothing Errand writes or prints may show.
  var secrets: [String]

  var testDescription: String { file }

  static let all = [
    HARFixtureFacts(
      file: "chrome-devtools.har", creator: "WebInspector", entries: 4, skipped: [3],
      firstDate: "2024-05-14T09:12:03.530Z",
      secrets: ["chrome-fixture-token-1234", "chrome-fixture-session-5678"]),
    HARFixtureFacts(
      file: "charles-proxy.har", creator: "Charles Proxy", entries: 3, skipped: [],
      firstDate: "2024-05-14T09:20:00.125Z",
      secrets: ["charles-fixture-pw", "charles-fixture-at"]),
  ]
}

@Suite(.timeLimit(.minutes(3))) struct HARModelTests {
  @Test(arguments: HARFixtureFacts.all)
  func fixturesReadAsTheirToolWroteThem(_ facts: HARFixtureFacts) throws {
    let har = try harFixture(facts.file)
    #expect(har.log.version == "1.2")
    #expect(har.log.creator.name == facts.creator)
    #expect(har.log.entries.count == facts.entries)
    #expect(har.skippedEntries.map(\.index) == facts.skipped)
    let written = try #require(String(data: try har.encoded(), encoding: .utf8))
    #expect(written.contains(#""startedDateTime": "\#(facts.firstDate)""#))
  }

  @Test func chromeExtrasAreToleratedAndItsFieldsKept() throws {
    let har = try harFixture("chrome-devtools.har")
    let first = har.log.entries[0]
    #expect(har.log.pages?.map(\.id) == ["page_1"])
    #expect(
      har.log.pages?.first?.pageTimings == HAR.PageTimings(onContentLoad: 412.337, onLoad: 980.121))
    #expect(first.pageref == "page_1")
    #expect(first.cache == HAR.Cache())
    #expect(first.connection == "443")
    #expect(first.serverIPAddress == "203.0.113.10")
    #expect(first.time == 83.412)
    #expect(
      first.timings
        == HAR.Timings(
          blocked: 1.203, dns: -1, connect: -1, send: 0.109, wait: 80.49, receive: 1.61, ssl: -1))
    #expect(first.request.headers.prefix(2).map(\.name) == [":authority", ":method"])
    #expect(first.request.cookies.map(\.name) == ["session"])
    #expect(first.response.content.compression == 7)
    #expect(har.log.entries[2].response.bodySize == -1)
  }

  @Test func charlesDatesOffsetsNullsAndBase64AreRead() throws {
    let har = try harFixture("charles-proxy.har")
    #expect(har.log.comment == "Recorded with Charles; exported as HTTP Archive (.har)")
    #expect(har.log.entries[0].response.redirectURL == "")  // written as null
    #expect(
      har.log.entries[0].request.postData?.params?.map(\.name) == [
        "grant_type", "username", "password",
      ])
    #expect(har.log.entries[1].response.content.encoding == "base64")
    #expect(har.log.entries[1].comment == "avatar")
    #expect(har.log.entries[0].timings.blocked == -1)  // left out by Charles
    #expect(har.log.entries[0].startedDateTime == Date(timeIntervalSince1970: 1_715_678_400.125))
  }

  @Test(arguments: HARFixtureFacts.all)
  func writingReadingAndWritingAgainGivesTheSameBytesWithoutSecrets(
    _ facts: HARFixtureFacts
  ) throws {
    let first = try harFixture(facts.file).encoded()
    let second = try HAR(data: first).encoded()
    #expect(first == second)
    for secret in facts.secrets {
      #expect(!utf8Text(first).contains(secret), "\(secret) was written")
    }
  }

  @Test(arguments: HARFixtureFacts.all)
  func printedFormsHideTheSecrets(_ facts: HARFixtureFacts) throws {
    let har = try harFixture(facts.file)
    for form in printedForms(of: har) + har.log.entries.flatMap({ printedForms(of: $0) }) {
      for secret in facts.secrets {
        #expect(!form.contains(secret), "\(secret) printed in:\n\(form)")
      }
    }
  }

  @Test(
    arguments: [
      ("2024-05-14T09:12:03.530Z", "2024-05-14T09:12:03.530Z"),
      ("2024-05-14T11:20:00.125+02:00", "2024-05-14T09:20:00.125Z"),
      ("2024-05-14T11:20:00.125+0200", "2024-05-14T09:20:00.125Z"),
      ("2024-05-14T02:00:00-07:00", "2024-05-14T09:00:00.000Z"),
      ("2024-05-14T09:12:03.1234567Z", "2024-05-14T09:12:03.123Z"),
      ("2024-05-14 09:12:03Z", "2024-05-14T09:12:03.000Z"),
      ("2024-05-14T09:12:03", "2024-05-14T09:12:03.000Z"),
      ("1969-12-31T23:59:59.999Z", "1969-12-31T23:59:59.999Z"),
      ("2000-02-29T00:00:00.000Z", "2000-02-29T00:00:00.000Z"),
    ])
  func datesAreReadInEveryFormAndWrittenInUTCWithMilliseconds(_ read: String, _ written: String)
    throws
  {
    let har = try HAR(
      data: harDocument(
        entries: [harEntry()].map {
          $0.replacingOccurrences(of: "2024-01-02T03:04:05.678Z", with: read)
        }))
    #expect(utf8Text(try har.encoded()).contains(#""startedDateTime": "\#(written)""#))
  }

  @Test func aHARBuiltInCodeIsWrittenAsValidHAR() throws {
    let entry = HAR.Entry(
      startedDateTime: Date(timeIntervalSince1970: 1_700_000_000.5), time: .nan,
      request: HAR.Request(method: "GET", url: "https://api.example.com/v1/dogs"),
      response: HAR.Response(status: 200, content: HAR.Content(size: -5)),
      timings: HAR.Timings(blocked: .infinity, wait: -3))
    let written = utf8Text(try HAR(entries: [entry]).encoded())
    #expect(written.contains(#""startedDateTime": "2023-11-14T22:13:20.500Z""#))
    #expect(written.contains(#""time": 0"#))
    #expect(written.contains(#""blocked": -1"#))
    #expect(written.contains(#""wait": 0"#))
    #expect(written.contains(#""size": 0"#))
    #expect(written.contains(#""name": "Errand""#))
  }

  @Test func jsonDecoderReadsTheModelToo() throws {
    let data = try Fixtures.nearest().data("har/charles-proxy.har")
    let decoded = try JSONDecoder().decode(HAR.self, from: data)
    #expect(decoded == (try harFixture("charles-proxy.har")))
  }

  @Test(
    arguments: [
      (#""status":200"#, #""status":200.0"#, "response.status 200"),
      (
        #""headersSize":-1,"bodySize":0"#, #""headersSize":12.7,"bodySize":-9"#,
        "request sizes 12 -1"
      ),
      (#""time":1,"#, #""time":null,"#, "time 0.0"),
      (#""cache":{}"#, #""cache":null"#, "cache empty"),
      (
        #""timings":{"send":0,"wait":1,"receive":0}"#, #""timings":{"wait":2}"#,
        "timings 0.0 2.0 0.0"
      ),
      (#""cookies":[],"headers":[]"#, #""cookies":null,"headers":null"#, "request lists empty"),
      (
        #""statusText":"OK""#, #""statusText":null,"_charlesStatus":"COMPLETE""#, "statusText empty"
      ),
    ])
  func toolsDifferencesAreReadLeniently(
    _ original: String, _ replacement: String, _ expected: String
  )
    throws
  {
    let entry = harEntry(extra: #","connection":443"#)
    #expect(entry.contains(original), "the probe's entry has \(original)")
    let read = try #require(
      try HAR(
        data: harDocument(entries: [entry.replacingOccurrences(of: original, with: replacement)])
      )
      .log.entries.first)
    let facts = [
      "response.status \(read.response.status)",
      "request sizes \(read.request.headersSize) \(read.request.bodySize)",
      "time \(read.time)", read.cache == HAR.Cache() ? "cache empty" : "cache",
      "timings \(read.timings.send) \(read.timings.wait) \(read.timings.receive)",
      read.request.cookies.isEmpty && read.request.headers.isEmpty
        ? "request lists empty" : "lists",
      read.response.statusText.isEmpty ? "statusText empty" : "statusText",
    ]
    #expect(facts.contains(expected), "\(facts)")
    #expect(read.connection == "443")
  }

  /// The layout Errand writes, in full: keys sorted, two-space indent, dates in UTC with
  /// milliseconds, secrets hidden.
  @Test func theWrittenLayoutIsExactlyThis() throws {
    let entry = HAR.Entry(
      startedDateTime: Date(timeIntervalSince1970: 1_700_000_000.25), time: 12.5,
      request: HAR.Request(
        method: "POST", url: "https://api.example.com/v1/dogs?token=abc12345&page=2",
        headers: [HAR.Header(name: "Authorization", value: "Bearer abcdefgh")],
        queryString: [
          HAR.QueryParameter(name: "token", value: "abc12345"),
          HAR.QueryParameter(name: "page", value: "2"),
        ],
        postData: HAR.PostData(
          mimeType: "application/json", text: #"{"name":"Rex","password":"hunter22"}"#),
        bodySize: 36),
      response: HAR.Response(
        status: 201, statusText: "Created",
        content: HAR.Content(size: 2, mimeType: "application/json", text: "{}")),
      timings: HAR.Timings(send: 0.5, wait: 12, receive: 0))
    let written = utf8Text(try HAR(entries: [entry]).encoded())
    #expect(
      written == Self.layout.replacingOccurrences(of: "VERSION", with: HAR.Creator.errand.version))
  }

  static let layout = #"""
    {
      "log": {
        "creator": {
          "name": "Errand",
          "version": "VERSION"
        },
        "entries": [
          {
            "cache": {},
            "request": {
              "bodySize": 38,
              "cookies": [],
              "headers": [
                {
                  "name": "Authorization",
                  "value": "<redacted>"
                }
              ],
              "headersSize": -1,
              "httpVersion": "HTTP/1.1",
              "method": "POST",
              "postData": {
                "mimeType": "application/json",
                "text": "{\"name\":\"Rex\",\"password\":\"<redacted>\"}"
              },
              "queryString": [
                {
                  "name": "token",
                  "value": "<redacted>"
                },
                {
                  "name": "page",
                  "value": "2"
                }
              ],
              "url": "https://api.example.com/v1/dogs?token=%3Credacted%3E&page=2"
            },
            "response": {
              "bodySize": -1,
              "content": {
                "mimeType": "application/json",
                "size": 2,
                "text": "{}"
              },
              "cookies": [],
              "headers": [],
              "headersSize": -1,
              "httpVersion": "HTTP/1.1",
              "redirectURL": "",
              "status": 201,
              "statusText": "Created"
            },
            "startedDateTime": "2023-11-14T22:13:20.250Z",
            "time": 12.5,
            "timings": {
              "blocked": -1,
              "connect": -1,
              "dns": -1,
              "receive": 0,
              "send": 0.5,
              "ssl": -1,
              "wait": 12
            }
          }
        ],
        "version": "1.2"
      }
    }

    """#
}
