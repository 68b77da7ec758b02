import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// The WHATWG event-stream parsing rules, fed whole and one byte at a time.
@Suite(.timeLimit(.minutes(2))) struct ServerSentEventParsingTests {
  struct Case: Sendable, CustomTestStringConvertible {
    var name: String
    var wire: String
    var events: [ServerSentEvent]
    var testDescription: String { name }
  }

  static let cases: [Case] = [
    Case(name: "one event", wire: "data: 1\n\n", events: [ServerSentEvent(data: "1")]),
    Case(
      name: "multi-line data", wire: "data: a\ndata: b\n\n",
      events: [ServerSentEvent(data: "a\nb")]),
    Case(
      name: "comments are skipped", wire: ": keep-alive\ndata: x\n: more\n\n",
      events: [ServerSentEvent(data: "x")]),
    Case(
      name: "event type", wire: "event: tick\ndata: 2\n\ndata: 3\n\n",
      events: [ServerSentEvent(event: "tick", data: "2"), ServerSentEvent(data: "3")]),
    Case(
      name: "the last id carries over", wire: "id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n",
      events: [
        ServerSentEvent(data: "a", id: "7"), ServerSentEvent(data: "b", id: "7"),
        ServerSentEvent(data: "c"),
      ]),
    Case(
      name: "an id with NUL is ignored", wire: "id: 1\ndata: a\n\nid: x\0y\ndata: b\n\n",
      events: [ServerSentEvent(data: "a", id: "1"), ServerSentEvent(data: "b", id: "1")]),
    Case(
      name: "retry in milliseconds", wire: "retry: 3000\ndata: a\n\nretry: 3s\ndata: b\n\n",
      events: [ServerSentEvent(data: "a", retry: .seconds(3)), ServerSentEvent(data: "b")]),
    Case(
      name: "no final blank line", wire: "data: 1\n\ndata: 2\n",
      events: [ServerSentEvent(data: "1")]),
    Case(
      name: "no final newline", wire: "data: 1\n\ndata: 2", events: [ServerSentEvent(data: "1")]),
    Case(
      name: "byte order mark", wire: "\u{FEFF}data: bom\n\n", events: [ServerSentEvent(data: "bom")]
    ),
    Case(
      name: "one space is dropped", wire: "data:none\n\ndata:  two\n\n",
      events: [ServerSentEvent(data: "none"), ServerSentEvent(data: " two")]),
    Case(
      name: "CRLF and lone CR", wire: "data: a\r\n\r\ndata: b\r\rdata: c\n\n",
      events: [ServerSentEvent(data: "a"), ServerSentEvent(data: "b"), ServerSentEvent(data: "c")]),
    Case(name: "a data field with no value", wire: "data\n\n", events: [ServerSentEvent(data: "")]),
    Case(name: "no data, no event", wire: "event: x\n\nid: 3\n\n", events: []),
    Case(
      name: "unknown fields are ignored", wire: "foo: bar\ndata: x\n\n",
      events: [ServerSentEvent(data: "x")]),
  ]

  @Test(arguments: cases, [false, true])
  func parses(_ row: Case, bytewise: Bool) async throws {
    let bytes = Data(row.wire.utf8)
    let chunks = bytewise ? bytes.map { Data([$0]) } : [bytes]
    let stub = StubTransport()
    await stub.on(.get, "/v1/sse", .chunks(chunks, headers: ["Content-Type": "text/event-stream"]))
    var received: [ServerSentEvent] = []
    for try await event in try await client(stub).events(
      Endpoint<Data>(path: "sse", decoding: .data))
    {
      received.append(event)
    }
    #expect(received == row.events)
  }

  @Test func asksForAnEventStream() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/sse", .events([ServerSentEvent(data: "1")]))
    let events = try await client(stub).events(Endpoint<Data>(path: "sse", decoding: .data))
    for try await _ in events {}
    #expect(try await stub.nextRequest().headers["Accept"] == "text/event-stream")
    #expect(events.stream.response.headers["Content-Type"] == "text/event-stream")
  }

  @Test(arguments: [
    ServerSentEvent(data: "1"), ServerSentEvent(event: "tick", data: "a\nb", id: "9"),
    ServerSentEvent(data: "", retry: .milliseconds(1500)),
  ])
  func theWireFormatParsesBackToTheEvent(event: ServerSentEvent) async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/sse", .events([event]))
    var received: [ServerSentEvent] = []
    for try await event in try await client(stub).events(
      Endpoint<Data>(path: "sse", decoding: .data))
    {
      received.append(event)
    }
    #expect(received == [event])
  }

  /// A `retry` of twenty digits parses (saturated) and writes back without trapping.
  @Test func anEnormousRetryReadsAndWritesBack() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/sse", .chunks([Data("retry: 99999999999999999999\ndata: x\n\n".utf8)]))
    var received: [ServerSentEvent] = []
    for try await event in try await client(stub).events(
      Endpoint<Data>(path: "sse", decoding: .data))
    {
      received.append(event)
    }
    #expect(received == [ServerSentEvent(data: "x", retry: .milliseconds(Int64.max))])
    #expect(received.first?.wireFormat == "retry: 9223372036854775807\ndata: x\n\n")
  }
}
