import Errand
import Foundation

/// Recorded HTTP exchanges, as stored in a cassette file: pretty JSON with a stable key order,
/// bodies as JSON when they are compact JSON, as text when they are UTF-8, and as base64 otherwise,
/// so that every body replays byte for byte.
struct Cassette: Equatable, Sendable {
  /// The format version this Errand writes and reads.
  static let version = 1

  /// One request and the response it got.
  struct Exchange: Equatable, Sendable {
    var request: HTTPRequest
    var response: HTTPResponse
    /// The body's chunks as they arrived, for an exchange recorded from a stream; the response's
    /// body is then their concatenation.
    var chunks: [Data]? = nil
    /// How the connection dropped after the chunks, for a stream recorded as it was cut short
    /// (a reconnecting event stream's dropped connection); `nil` for a body that ended.
    var droppedWith: URLError.Code? = nil
  }

  var exchanges: [Exchange] = []

  /// Held while a cassette transport reads its file again, adds an exchange and writes it, so
  /// that two transports of this process over one file never write over each other's exchanges.
  static let saving = Locked(())

  // MARK: Reading

  /// Read a cassette file.
  static func load(from url: URL) throws(CassetteError) -> Cassette {
    let path = url.path
    guard FileManager.default.fileExists(atPath: path) else { throw .fileNotFound(path: path) }
    let data: Data
    do {
      data = try Data(contentsOf: url)
    } catch {
      throw .malformed(path: path, reason: "it cannot be read (\(error.localizedDescription))")
    }
    let document: JSONValue
    do {
      document = try JSONValue.parse(data)
    } catch {
      throw .invalidJSON(path: path, line: error.line, column: error.column, reason: error.reason)
    }
    guard case .number(let raw)? = document["version"], let version = Int(raw) else {
      throw .malformed(path: path, reason: "it has no \"version\" number")
    }
    guard version == Self.version else {
      throw .unsupportedVersion(path: path, found: version, supported: Self.version)
    }
    guard case .array(let items)? = document["exchanges"] else {
      throw .malformed(path: path, reason: "it has no \"exchanges\" array")
    }
    var cassette = Cassette()
    for (index, item) in items.enumerated() {
      do {
        cassette.exchanges.append(try Exchange(item))
      } catch {
        throw .malformed(path: path, reason: "exchanges[\(index)].\(error.field) \(error.problem)")
      }
    }
    return cassette
  }

  // MARK: Writing

  /// The file's text.
  var text: String {
    JSONValue.object([
      .init(key: "version", value: .number(String(Self.version))),
      .init(key: "recordedWith", value: .string("Errand")),
      .init(key: "exchanges", value: .array(exchanges.map(\.json))),
    ]).pretty + "\n"
  }

  /// Write the file atomically, creating folders as needed.
  func save(to url: URL) throws(CassetteError) {
    do {
      try FileManager.default.createDirectory(
        at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try Data(text.utf8).write(to: url, options: .atomic)
    } catch {
      throw .unwritable(path: url.path, reason: error.localizedDescription)
    }
  }
}

/// A field of an exchange that is missing or wrong.
struct ExchangeFieldError: Error {
  var field: String
  var problem: String
}

extension Cassette.Exchange {
  var json: JSONValue {
    .object([
      .init(
        key: "request",
        value: .object(
          [
            .init(key: "method", value: .string(request.method.rawValue)),
            .init(key: "url", value: .string(request.url.absoluteString)),
            .init(key: "headers", value: Self.json(request.headers)),
          ] + Self.bodyMember(request.body ?? Data()))),
      .init(
        key: "response",
        value: .object(
          [
            .init(key: "status", value: .number(String(response.status))),
            .init(key: "headers", value: Self.json(response.headers)),
          ] + responseBodyMembers
            + (droppedWith.map {
              [.init(key: "droppedWithURLError", value: .number(String($0.rawValue)))]
            } ?? []))),
    ])
  }

  /// The response body: whole, as chunks, or, for an event stream recorded as a stream, as
  /// events (one per chunk when replayed).
  private var responseBodyMembers: [JSONValue.Member] {
    guard let chunks else { return Self.bodyMember(response.body) }
    if Self.isEventStream(response), let events = Self.events(in: chunks) {
      return [.init(key: "events", value: .array(events.map(Self.json)))]
    }
    return [.init(key: "chunks", value: .array(chunks.map { Self.bodyValue($0) }))]
  }

  private static func isEventStream(_ response: HTTPResponse) -> Bool {
    response.headers["Content-Type"]?.lowercased().hasPrefix("text/event-stream") == true
  }

  /// The events in a recorded event stream, when writing them back gives the same events.
  private static func events(in chunks: [Data]) -> [ServerSentEvent]? {
    let text = String(decoding: chunks.reduce(into: Data()) { $0.append($1) }, as: UTF8.self)
    let events = ServerSentEvent.parse(text)
    let written = ServerSentEvent.wireFormat(of: events).joined()
    return ServerSentEvent.parse(written) == events ? events : nil
  }

  private static func json(_ event: ServerSentEvent) -> JSONValue {
    var members: [JSONValue.Member] = []
    if event.event != "message" {
      members.append(.init(key: "event", value: .string(event.event)))
    }
    members.append(.init(key: "data", value: .string(event.data)))
    if let id = event.id {
      members.append(.init(key: "id", value: .string(id)))
    }
    if let retry = event.retry {
      members.append(
        .init(key: "retry", value: .number(String(retry.wholeMilliseconds))))
    }
    return .object(members)
  }

  private static func event(_ json: JSONValue, field: String) throws(ExchangeFieldError)
    -> ServerSentEvent
  {
    guard case .string(let data)? = json["data"] else {
      throw ExchangeFieldError(field: field, problem: "must have a \"data\" string")
    }
    var event = ServerSentEvent(data: data)
    if case .string(let type)? = json["event"] {
      event.event = type
    }
    if case .string(let id)? = json["id"] {
      event.id = id
    }
    if case .number(let raw)? = json["retry"], let milliseconds = Int64(raw) {
      event.retry = .milliseconds(milliseconds)
    }
    return event
  }

  init(_ json: JSONValue) throws(ExchangeFieldError) {
    guard let request = json["request"] else {
      throw ExchangeFieldError(field: "request", problem: "is missing")
    }
    guard let response = json["response"] else {
      throw ExchangeFieldError(field: "response", problem: "is missing")
    }
    guard case .string(let method)? = request["method"] else {
      throw ExchangeFieldError(field: "request.method", problem: "must be a string")
    }
    guard case .string(let address)? = request["url"], let url = URL(string: address) else {
      throw ExchangeFieldError(field: "request.url", problem: "must be a URL string")
    }
    guard case .number(let raw)? = response["status"], let status = Int(raw) else {
      throw ExchangeFieldError(field: "response.status", problem: "must be a number")
    }
    // As a HAR entry's (HAR+Replay): a number that is not an HTTP status is not replayed.
    guard (100...999).contains(status) else {
      throw ExchangeFieldError(
        field: "response.status", problem: "must be an HTTP status (100 to 999), not \(status)")
    }
    let requestBody = try Self.body(request["body"], field: "request.body")
    self.request = HTTPRequest(
      method: HTTPMethod(rawValue: method), url: url,
      headers: try Self.headers(request["headers"], field: "request.headers"),
      body: requestBody.isEmpty ? nil : requestBody)
    if case .array(let events)? = response["events"] {
      var read: [ServerSentEvent] = []
      for (index, event) in events.enumerated() {
        read.append(try Self.event(event, field: "response.events[\(index)]"))
      }
      chunks = ServerSentEvent.wireFormat(of: read).map { Data($0.utf8) }
    } else if case .array(let parts)? = response["chunks"] {
      var chunks: [Data] = []
      for (index, part) in parts.enumerated() {
        chunks.append(try Self.body(part, field: "response.chunks[\(index)]"))
      }
      self.chunks = chunks
    }
    let body: Data
    if let chunks {
      body = chunks.reduce(into: Data()) { $0.append($1) }
    } else {
      body = try Self.body(response["body"], field: "response.body")
    }
    self.response = HTTPResponse(
      status: status, headers: try Self.headers(response["headers"], field: "response.headers"),
      body: body, url: url)
    if let dropped = response["droppedWithURLError"] {
      guard case .number(let raw) = dropped, let code = Int(raw) else {
        throw ExchangeFieldError(
          field: "response.droppedWithURLError", problem: "must be a URLError code number")
      }
      droppedWith = URLError.Code(rawValue: code)
    }
  }

  private static func json(_ headers: HTTPHeaders) -> JSONValue {
    .array(headers.fields.map { .array([.string($0.name), .string($0.value)]) })
  }

  private static func headers(_ json: JSONValue?, field: String) throws(ExchangeFieldError)
    -> HTTPHeaders
  {
    guard let json else { return [:] }
    guard case .array(let pairs) = json else {
      throw ExchangeFieldError(field: field, problem: "must be an array of [name, value] pairs")
    }
    var headers = HTTPHeaders()
    for pair in pairs {
      guard case .array(let parts) = pair, parts.count == 2, case .string(let name) = parts[0],
        case .string(let value) = parts[1]
      else {
        throw ExchangeFieldError(field: field, problem: "must be an array of [name, value] pairs")
      }
      headers.add(name, value)
    }
    return headers
  }

  /// `"body": {"json": ...}` for compact JSON, `{"text": ...}` for UTF-8, `{"base64": ...}` else;
  /// nothing for an empty body.
  private static func bodyMember(_ body: Data) -> [JSONValue.Member] {
    guard !body.isEmpty else { return [] }
    return [.init(key: "body", value: bodyValue(body))]
  }

  /// `{"json": ...}` for compact JSON, `{"text": ...}` for UTF-8, `{"base64": ...}` else.
  private static func bodyValue(_ body: Data) -> JSONValue {
    let form: JSONValue.Member
    if let value = try? JSONValue.parse(body), value.isContainer, Data(value.compact.utf8) == body {
      form = .init(key: "json", value: value)
    } else if let text = String(data: body, encoding: .utf8) {
      form = .init(key: "text", value: .string(text))
    } else {
      form = .init(key: "base64", value: .string(body.base64EncodedString()))
    }
    return .object([form])
  }

  private static func body(_ json: JSONValue?, field: String) throws(ExchangeFieldError) -> Data {
    guard let json else { return Data() }
    if let value = json["json"] {
      return Data(value.compact.utf8)
    }
    if case .string(let text)? = json["text"] {
      return Data(text.utf8)
    }
    if case .string(let encoded)? = json["base64"] {
      guard let data = Data(base64Encoded: encoded) else {
        throw ExchangeFieldError(field: field, problem: "has base64 that does not decode")
      }
      return data
    }
    throw ExchangeFieldError(field: field, problem: "must hold \"json\", \"text\" or \"base64\"")
  }
}
