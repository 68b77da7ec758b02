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

  /// The event as a server sends it, ending with the blank line that dispatches it.
  public var wireFormat: String {
    var text = ""
    if event != "message" {
      text += "event: \(event)\n"
    }
    if let id {
      text += "id: \(id)\n"
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
/// line dispatches the event, unless it has no data; an unfinished event at the end is dropped.
struct ServerSentEventParser {
  private var splitter: LineSplitter
  private var atStart = true
  private var data = ""
  /// The UTF-8 length of `data`, kept as it grows.
  private var dataLength = 0
  /// The longest event data (and line) to hold, in bytes.
  private let maximumLength: Int
  private var eventType = ""
  private var lastEventID = ""
  private var retry: Duration?

  init(maximumLength: Int = .max) {
    self.maximumLength = maximumLength
    splitter = LineSplitter(
      endsAtLoneCarriageReturn: true, maximumLength: maximumLength, unit: .event)
  }

  /// The events that `chunk` completes.
  /// - Throws: ``LineTooLongError`` as soon as a line, or an event's data, is longer than the
  ///   maximum length.
  mutating func push(_ chunk: Data) throws(LineTooLongError) -> [ServerSentEvent] {
    var events: [ServerSentEvent] = []
    for line in try splitter.push(chunk) {
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

  private mutating func process(_ raw: String) throws(LineTooLongError) -> ServerSentEvent? {
    var line = Substring(raw)
    if atStart {
      atStart = false
      if line.first == "\u{FEFF}" {
        line = line.dropFirst()
      }
    }
    if line.isEmpty {
      return dispatch()
    }
    if line.first == ":" {
      return nil
    }
    let field: Substring
    var value: Substring
    if let colon = line.firstIndex(of: ":") {
      field = line[..<colon]
      value = line[line.index(after: colon)...]
      if value.first == " " {
        value = value.dropFirst()
      }
    } else {
      field = line
      value = ""
    }
    switch field {
    case "event":
      eventType = String(value)
    case "data":
      dataLength += value.utf8.count + 1
      guard dataLength <= maximumLength else {
        data = ""
        dataLength = 0
        throw LineTooLongError(unit: .event, limit: maximumLength)
      }
      data += value + "\n"
    case "id":
      if !value.contains("\0") {
        lastEventID = String(value)
      }
    case "retry":
      if !value.isEmpty, value.allSatisfy({ $0.isASCII && $0.isNumber }) {
        retry = Int64(value).map { .milliseconds($0) } ?? .milliseconds(Int64.max)
      }
    default:
      break
    }
    return nil
  }

  private mutating func dispatch() -> ServerSentEvent? {
    defer {
      data = ""
      dataLength = 0
      eventType = ""
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

  /// Reads the events in order.
  public struct AsyncIterator: AsyncIteratorProtocol {
    var chunks: ResponseStream.AsyncIterator
    var parser: ServerSentEventParser
    var ready: [ServerSentEvent] = []

    /// The next event, or `nil` when the stream ends.
    /// - Returns: The event.
    /// - Throws: ``APIError``, as the stream does; ``APIError/transport(_:)`` with a
    ///   ``LineTooLongError`` for an event longer than ``ResponseStream/maximumLineLength``.
    public mutating func next() async throws -> ServerSentEvent? {
      while ready.isEmpty {
        guard let chunk = try await chunks.next() else {
          parser.finish()
          return nil
        }
        do {
          ready = try parser.push(chunk).reversed()
        } catch {
          chunks.stream.cancel()
          throw APIError.transport(error)
        }
      }
      return ready.popLast()
    }
  }

  /// An iterator over the events.
  /// - Returns: The iterator.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(
      chunks: stream.makeAsyncIterator(),
      parser: ServerSentEventParser(maximumLength: stream.maximumLineLength))
  }
}
