import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

@testable import Errand

/// Event streams from other implementations' published test suites and the standard's own
/// examples, each read three ways: by the parser split at every byte boundary, through a stub, and
/// over a socket through every transport. Each case names its source.
@Suite(.timeLimit(.minutes(3))) struct ServerSentEventConformanceTests {
  struct Case: Sendable, CustomTestStringConvertible {
    var source: String
    var name: String
    var wire: String
    var events: [ServerSentEvent]
    /// The stream's reconnection time at its end, when the case says.
    var reconnectionTime: Duration?
    var testDescription: String { "\(source): \(name)" }
  }

  static let html = "HTML Standard §9.2.6 examples"
  static let parser = "eventsource-parser test/parse.test.ts"
  static let okhttp = "OkHttp ServerSentEventIteratorTest"
  /// web-platform-tests `eventsource/`, whose server (`resources/message.py`) writes the message,
  /// then `\n\n` unless told otherwise, then `\n`.
  static let wpt = "web-platform-tests eventsource"
  static let longComment = String(repeating: "x", count: 2 * 1024)

  static let cases = otherCases + launchDarklyCases

  static let otherCases: [Case] = [
    Case(
      source: html, name: "stock ticker, multi-line data",
      wire: "data: YHOO\ndata: +2\ndata: 10\n\n", events: [ServerSentEvent(data: "YHOO\n+2\n10")]),
    Case(
      source: html, name: "ids set, reset by a bare id, and a kept leading space",
      wire: ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\n"
        + "data:  third event\n\n",
      events: [
        ServerSentEvent(data: "first event", id: "1"), ServerSentEvent(data: "second event"),
        ServerSentEvent(data: " third event"),
      ]),
    Case(
      source: html, name: "empty data, two empty data lines, an unfinished event",
      wire: "data\n\ndata\ndata\n\ndata:",
      events: [ServerSentEvent(data: ""), ServerSentEvent(data: "\n")]),
    Case(
      source: html, name: "one space dropped or none there",
      wire: "data:test\n\ndata: test\n\n",
      events: [ServerSentEvent(data: "test"), ServerSentEvent(data: "test")]),
    Case(
      source: parser, name: "CR at a chunk's end is half of a CRLF",
      wire: "data: A\r\ndata: B\r\ndata: C\r\n\n", events: [ServerSentEvent(data: "A\nB\nC")]),
    Case(
      source: parser, name: "an id with NULL leaves the buffered id",
      wire: "id: 123\nid: bad\0id\ndata: hello\n\n",
      events: [ServerSentEvent(data: "hello", id: "123")]),
    Case(
      source: parser, name: "an invalid retry changes nothing",
      wire: "\nretry: 500\n\ndata: first\n\nretry: 50x\n\ndata: second\n\n",
      events: [ServerSentEvent(data: "first"), ServerSentEvent(data: "second")],
      reconnectionTime: .milliseconds(500)),
    Case(
      source: parser, name: "an empty retry is invalid",
      wire: "retry: 500\n\nid: 1\ndata: a\n\nretry:\nid: 2\ndata: b\n\n",
      events: [ServerSentEvent(data: "a", id: "1"), ServerSentEvent(data: "b", id: "2")],
      reconnectionTime: .milliseconds(500)),
    Case(
      source: parser, name: "oddly shaped data fields",
      wire: "data:\n\ndata\ndata\n\ndata:test\n\n",
      events: [
        ServerSentEvent(data: ""), ServerSentEvent(data: "\n"), ServerSentEvent(data: "test"),
      ]),
    Case(
      source: parser, name: "an empty event field is a message",
      wire: "event:\ndata: Hello 1\n\nevent: done\ndata: \u{2714}\n\n",
      events: [ServerSentEvent(data: "Hello 1"), ServerSentEvent(event: "done", data: "\u{2714}")]),
    Case(
      source: parser, name: "a leading byte order mark",
      wire: "\u{FEFF}data: bomful 1\n\ndata: bomless 2\n\n",
      events: [ServerSentEvent(data: "bomful 1"), ServerSentEvent(data: "bomless 2")]),
    Case(
      source: parser, name: "a byte order mark mid-stream names an unknown field",
      wire: "\u{FEFF}data: bomful 1\n\n\u{FEFF}data: bomful 2\n\ndata: bomless 3\n\n",
      events: [ServerSentEvent(data: "bomful 1"), ServerSentEvent(data: "bomless 3")]),
    Case(
      source: parser, name: "multi-byte text",
      wire:
        "data: \u{6211}\u{73FE}\u{5728}\u{90FD}\u{770B}\n\n\n\nevent: done\ndata: \u{1F94C}\n\n",
      events: [
        ServerSentEvent(data: "\u{6211}\u{73FE}\u{5728}\u{90FD}\u{770B}"),
        ServerSentEvent(event: "done", data: "\u{1F94C}"),
      ]),
    Case(
      source: parser, name: "an id in a block without data carries over",
      wire: "id: 42\n\ndata: x\n\nid:\n\ndata: y\n\n",
      events: [ServerSentEvent(data: "x", id: "42"), ServerSentEvent(data: "y")]),
    Case(
      source: parser, name: "heartbeat comments",
      wire: ": \u{2665}\ndata: A\n\n: \u{2665}\n:\ndata: B\n\n",
      events: [ServerSentEvent(data: "A"), ServerSentEvent(data: "B")]),
    Case(
      source: parser, name: "lone CRs end lines",
      wire: "data: dog\rdata: bark\r\rdata: cat\rdata: meow\r\r",
      events: [ServerSentEvent(data: "dog\nbark"), ServerSentEvent(data: "cat\nmeow")]),
    Case(
      source: okhttp, name: "multi-line data with CR endings",
      wire: "data: YHOO\rdata: +2\rdata: 10\r\r", events: [ServerSentEvent(data: "YHOO\n+2\n10")]),
    Case(
      source: okhttp, name: "multi-line data with CRLF endings",
      wire: "data: YHOO\r\ndata: +2\r\ndata: 10\r\n\r\n",
      events: [ServerSentEvent(data: "YHOO\n+2\n10")]),
    Case(
      source: okhttp, name: "event types",
      wire:
        "event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\nevent: add\ndata: 113411\n\n",
      events: [
        ServerSentEvent(event: "add", data: "73857293"),
        ServerSentEvent(event: "remove", data: "2153"),
        ServerSentEvent(event: "add", data: "113411"),
      ]),
    Case(
      source: okhttp, name: "an id reused across events",
      wire: "data: first event\nid: 1\n\ndata: second event\n\nid: 2\ndata: third event\n\n",
      events: [
        ServerSentEvent(data: "first event", id: "1"),
        ServerSentEvent(data: "second event", id: "1"),
        ServerSentEvent(data: "third event", id: "2"),
      ]),
    Case(
      source: okhttp,
      name: "an id from an empty event is kept, as the standard says (OkHttp drops it)",
      wire: "data: first event\nid: 1\n\nid: 2\n\ndata: second event\n\n",
      events: [
        ServerSentEvent(data: "first event", id: "1"),
        ServerSentEvent(data: "second event", id: "2"),
      ]),
    Case(
      source: okhttp, name: "retry before an event",
      wire: "retry: 22\n\ndata: first event\nid: 1\n\n",
      events: [ServerSentEvent(data: "first event", id: "1")], reconnectionTime: .milliseconds(22)),
    Case(
      source: okhttp, name: "an invalid retry is ignored",
      wire: "retry: 22\n\nretry: hey\n\n", events: [], reconnectionTime: .milliseconds(22)),
    Case(
      source: okhttp, name: "field names are matched whole",
      wire: "data: a\neventually\ndatabase\nidentity\nretrying\n\n",
      events: [ServerSentEvent(data: "a")]),
    Case(
      source: okhttp, name: "naked names clear the id and type and append data",
      wire: "id: a\nevent: b\ndata: c\nid\nevent\ndata\n\n", events: [ServerSentEvent(data: "c\n")]),
    Case(source: okhttp, name: "a naked retry is ignored", wire: "retry\n\n", events: []),
    Case(
      source: wpt, name: "format-field-data", wire: "data:\n\ndata\ndata\n\ndata:test\n\n\n",
      events: [
        ServerSentEvent(data: ""), ServerSentEvent(data: "\n"), ServerSentEvent(data: "test"),
      ]),
    Case(
      source: wpt, name: "format-comments (comment fest)",
      wire:
        "data:1\r:\0\n:\r\ndata:2\n:\(longComment)\rdata:3\n:data:fail\r:\(longComment)\ndata:4\n\n",
      events: [ServerSentEvent(data: "1\n2\n3\n4")]),
    Case(
      source: wpt, name: "format-null-character", wire: "data:\0\n\n\n",
      events: [ServerSentEvent(data: "\0")]),
    Case(
      source: wpt, name: "format-bom-2 (a second BOM is part of the first field name)",
      wire: "\u{FEFF}\u{FEFF}data:1\n\ndata:2\n\ndata:3\n\n\n",
      events: [ServerSentEvent(data: "2"), ServerSentEvent(data: "3")]),
    Case(
      source: wpt, name: "format-field-event-empty", wire: "event: \ndata:data\n\n\n",
      events: [ServerSentEvent(data: "data")]),
  ]

  @Test(.ownThread, arguments: cases)
  func theParserReadsEveryByteSplit(_ row: Case) throws {
    let bytes = Data(row.wire.utf8)
    for split in 0...bytes.count {
      var parser = ServerSentEventParser()
      let events =
        try parser.push(bytes.prefix(split)) + parser.push(bytes.dropFirst(split))
      parser.finish()
      #expect(events == row.events, "split at byte \(split)")
      if let time = row.reconnectionTime {
        #expect(parser.reconnectionTime == time)
      }
    }
  }

  @Test(arguments: cases)
  func aStubServesItByteByByte(_ row: Case) async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/sse", .chunks(Data(row.wire.utf8).map { Data([$0]) }))
    let events = try await client(stub).events(Endpoint<Data>(path: "sse", decoding: .data))
    var received: [ServerSentEvent] = []
    for try await event in events { received.append(event) }
    #expect(received == row.events)
    if let time = row.reconnectionTime {
      #expect(events.reconnectionTime == time)
    }
  }

  /// Every row over one server and one transport per transport kind, one after another: a
  /// server and a transport per row, all started at once, would hold a hundred threads and
  /// sockets while every other suite runs beside them.
  @Test(arguments: TransportKind.allCases)
  func everyTransportReadsItOverASocket(_ transport: TransportKind) async throws {
    let rows = Self.cases
    let server = try LoopbackServer { request in
      let index = Int(request.path.split(separator: "/").last ?? "") ?? -1
      guard rows.indices.contains(index) else { return ScriptedResponse(status: 404) }
      return ScriptedResponse(
        headers: [("Content-Type", "text/event-stream")], body: Data(rows[index].wire.utf8),
        chunkSize: 3)
    }
    defer { server.stop() }
    let client = APIClient(baseURL: server.baseURL, transport: transport.make())
    for (index, row) in rows.enumerated() {
      var received: [ServerSentEvent] = []
      for try await event in try await client.events(
        Endpoint<Data>(path: "sse/\(index)", decoding: .data))
      {
        received.append(event)
      }
      #expect(received == row.events, "\(row)")
    }
  }
}
