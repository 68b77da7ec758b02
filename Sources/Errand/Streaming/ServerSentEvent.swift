import Foundation

/// One event of a Server-Sent Events stream (`text/event-stream`), as the WHATWG HTML standard's
/// parsing rules produce it.
///
/// ```swift
/// for try await event in try await client.events(Endpoint<Data>(path: "sse", decoding: .data)) {
///   print(event.event, event.data)        // "message" unless the stream names the type
/// }
/// ```
public struct ServerSentEvent: Sendable, Hashable {
  /// The event type: the `event` field, or `"message"` when the event has none.
  public var event: String
  /// The `data` fields' values, joined with `\n`.
  public var data: String
  /// The last event ID the stream set (an `id` field in this event or an earlier one), which a
  /// client sends back as `Last-Event-ID` when it reconnects; `nil` while none is set.
  public var id: String?
  /// The reconnection time a `retry` field in this event asked for, if any.
  public var retry: Duration?

  /// Create an event.
  /// - Parameters:
  ///   - event: The event type; `"message"` by default.
  ///   - data: The data, which may span lines.
  ///   - id: The event ID, if any.
  ///   - retry: The reconnection time to ask for, if any.
  public init(event: String = "message", data: String, id: String? = nil, retry: Duration? = nil) {
    self.event = event
    self.data = data
    self.id = id
    self.retry = retry
  }

  /// The events a whole event stream dispatches, parsed as ``APIClient/events(_:)`` parses a
  /// stream as it arrives.
  /// - Parameter text: The stream's text.
  /// - Returns: The events, in order.
  public static func parse(_ text: String) -> [ServerSentEvent] {
    var parser = ServerSentEventParser()
    // No limit: the whole text is in memory already, so nothing can throw.
    let events = (try? parser.push(Data(text.utf8))) ?? []
    parser.finish()
    return events
  }

  /// The event as a server sends it, ending with the blank line that dispatches it: its `id`,
  /// when it has one, is written out. For a sequence of events, where an event without an `id`
  /// must clear the one before, use ``wireFormat(of:)``.
  public var wireFormat: String {
    wireFormat(after: nil)
  }

  /// `text` up to its first line break: a field's value cannot hold one (the rest would be read
  /// as a field of its own, `id: 1` then `data: forged`), so an `event` or `id` with a line
  /// break is written, and read back, as its first line.
  private static func firstLine(of text: String) -> String {
    String(String.UnicodeScalarView(text.unicodeScalars.prefix { $0 != "\n" && $0 != "\r" }))
  }

  /// Events as a server sends them, one string per event, so that reading them back gives the
  /// same events: an `id` line where the last event ID changes (`id:` with no value where it is
  /// cleared, as after an event with an ID comes one without) and none where it carries over.
  /// No field value can hold a line break, so an `event` or `id` that has one is written (and
  /// read back) up to it, never as a field of its own.
  /// - Parameter events: The events, in order.
  /// - Returns: Each event's text, ending with the blank line that dispatches it.
  public static func wireFormat(of events: [ServerSentEvent]) -> [String] {
    var lastID: String?
    return events.map { event in
      defer { lastID = event.id }
      return event.wireFormat(after: lastID)
    }
  }

  /// The event's text when the stream's last event ID before it is `previous`.
  private func wireFormat(after previous: String?) -> String {
    var text = ""
    if event != "message" {
      text += "event: \(Self.firstLine(of: event))\n"
    }
    if id != previous {
      text += id.map { "id: \(Self.firstLine(of: $0))\n" } ?? "id:\n"
    }
    if let retry {
      text += "retry: \(retry.wholeMilliseconds)\n"
    }
    let lines = data.replacingOccurrences(of: "\r\n", with: "\n")
      .replacingOccurrences(of: "\r", with: "\n").split(
        separator: "\n", omittingEmptySubsequences: false)
    for line in lines {
      text += "data: \(line)\n"
    }
    return text + "\n"
  }
}

/// Turns the bytes of an event stream into events, line by line, per the WHATWG rules: a leading
/// byte order mark is skipped; lines end at `\r\n`, `\n` or `\r`; `:` starts a comment; a blank
/// line ends a block, which sets the last event ID and dispatches the event, unless it has no
/// data; an unfinished block at the end is dropped, its `id` with it.
struct ServerSentEventParser {
  private var splitter: LineSplitter
  private var atStart = true
  private var data = ""
  /// The UTF-8 length of `data`, kept as it grows.
  private var dataLength = 0
  /// The most bytes the event being read may hold (its data, type and ID together), and the
  /// longest line.
  private let maximumLength: Int
  private var eventType = ""
  /// The UTF-8 length of `eventType`.
  private var eventTypeLength = 0
  /// The last event ID buffer: set by each `id` field, it persists across events.
  private var lastEventIDBuffer: String
  /// The UTF-8 length of `lastEventIDBuffer`.
  private var lastEventIDLength: Int
  /// The last event ID string: the buffer as it was when the last block ended (dispatch step 1
  /// of the standard), which events carry and a reconnection sends. The `id` of a block the
  /// stream cut off never becomes it: its event was not delivered.
  private(set) var lastEventID: String
  private var retry: Duration?
  /// The stream's reconnection time: the last valid `retry` field read, in any block.
  private(set) var reconnectionTime: Duration?

  /// A parser whose last event ID starts as `lastEventID`: a reconnection's, so that its events
  /// carry the ID the stream had until the server sends another.
  init(maximumLength: Int = .max, lastEventID: String = "") {
    self.maximumLength = maximumLength
    self.lastEventID = lastEventID
    lastEventIDBuffer = lastEventID
    lastEventIDLength = lastEventID.utf8.count
    splitter = LineSplitter(
      endsAtLoneCarriageReturn: true, maximumLength: maximumLength, unit: .event)
  }

  /// The events that `chunk` completes.
  /// - Throws: ``LineTooLongError`` as soon as a line, or an event's data, is longer than the
  ///   maximum length.
  mutating func push(_ chunk: Data) throws(LineTooLongError) -> [ServerSentEvent] {
    var events: [ServerSentEvent] = []
    for line in try splitter.pushBytes(chunk) {
      if let event = try process(line) {
        events.append(event)
      }
    }
    return events
  }

  /// Called at the end of the stream: an event without its blank line is not dispatched.
  mutating func finish() {
    _ = splitter.finish()
  }

  /// One line, split and stripped by byte as the standard says (at the first U+003A COLON, then
  /// one U+0020 SPACE), each part decoded from UTF-8 with replacement only then: a colon or space
  /// followed by a combining mark is still a colon or a space.
  private mutating func process(_ raw: [UInt8]) throws(LineTooLongError) -> ServerSentEvent? {
    var line = raw[...]
    if atStart {
      atStart = false
      if line.starts(with: Self.byteOrderMark) {
        line = line.dropFirst(Self.byteOrderMark.count)
      }
    }
    if line.isEmpty {
      return dispatch()
    }
    let colon = UInt8(ascii: ":")
    if line.first == colon {
      return nil
    }
    let field: ArraySlice<UInt8>
    var value: ArraySlice<UInt8>
    if let index = line.firstIndex(of: colon) {
      field = line[..<index]
      value = line[(index + 1)...]
      if value.first == UInt8(ascii: " ") {
        value = value.dropFirst()
      }
    } else {
      field = line
      value = []
    }
    // The data, the type and the last event ID are all held until the event is dispatched (the
    // ID for longer): together they are the event's size.
    switch String(decoding: field, as: UTF8.self) {
    case "event":
      try hold(data: dataLength, type: value.count, id: lastEventIDLength)
      eventType = String(decoding: value, as: UTF8.self)
      eventTypeLength = value.count
    case "data":
      try hold(data: dataLength + value.count + 1, type: eventTypeLength, id: lastEventIDLength)
      dataLength += value.count + 1
      data += String(decoding: value, as: UTF8.self) + "\n"
    case "id":
      if !value.contains(0) {
        try hold(data: dataLength, type: eventTypeLength, id: value.count)
        lastEventIDBuffer = String(decoding: value, as: UTF8.self)
        lastEventIDLength = value.count
      }
    case "retry":
      if !value.isEmpty, value.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
      {
        let milliseconds = Int64(String(decoding: value, as: UTF8.self))
        retry = milliseconds.map { .milliseconds($0) } ?? .milliseconds(Int64.max)
        // The stream's reconnection time, whether or not an event is dispatched after it.
        reconnectionTime = retry
      }
    default:
      break
    }
    return nil
  }

  /// Check that the event being read can hold this many bytes of data, type and ID.
  /// - Throws: ``LineTooLongError`` when together they cross the maximum length; the event's
  ///   data is let go.
  private mutating func hold(data: Int, type: Int, id: Int) throws(LineTooLongError) {
    guard data > maximumLength - type - id else { return }
    self.data = ""
    dataLength = 0
    throw LineTooLongError(unit: .event, limit: maximumLength)
  }

  /// U+FEFF BYTE ORDER MARK in UTF-8, skipped once at the start of a stream.
  private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

  private mutating func dispatch() -> ServerSentEvent? {
    lastEventID = lastEventIDBuffer
    defer {
      data = ""
      dataLength = 0
      eventType = ""
      eventTypeLength = 0
      retry = nil
    }
    guard !data.isEmpty else { return nil }
    if data.hasSuffix("\n") {
      data.removeLast()
    }
    return ServerSentEvent(
      event: eventType.isEmpty ? "message" : eventType, data: data,
      id: lastEventID.isEmpty ? nil : lastEventID, retry: retry)
  }
}

/// The events of a streamed response, as ``APIClient/events(_:)`` returns them.
public struct ServerSentEvents: AsyncSequence, Sendable {
  /// An event.
  public typealias Element = ServerSentEvent

  /// The stream the events are read from: its head, and ``ResponseStream/cancel()`` to stop.
  public let stream: ResponseStream
  /// The most bytes one event holds (its data, type and ID together), and the longest line,
  /// before reading throws ``LineTooLongError``: the client's
  /// ``APIClient/Configuration/maximumEventSize``.
  public let maximumEventSize: Int
  /// What the stream's fields have set so far, shared with the iterator that reads them.
  private let state: Locked<State>
  /// The last event ID the stream started with.
  private let initialLastEventID: String

  struct State {
    var reconnectionTime: Duration?
    var lastEventID = ""
  }

  /// The events of `stream`, each at most `maximumEventSize` bytes, with the last event ID
  /// starting as `lastEventID` (a reconnection's: the ID the stream had before).
  init(
    stream: ResponseStream,
    maximumEventSize: Int = APIClient.Configuration.defaultBufferedResponseLimit,
    lastEventID: String = ""
  ) {
    self.stream = stream
    self.maximumEventSize = maximumEventSize
    initialLastEventID = lastEventID
    state = Locked(State(lastEventID: lastEventID))
  }

  /// The stream's reconnection time so far: the last valid `retry` field read, whether or not an
  /// event was dispatched after it (a block with a `retry` and no `data` sets it too); `nil`
  /// until a `retry` field comes. Readable while a loop reads the events.
  public var reconnectionTime: Duration? {
    state.withLock { $0.reconnectionTime }
  }

  /// The stream's last event ID as of the last event read, which a reconnecting client sends as
  /// `Last-Event-ID`: set when a block ends (its blank line) by the last `id` field before it,
  /// whether or not the block has data (an empty `id` clears it); the `id` of a block the
  /// stream cut off does not count, as its event was never delivered. `nil` while it is empty.
  /// A reconnection's stream starts with the ID the stream had before.
  public var lastEventID: String? {
    state.withLock { $0.lastEventID.isEmpty ? nil : $0.lastEventID }
  }

  /// The last event ID as it is, empty once an `id` field cleared it.
  var lastEventIDString: String {
    state.withLock { $0.lastEventID }
  }

  /// Reads the events in order.
  public struct AsyncIterator: AsyncIteratorProtocol {
    var chunks: ResponseStream.AsyncIterator
    var parser: ServerSentEventParser
    var ready: [ServerSentEvent] = []
    let state: Locked<State>

    /// The next event, or `nil` when the stream ends.
    /// - Returns: The event.
    /// - Throws: ``APIError``, as the stream does; ``APIError/transport(_:)`` with a
    ///   ``LineTooLongError`` for an event (or a line) longer than
    ///   ``ServerSentEvents/maximumEventSize``.
    public mutating func next() async throws -> ServerSentEvent? {
      // Parsed from a chunk read before: not returned once the call's client cancelled it.
      try chunks.checkCancelledByClient(dropping: &ready)
      while ready.isEmpty {
        guard let chunk = try await chunks.next() else {
          parser.finish()
          return nil
        }
        do {
          ready = try parser.push(chunk).reversed()
        } catch {
          chunks.stream.cancel()
          throw APIError(transportError: error, request: chunks.stream.request)
        }
        // Blocks without data (an `id` alone) set the ID too.
        let (time, id, none) = (parser.reconnectionTime, parser.lastEventID, ready.isEmpty)
        state.withLock { state in
          state.reconnectionTime = time
          if none { state.lastEventID = id }
        }
      }
      let event = ready.removeLast()
      // The ID as of this event, not as of the chunk's last one: the app has not seen those yet.
      let id = ready.isEmpty ? parser.lastEventID : event.id ?? ""
      state.withLock { $0.lastEventID = id }
      return event
    }
  }

  /// An iterator over the events.
  /// - Returns: The iterator.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(
      chunks: stream.makeAsyncIterator(),
      parser: ServerSentEventParser(
        maximumLength: maximumEventSize, lastEventID: initialLastEventID), state: state)
  }
}
