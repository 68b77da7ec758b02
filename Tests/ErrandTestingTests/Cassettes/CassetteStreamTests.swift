import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Streams recorded with their chunk boundaries (event streams as events) and replayed as streams.
@Suite(.timeLimit(.minutes(3))) struct CassetteStreamTests {
  static func chunks(of stream: ResponseStream) async throws -> [Data] {
    var chunks: [Data] = []
    for try await chunk in stream { chunks.append(chunk) }
    return chunks
  }

  @Test func aStreamIsRecordedWithItsChunksAndReplaysChunkByChunk() async throws {
    let file = temporaryCassette()
    let parts = [Data("first ".utf8), Data([0xFF, 0x00]), Data("last".utf8)]
    let upstream = StubTransport()
    await upstream.on(.get, "/v1/feed", .chunks(parts, headers: ["Content-Type": "text/plain"]))
    let endpoint = Endpoint<Data>(path: "feed", decoding: .data)

    let recorder = CassetteTransport(url: file, mode: .once, upstream: upstream)
    #expect(try await Self.chunks(of: client(recorder).stream(endpoint)) == parts)
    let text = try String(contentsOf: file, encoding: .utf8)
    #expect(text.contains("\"chunks\""))

    let player = CassetteTransport(url: file, mode: .none)
    #expect(try await Self.chunks(of: client(player).stream(endpoint)) == parts)
    let replayedWhole = CassetteTransport(url: file, mode: .none)
    #expect(try await client(replayedWhole).send(endpoint) == parts.reduce(Data(), +))
  }

  @Test func anEventStreamIsRecordedAsEventsAndReplaysThem() async throws {
    let file = temporaryCassette()
    // The third event clears the last event ID (an empty `id:` on the wire); the last keeps it
    // cleared (no `id` line): both survive recording and replay.
    let events = [
      ServerSentEvent(data: "{\"name\":\"Rex\"}", id: "1"),
      ServerSentEvent(event: "tick", data: "two\nlines", id: "2", retry: .seconds(2)),
      ServerSentEvent(data: "after a reset"), ServerSentEvent(data: "still none"),
    ]
    let upstream = StubTransport()
    await upstream.on(.get, "/v1/sse", .events(events, interval: .milliseconds(1)))
    let endpoint = Endpoint<Data>(path: "sse", decoding: .data)

    let recorder = CassetteTransport(url: file, mode: .once, upstream: upstream)
    var recorded: [ServerSentEvent] = []
    for try await event in try await client(recorder).events(endpoint) { recorded.append(event) }
    #expect(recorded == events)
    let text = try String(contentsOf: file, encoding: .utf8)
    #expect(text.contains("\"events\""))
    #expect(text.contains("\"event\" : \"tick\"") || text.contains("\"event\": \"tick\""))

    let player = CassetteTransport(url: file, mode: .none)
    let replay = try await client(player).events(endpoint)
    var replayed: [ServerSentEvent] = []
    for try await event in replay { replayed.append(event) }
    #expect(replayed == events)
    #expect(
      try await Self.chunks(of: client(CassetteTransport(url: file, mode: .none)).stream(endpoint))
        .count == 4)
  }

  /// A stream the connection cut short is recorded with how it dropped, and replays the same
  /// chunks, then the same error, streamed or buffered; one the reader left is not recorded.
  @Test func aStreamCutShortReplaysTheSameDrop() async throws {
    let file = temporaryCassette()
    let upstream = StubTransport()
    await upstream.on(
      .get, "/v1/feed", .chunks([Data("a".utf8)], failingWith: URLError(.networkConnectionLost)))
    let endpoint = Endpoint<Data>(path: "feed", decoding: .data)
    for transport in [
      CassetteTransport(url: file, mode: .once, upstream: upstream),
      CassetteTransport(url: file, mode: .none),
    ] {
      var received = Data()
      let error = await #expect(throws: APIError.self) {
        for try await chunk in try await client(transport).stream(endpoint) { received += chunk }
      }
      #expect(received == Data("a".utf8))
      #expect(error?.urlError?.code == .networkConnectionLost)
    }
    let buffered = await #expect(throws: APIError.self) {
      try await client(CassetteTransport(url: file, mode: .none)).send(endpoint)
    }
    #expect(buffered?.urlError?.code == .networkConnectionLost)
  }

  @Test func aStreamTheReaderLeftIsNotRecorded() async throws {
    let file = temporaryCassette()
    let upstream = StubTransport()
    await upstream.on(
      .get, "/v1/feed", .chunks([Data("a".utf8), Data("b".utf8)], interval: .seconds(600)))
    let recorder = CassetteTransport(url: file, mode: .once, upstream: upstream)
    for try await _ in try await client(recorder).stream(
      Endpoint<Data>(path: "feed", decoding: .data))
    {
      break
    }
    #expect(!FileManager.default.fileExists(atPath: file.path))
  }

  @Test func aSecretInAChunkedJSONBodyIsHiddenEvenAcrossChunks() async throws {
    let file = temporaryCassette()
    let upstream = StubTransport()
    let body = #"{"name":"Rex","password":"s3cret"}"#
    let split = body.index(body.startIndex, offsetBy: 26)
    await upstream.on(
      .get, "/v1/login",
      .chunks(
        [Data(body[..<split].utf8), Data(body[split...].utf8)],
        headers: ["Content-Type": "application/json"]))
    let recorder = CassetteTransport(url: file, mode: .once, upstream: upstream)
    _ = try await Self.chunks(
      of: client(recorder).stream(Endpoint<Data>(path: "login", decoding: .data)))
    let text = try String(contentsOf: file, encoding: .utf8)
    #expect(!text.contains("s3cret"))
    #expect(text.contains("<redacted>"))
  }

  @Test func anEnormousRetryIsRecordedWithoutTrapping() async throws {
    let file = temporaryCassette()
    let upstream = StubTransport()
    await upstream.on(
      .get, "/v1/sse",
      .chunks(
        [Data("retry: 99999999999999999999\ndata: x\n\n".utf8)],
        headers: ["Content-Type": "text/event-stream"]))
    let recorder = CassetteTransport(url: file, mode: .once, upstream: upstream)
    for try await _ in try await client(recorder).events(
      Endpoint<Data>(path: "sse", decoding: .data))
    {}
    let text = try String(contentsOf: file, encoding: .utf8)
    #expect(text.contains("9223372036854775807"))
  }
}
