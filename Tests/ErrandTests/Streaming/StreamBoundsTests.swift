import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// What a hostile server can make a stream hold: a line without an ending is capped, and an error
/// body that trickles in is read for a bounded time.
@Suite(.timeLimit(.minutes(3))) struct StreamBoundsTests {
  /// The ways to read a stream by lines.
  enum Reader: String, CaseIterable, CustomTestStringConvertible {
    case lines, events, jsonLines
    var testDescription: String { rawValue }

    var unit: LineTooLongError.Unit { self == .events ? .event : .line }

    /// Read everything from the client's `/v1/feed`, returning how many items arrived.
    func read(_ client: APIClient) async throws -> Int {
      let endpoint = Endpoint<Data>(path: "feed", decoding: .data)
      var count = 0
      switch self {
      case .lines:
        for try await _ in try await client.stream(endpoint).lines { count += 1 }
      case .events:
        for try await _ in try await client.events(endpoint) { count += 1 }
      case .jsonLines:
        for try await _ in try await client.jsonLines(Endpoint<Int>(path: "feed")) { count += 1 }
      }
      return count
    }
  }

  /// `count` chunks of 64 KiB with no line ending, after one short, complete item.
  static func endlessLine(chunks count: Int, for reader: Reader) -> StubResponse {
    let first = reader == .events ? "data: 1\n\n" : "1\n"
    let filler = Data(repeating: UInt8(ascii: "7"), count: 64 * 1024)
    let prefix = Data((reader == .events ? "data: " : "").utf8)
    return .chunks([Data(first.utf8), prefix] + Array(repeating: filler, count: count))
  }

  /// Each reader with its own limit set, and lines and JSON Lines with the default limit (an
  /// event's default is the collected-body limit, 100 MB: `EventStreamConformanceTests` reads a
  /// 10 MiB event under it).
  static let cappedReaders: [(Reader, Int?)] =
    Reader.allCases.map { ($0, 1000) } + [(.lines, nil), (.jsonLines, nil)]

  @Test(arguments: cappedReaders)
  func aLineWithoutAnEndingIsCapped(reader: Reader, limit: Int?) async throws {
    let stub = StubTransport()
    // 2 MiB of one line: twice the default limit.
    await stub.on(.get, "/v1/feed", Self.endlessLine(chunks: 32, for: reader))
    var configuration = APIClient.Configuration()
    if let limit, reader == .events {
      configuration.maximumEventSize = limit
    } else if let limit {
      configuration.maximumLineLength = limit
    }
    let client = APIClient(baseURL: base, transport: stub, configuration: configuration)
    let error = await #expect(throws: APIError.self) { _ = try await reader.read(client) }
    let tooLong = try #require(error?.underlyingError as? LineTooLongError)
    #expect(tooLong == LineTooLongError(unit: reader.unit, limit: limit ?? 1_048_576))
    #expect(error?.localizedDescription.contains("grew past \(limit ?? 1_048_576) bytes") == true)
  }

  @Test(arguments: [999, 1000, 1001])
  func aLineUpToTheLimitIsRead(length: Int) async throws {
    let stub = StubTransport()
    let line = String(repeating: "x", count: length)
    await stub.on(.get, "/v1/feed", .chunks([Data((line + "\nend\n").utf8)]))
    let client = APIClient(baseURL: base, transport: stub)
    var stream = try await client.stream(Endpoint<Data>(path: "feed", decoding: .data))
    stream.maximumLineLength = 1000
    var lines: [String] = []
    do {
      for try await read in stream.lines { lines.append(read) }
      #expect(length <= 1000)
      #expect(lines == [line, "end"])
    } catch let error as APIError {
      #expect(length > 1000)
      #expect(
        error.underlyingError as? LineTooLongError == LineTooLongError(unit: .line, limit: 1000))
    }
  }

  @Test func anErrorBodyThatTricklesInIsReadForTheTimeoutAtMost() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    // A byte every 0.9 s keeps each wait under the 1 s timeout; 64 of them would take a minute.
    let bytes = (0..<64).map { Data([UInt8(ascii: "a") + UInt8($0 % 26)]) }
    await stub.on(.get, "/v1/feed", .chunks(bytes, interval: .milliseconds(900), status: 503))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(timeout: .seconds(1), clock: clock))
    let call = Task {
      try await client.stream(Endpoint<Data>(path: "feed", decoding: .data))
    }
    // The error body is being read once three tasks sleep: the stub's next chunk, the reader's
    // idle timeout and the body's bound (before the head, at most the stub and the call's
    // timeout do). Advancing before that would start the bound 0.9 s late, and the test would
    // wait for it forever.
    try #require(await clock.waitForSleepers(3))
    try #require(await clock.waitForSleeper(dueIn: .milliseconds(900)))
    await clock.advance(by: .milliseconds(900))
    // The second byte has been read once the reader waits again, for 1 s (the bound's task
    // could otherwise fire before the reader has taken it).
    try #require(await clock.waitForSleeper(dueIn: .seconds(1)))
    // The error body's own bound is the only sleeper due at 1 s from the start.
    try #require(await clock.waitForSleeper(dueIn: .milliseconds(100)))
    await clock.advance(by: .milliseconds(100))
    let error = await #expect(throws: APIError.self) { _ = try await call.cancellableValue }
    #expect(error?.kind == .unacceptableStatus)
    #expect(error?.response?.status == 503)
    #expect(error?.response?.body == Data("ab".utf8))
  }
}
