import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// The WHATWG event-stream parsing rules, fed whole and one byte at a time.
@Suite(.timeLimit(.minutes(3))) struct ServerSentEventParsingTests {
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
    // The HTML Standard splits a line at the first U+003A COLON and drops one U+0020 SPACE after
    // it, by code point: a combining mark after either does not hide it.
    Case(
      name: "a combining mark after the space", wire: "data: \u{0301}x\n\n",
      events: [ServerSentEvent(data: "\u{0301}x")]),
    Case(
      name: "a combining mark after the colon", wire: "data:\u{0301}x\n\n",
      events: [ServerSentEvent(data: "\u{0301}x")]),
    Case(
      name: "a Devanagari vowel sign after the colon", wire: "data:\u{093F}\u{0915}\n\n",
      events: [ServerSentEvent(data: "\u{093F}\u{0915}")]),
    Case(
      name: "a combining mark after the colon of an id", wire: "id:\u{0301}7\ndata: a\n\n",
      events: [ServerSentEvent(data: "a", id: "\u{0301}7")]),
    Case(
      name: "a space then a combining mark in an event type",
      wire: "event: \u{0301}tick\ndata: a\n\n",
      events: [ServerSentEvent(event: "\u{0301}tick", data: "a")]),
    Case(
      name: "a retry in a block without data sets the time for later",
      wire: "retry: 5000\n\ndata: a\n\n", events: [ServerSentEvent(data: "a")]),
  ]

  @Test(arguments: cases, [false, true])
  func parses(_ row: Case, bytewise: Bool) async throws {
    let bytes = Data(row.wire.utf8)
    let chunks = bytewise ? bytes.map { Data([$0]) } : [bytes]
    let received = try await Self.events(
      answered: .chunks(chunks, headers: ["Content-Type": "text/event-stream"]))
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
    let received = try await Self.events(answered: .events([event]))
    #expect(received == [event])
  }

  /// A `retry` of twenty digits parses (saturated) and writes back without trapping.
  @Test func anEnormousRetryReadsAndWritesBack() async throws {
    let received = try await Self.events(
      answered: .chunks([Data("retry: 99999999999999999999\ndata: x\n\n".utf8)]))
    #expect(received == [ServerSentEvent(data: "x", retry: .milliseconds(Int64.max))])
    #expect(received.first?.wireFormat == "retry: 9223372036854775807\ndata: x\n\n")
  }

  /// Invalid UTF-8 reads as U+FFFD, per part of the line, as decoding the whole stream would.
  @Test func invalidBytesReadAsReplacementCharacters() async throws {
    let wire =
      Data("data: a".utf8) + Data([0xFF, 0xC3]) + Data(":b\nid: \u{00E9}".utf8)
      + Data([0x80]) + Data("\n\n".utf8)
    let received = try await Self.events(from: [wire])
    #expect(received == [ServerSentEvent(data: "a\u{FFFD}\u{FFFD}:b", id: "\u{00E9}\u{FFFD}")])
  }

  /// The reconnection time and the last event ID belong to the stream: a `retry` or an `id` in a
  /// block that dispatches nothing still sets them.
  @Test func theStreamKeepsItsReconnectionTimeAndLastEventID() async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/sse",
      .chunks([
        Data("retry: 2500\nid: 41\n\n".utf8), Data("data: a\n\n".utf8),
        Data("retry: x\nid: 42\n\n".utf8),
      ]))
    let events = try await client(stub).events(Endpoint<Data>(path: "sse", decoding: .data))
    #expect(events.reconnectionTime == nil && events.lastEventID == nil)
    var received: [ServerSentEvent] = []
    for try await event in events {
      received.append(event)
      #expect(events.reconnectionTime == .milliseconds(2500))
    }
    #expect(received == [ServerSentEvent(data: "a", id: "41")])
    #expect(events.reconnectionTime == .milliseconds(2500), "an invalid retry changes nothing")
    #expect(events.lastEventID == "42")
  }

  /// The sequence's last event ID is that of the last event read, though its chunk held more (a
  /// loop that saves it after each event resumes after that event, not after one it has not
  /// seen); a block that ends without data sets it, and one the stream cut off does not. It was
  /// the chunk's last `id`, even one whose block never ended.
  @Test func theLastEventIDIsThatOfTheLastEventRead() async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/sse",
      .chunks([
        Data("id: 1\ndata: a\n\nid: 2\ndata: b\n\n".utf8), Data("id: 3\n\nid: 4\ndata: d\n".utf8),
      ]))
    let events = try await client(stub).events(Endpoint<Data>(path: "sse", decoding: .data))
    var seen: [String?] = []
    for try await event in events {
      seen.append(event.id)
      seen.append(events.lastEventID)
    }
    seen.append(events.lastEventID)
    #expect(seen == ["1", "1", "2", "2", "3"])
  }

  /// A stub writes the last event ID as it changes: cleared with an empty `id:`, carried over
  /// with none, so what a test stubs is what the code under test reads.
  @Test func stubbedEventsReadBackAsGivenWhenAnIDIsCleared() async throws {
    let given = [
      ServerSentEvent(data: "a", id: "1"), ServerSentEvent(data: "b"),
      ServerSentEvent(data: "c", id: "2"), ServerSentEvent(data: "d", id: "2"),
    ]
    #expect(
      ServerSentEvent.wireFormat(of: given) == [
        "id: 1\ndata: a\n\n", "id:\ndata: b\n\n", "id: 2\ndata: c\n\n", "data: d\n\n",
      ])
    let received = try await Self.events(answered: .events(given))
    #expect(received == given)
  }

  /// The events a stub serving `chunks` delivers.
  static func events(from chunks: [Data]) async throws -> [ServerSentEvent] {
    try await events(answered: .chunks(chunks))
  }

  /// The events `events(_:)` reads from a stub that answers `/v1/sse` with `answer`.
  static func events(answered answer: StubResponse) async throws -> [ServerSentEvent] {
    let stub = StubTransport()
    await stub.on(.get, "/v1/sse", answer)
    var received: [ServerSentEvent] = []
    for try await event in try await client(stub).events(
      Endpoint<Data>(path: "sse", decoding: .data))
    {
      received.append(event)
    }
    return received
  }
}
