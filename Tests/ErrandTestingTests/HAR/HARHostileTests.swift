import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// A HAR a hostile or broken tool might write, and the error it must get.
struct HARProbe: Sendable, CustomTestStringConvertible {
  var label: String
  var document: Data
  var kind: HARError.Kind
  var entry: Int?
  var field: String?
  var reason: String
  var testDescription: String { label }

  init(
    _ label: String, _ document: Data, _ kind: HARError.Kind = .invalidField, entry: Int? = 0,
    field: String?, reason: String
  ) {
    self.label = label
    self.document = document
    self.kind = kind
    self.entry = entry
    self.field = field
    self.reason = reason
  }

  init(
    _ label: String, entry: String, _ kind: HARError.Kind = .invalidField, field: String?,
    reason: String
  ) {
    self.init(label, harDocument(entries: [entry]), kind, field: field, reason: reason)
  }

  /// Probes refused when the document is read (`HAR(data:)`).
  static let reading = [
    HARProbe(
      "truncated JSON", Data(#"{"log":{"entries":[{"request":"#.utf8), .invalidJSON, entry: nil,
      field: nil, reason: "not valid JSON: line 1, column 31: unexpected end of the document"),
    HARProbe(
      "not JSON at all", Data("<html>".utf8), .invalidJSON, entry: nil, field: nil,
      reason: "not valid JSON: line 1, column 1: unexpected character '<'"),
    HARProbe(
      "no log", Data("{}".utf8), entry: nil, field: "log", reason: "is missing"),
    HARProbe(
      "entries not an array", Data(#"{"log":{"entries":{"0":{}}}}"#.utf8), entry: nil,
      field: "log.entries", reason: "expected an array, found an object"),
    HARProbe(
      "an entry that is a string", Data(#"{"log":{"entries":["GET /"]}}"#.utf8),
      field: "log.entries[0]", reason: "expected an object, found a string"),
    HARProbe(
      "a status written as a string", entry: harEntry(status: #""200""#),
      field: "log.entries[0].response.status", reason: "expected a whole number, found a string"),
    HARProbe(
      "a status with a fraction", entry: harEntry(status: "200.5"),
      field: "log.entries[0].response.status",
      reason: "expected a whole number in range, found 200.5"),
    HARProbe(
      "a status too large for any integer", entry: harEntry(status: "1e400"),
      field: "log.entries[0].response.status",
      reason: "expected a whole number in range, found 1e400"),
    HARProbe(
      "a URL that is a number",
      entry: harEntry().replacingOccurrences(
        of: #""url":"https://api.example.com/v1/dogs""#, with: #""url":5"#),
      field: "log.entries[0].request.url", reason: "expected a string, found the number 5"),
    HARProbe(
      "headers that are an object", entry: harEntry(requestHeaders: #"{"a":"b"}"#),
      field: "log.entries[0].request.headers", reason: "expected an array, found an object"),
    HARProbe(
      "a header without a name", entry: harEntry(responseHeaders: #"[{"value":"x"}]"#),
      field: "log.entries[0].response.headers[0].name", reason: "is missing"),
    HARProbe(
      "a date that is not a date",
      entry: harEntry().replacingOccurrences(
        of: "2024-01-02T03:04:05.678Z", with: "yesterday"),
      field: "log.entries[0].startedDateTime",
      reason: #""yesterday" is not an ISO 8601 date"#),
    HARProbe(
      "a date with a month 13",
      entry: harEntry().replacingOccurrences(
        of: "2024-01-02", with: "2024-13-02"),
      field: "log.entries[0].startedDateTime",
      reason: #""2024-13-02T03:04:05.678Z" is not an ISO 8601 date"#),
    HARProbe(
      "nested deeper than 512 levels",
      Data(
        (#"{"log":{"entries":[{"_initiator":"# + String(repeating: "[", count: 100_000)).utf8),
      .invalidJSON, entry: nil, field: nil,
      reason: "not valid JSON: line 1, column 542: the document is nested deeper than 512 levels"),
  ]

  /// Probes read as a HAR, then refused when replayed (`CassetteTransport(har:)`,
  /// `StubTransport.on(har:)`, `writeCassette`).
  static let replaying = [
    HARProbe(
      "status 99999", entry: harEntry(status: "99999"), field: "log.entries[0].response.status",
      reason: "99999 is not an HTTP status (100 to 999)"),
    HARProbe(
      "a negative status", entry: harEntry(status: "-5"), field: "log.entries[0].response.status",
      reason: "-5 is not an HTTP status (100 to 999)"),
    HARProbe(
      "invalid base64",
      entry: harEntry(
        content: #"{"size":3,"mimeType":"image/png","text":"not base64!!","encoding":"base64"}"#),
      field: "log.entries[0].response.content.text",
      reason: "is not valid base64, as its encoding says"),
    HARProbe(
      "an encoding Errand does not read",
      entry: harEntry(
        content: #"{"size":3,"mimeType":"text/plain","text":"abc","encoding":"gzip"}"#),
      field: "log.entries[0].response.content.encoding",
      reason: #""gzip" is not an encoding Errand reads (only base64 is)"#),
    HARProbe(
      "a URL that does not parse", entry: harEntry(url: "http://[::1/x?token=hunter22-secret"),
      field: "log.entries[0].request.url",
      reason: #""http://[::1/x?token=%3Credacted%3E" is not an absolute http or https URL"#),
    HARProbe(
      "a relative URL", entry: harEntry(url: "/v1/dogs"), field: "log.entries[0].request.url",
      reason: #""/v1/dogs" is not an absolute http or https URL"#),
    HARProbe(
      "a javascript: URL", entry: harEntry(url: "javascript:alert(1)"),
      field: "log.entries[0].request.url",
      reason: #""javascript:alert(1)" is not an absolute http or https URL"#),
    HARProbe(
      "a method with a space", entry: harEntry(method: "GET /admin HTTP/1.1\r\nX:"),
      field: "log.entries[0].request.method",
      reason:
        #""GET…" is not an HTTP method (a space, CR or LF could smuggle a request)"#
    ),
    HARProbe(
      "a request header value with CR LF",
      entry: harEntry(
        requestHeaders: #"[{"name":"X-Trace","value":"1\r\nX-Injected: yes"}]"#),
      field: "log.entries[0].request.headers[0].value",
      reason: #"the value of "X-Trace" holds a carriage return; replaying it would inject a header"#
    ),
    HARProbe(
      "a response header value with LF",
      entry: harEntry(
        responseHeaders: #"[{"name":"Set-Thing","value":"a\nSet-Cookie: admin=1"}]"#),
      field: "log.entries[0].response.headers[0].value",
      reason: #"the value of "Set-Thing" holds a line feed; replaying it would inject a header"#),
    HARProbe(
      "a header name with CR LF",
      entry: harEntry(
        responseHeaders: #"[{"name":"X-A\r\nX-B","value":"1"}]"#),
      field: "log.entries[0].response.headers[0].name",
      reason: #""X-A\r\nX-B" is not a header name (a token)"#),
    HARProbe(
      "a header value with NUL",
      entry: harEntry(
        requestHeaders: #"[{"name":"X-Trace","value":"a\u0000b"}]"#),
      field: "log.entries[0].request.headers[0].value",
      reason:
        #"the value of "X-Trace" holds a control character; replaying it would inject a header"#),
  ]
}

@Suite(.timeLimit(.minutes(3))) struct HARHostileTests {
  @Test(arguments: HARProbe.reading)
  func malformedDocumentsAreRefusedWithTheEntryAndTheField(_ probe: HARProbe) throws {
    let error = try #require(throws: HARError.self) { try HAR(data: probe.document) }
    #expect(
      error == HARError(probe.kind, entry: probe.entry, field: probe.field, reason: probe.reason))
  }

  @Test(arguments: HARProbe.replaying)
  func entriesThatCannotBeReplayedAreRefusedAndNothingIsReplayed(_ probe: HARProbe) async throws {
    let har = try HAR(data: probe.document)
    let expected = HARError(
      probe.kind, entry: probe.entry, field: probe.field, reason: probe.reason)
    #expect(throws: expected) { _ = try CassetteTransport(har: har) }
    #expect(throws: expected) { try har.writeCassette(to: temporaryCassette()) }
    let stub = StubTransport()
    await #expect(throws: expected) { try await stub.on(har: har) }
    // No route was added: the request is unmatched, not answered.
    await #expect(throws: UnmatchedRequest.self) {
      _ = try await stub.send(HTTPRequest(url: url("https://api.example.com/v1/dogs")))
    }
    #expect(expected.description.hasPrefix("HAR entry 0: \(probe.field ?? ""): "))
  }

  /// 100,000 entries at full size (`ERRAND_FULL_SIZE=1`, about 5 s of processor time in a debug
  /// build); 10,000 by default, as the other CPU-bound suites do.
  @Test(.ownThread) func aHundredThousandEntriesReadAndReplay() async throws {
    let count = TestSize.count(small: 10_000, full: 100_000)
    let entries = (0..<count).map { index in
      #"{"request":{"method":"GET","url":"https://api.example.com/v1/items/\#(index % 1000)"},"#
        + #""response":{"status":200,"content":{"text":"\#(index)"}}}"#
    }
    let har = try HAR(data: harDocument(entries: entries))
    #expect(har.log.entries.count == count)
    let stub = StubTransport()
    try await stub.on(har: har)
    // 1,000 routes, each answering its entries in turn.
    let first = try await stub.send(HTTPRequest(url: url("https://api.example.com/v1/items/999")))
    let second = try await stub.send(HTTPRequest(url: url("https://api.example.com/v1/items/999")))
    #expect(utf8Text(first.body) == "999")
    #expect(utf8Text(second.body) == "1999")
  }

  @Test func aDocumentOverTheLimitIsRefusedBeforeItIsParsed() throws {
    let body = String(repeating: "a", count: 2_000)
    let document = harDocument(
      entries: [harEntry(content: #"{"size":2000,"mimeType":"text/plain","text":"\#(body)"}"#)])
    let error = try #require(throws: HARError.self) {
      try HAR(data: document, limits: HAR.Limits(maximumDocumentSize: 1_000))
    }
    #expect(
      error.description
        == "HAR: the document is \(document.count) bytes, over the limit of 1000 "
        + "(HAR.Limits.maximumDocumentSize).")
    #expect(error.kind == .tooLarge)
  }

  @Test(arguments: [
    (#"{"size":150,"mimeType":"text/plain","text":"\#(String(repeating: "a", count: 150))"}"#, 150),
    (
      #"{"size":150,"mimeType":"image/png","text":"\#(String(repeating: "QUJD", count: 50))","encoding":"base64"}"#,
      150
    ),
  ])
  func aBodyOverTheLimitIsRefusedBeforeItIsDecoded(_ content: String, _ size: Int) throws {
    let har = try HAR(data: harDocument(entries: [harEntry(content: content)]))
    let error = try #require(throws: HARError.self) {
      _ = try CassetteTransport(har: har, limits: HAR.Limits(maximumBodySize: 100))
    }
    #expect(
      error
        == HARError(
          .tooLarge, entry: 0, field: "log.entries[0].response.content.text",
          reason: "the body is \(size) bytes, over the limit of 100 (HAR.Limits.maximumBodySize)"))
  }

  @Test func a200MBFileIsRefusedByItsSizeWithoutBeingRead() throws {
    // A sparse file: 200 MB long, no disk or memory used. The error gives its whole size, which
    // only the file's metadata knows: reading stops one byte past the limit.
    let file = temporaryCassette("huge").deletingPathExtension().appendingPathExtension("har")
    try FileManager.default.createDirectory(
      at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
    #expect(FileManager.default.createFile(atPath: file.path, contents: Data(#"{"log":"#.utf8)))
    let handle = try FileHandle(forWritingTo: file)
    try handle.truncate(atOffset: 200_000_000)
    try handle.close()
    defer { try? FileManager.default.removeItem(at: file) }
    let error = try #require(throws: HARError.self) { try HAR(contentsOf: file) }
    #expect(
      error.description
        == "HAR: \(file.path) is 200000000 bytes, over the limit of 104857600 "
        + "(HAR.Limits.maximumDocumentSize).")
  }

  @Test func anEndlessStreamIsReadOnlyToTheLimit() throws {
    let error = try #require(throws: HARError.self) {
      try HAR(
        contentsOf: URL(fileURLWithPath: "/dev/zero"),
        limits: HAR.Limits(maximumDocumentSize: 4_096))
    }
    #expect(
      error.description
        == "HAR: /dev/zero is over the limit of 4096 bytes (HAR.Limits.maximumDocumentSize).")
  }

  @Test func numbersOutOfRangeAreReadAsUnknown() throws {
    let entry = harEntry()
      .replacingOccurrences(of: #""time":1"#, with: #""time":1e400"#)
      .replacingOccurrences(
        of: #""headersSize":-1,"bodySize":0"#, with: #""headersSize":-42,"bodySize":1e30"#
      )
      .replacingOccurrences(
        of: #""timings":{"send":0,"wait":1,"receive":0}"#,
        with: #""timings":{"blocked":-1e400,"dns":-7,"send":-3,"wait":1e999,"receive":0.5}"#)
    let har = try HAR(data: harDocument(entries: [entry]))
    let read = try #require(har.log.entries.first)
    #expect(read.time == 0)
    #expect(read.request.headersSize == -1)
    #expect(read.request.bodySize == -1)
    #expect(read.timings == HAR.Timings(blocked: -1, dns: -1, send: 0, wait: 0, receive: 0.5))
    let written = try har.encoded()
    #expect(try HAR(data: written).encoded() == written)
  }

  @Test func aSecretInAHeaderTheRedactionNamesIsNeverWritten() throws {
    let entry = harEntry(
      requestHeaders:
        #"[{"name":"X-Session","value":"sess-0f9e8d7c"},{"name":"Authorization","value":"Basic cmV4Omh1bnRlcjI="}]"#,
      responseHeaders: #"[{"name":"X-Echo","value":"you sent sess-0f9e8d7c"}]"#,
      content:
        #"{"size":30,"mimeType":"application/json","text":"{\"seen\":\"sess-0f9e8d7c\",\"user\":\"rex\"}"}"#
    )
    let har = try HAR(data: harDocument(entries: [entry]))
    let written = utf8Text(try har.encoded(redaction: Redaction(headers: ["x-session"])))
    for secret in ["sess-0f9e8d7c", "cmV4Omh1bnRlcjI=", "hunter2"] {
      #expect(!written.contains(secret), "\(secret) written:\n\(written)")
    }
    #expect(written.contains(#""value": "you sent <redacted>""#))
    // Without naming X-Session, only the credential is hidden: the redaction decides.
    #expect(utf8Text(try har.encoded()).contains("sess-0f9e8d7c"))
    #expect(!utf8Text(try har.encoded()).contains("cmV4Omh1bnRlcjI="))
  }

  @Test func errorMessagesNeverQuoteAHeaderValue() throws {
    let har = try HAR(
      data: harDocument(entries: [
        harEntry(requestHeaders: #"[{"name":"Authorization","value":"Bearer tok-ab12cd34\n"}]"#)
      ]))
    let error = try #require(throws: HARError.self) { _ = try CassetteTransport(har: har) }
    for form in printedForms(of: error) {
      #expect(!form.contains("tok-ab12cd34"))
    }
  }
}

/// Probes found by reading the code as a hostile reviewer: each failed before its fix.
@Suite(.timeLimit(.minutes(3))) struct HARReviewProbes {
  /// Chrome names each page by its URL: a token in it must not reach a file or a log.
  @Test func aPageTitleURLKeepsItsSecretsHidden() throws {
    let document = Data(
      #"{"log":{"creator":{"name":"WebInspector","version":"537.36"},"pages":[{"startedDateTime":"2024-05-14T09:12:03.417Z","id":"page_1","title":"https://shop.example.com/reset?token=pg-6d5c4b3a","pageTimings":{}}],"entries":[]}}"#
        .utf8)
    let har = try HAR(data: document)
    #expect(!utf8Text(try har.encoded()).contains("pg-6d5c4b3a"))
    for form in printedForms(of: har) {
      #expect(!form.contains("pg-6d5c4b3a"), "printed: \(form)")
    }
  }

  /// Some tools write base64 without padding, or wrapped in lines; the bytes are the same.
  @Test(arguments: [
    "iVBORw0KGgo", "iVBORw0KGgo=", "iVBO\r\nRw0K\r\nGgo=", "iVBORw0KGgo=\n",
  ])
  func base64WithoutPaddingOrWrappedInLinesDecodes(_ encoded: String) async throws {
    let har = try HAR(
      data: harDocument(entries: [
        harEntry(
          content:
            #"{"size":8,"mimeType":"image/png","text":\#(jsonLiteral(encoded)),"encoding":"base64"}"#
        )
      ]))
    let answer = try await CassetteTransport(har: har).send(
      HTTPRequest(url: url("https://api.example.com/v1/dogs")))
    #expect(answer.body == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
  }

  /// Windows tools (Fiddler, Charles on Windows) may start the file with a UTF-8 byte order mark.
  @Test func aByteOrderMarkIsSkipped() throws {
    var document = Data([0xEF, 0xBB, 0xBF])
    document.append(harDocument(entries: [harEntry()]))
    #expect(try HAR(data: document).log.entries.count == 1)
  }

  /// A link to a huge file is refused by the size of the file it names, before a byte is read.
  @Test func aLinkToAHugeFileIsRefusedByItsTargetsSize() throws {
    let folder = temporaryCassette("huge").deletingLastPathComponent()
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let target = folder.appendingPathComponent("huge.har")
    #expect(FileManager.default.createFile(atPath: target.path, contents: Data(#"{"log":"#.utf8)))
    let handle = try FileHandle(forWritingTo: target)
    try handle.truncate(atOffset: 200_000_000)
    try handle.close()
    let link = folder.appendingPathComponent("link.har")
    try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
    let error = try #require(throws: HARError.self) { try HAR(contentsOf: link) }
    #expect(error.description.contains("is 200000000 bytes, over the limit of 104857600"))
  }
}
