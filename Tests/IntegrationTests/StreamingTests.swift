import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// `URLSessionTransport` streaming against the loopback server: bodies as they arrive, limits,
/// failures mid-body, and a reader that stops.
@Suite(.timeLimit(.minutes(3))) struct StreamingTests {
  static let endpoint = Endpoint<Data>(path: "body", decoding: .data)

  @Test(arguments: [0, 1, 64 * 1024, 10 * 1024 * 1024], [false, true])
  func theWholeBodyArrivesByteForByte(size: Int, chunked: Bool) async throws {
    let bytes = patternBytes(size)
    let server = try LoopbackServer { _ in
      ScriptedResponse(body: bytes, chunkSize: chunked ? 100_000 : nil)
    }
    defer { server.stop() }
    let stream = try await liveClient(server.baseURL).stream(Self.endpoint)
    #expect(stream.response.status == 200)
    #expect(try await stream.collect() == bytes)
    #expect(try await liveClient(server.baseURL).send(Self.endpoint) == bytes)
  }

  @Test func aChunkArrivesWhileTheServerStillHoldsTheRest() async throws {
    // The second chunk would come 60 s later: reading the first proves it was not buffered. A
    // type Apple's URLSession does not sniff, or it would hold the first 5 bytes for 512.
    let server = try LoopbackServer { _ in
      .chunks(
        [Data("first".utf8), Data("second".utf8)], interval: .seconds(60),
        headers: [("Content-Type", "application/json")])
    }
    defer { server.stop() }
    let stream = try await liveClient(server.baseURL).stream(Self.endpoint)
    var iterator = stream.makeAsyncIterator()
    #expect(try await iterator.next() == Data("first".utf8))
    stream.cancel()
    #expect(await server.waitForEarlyDisconnect())
  }

  @Test func anEventStreamOverTheNetwork() async throws {
    let server = try LoopbackServer { _ in
      .events(
        ["data: 1\n\n", ": ping\n\nevent: tick\nid: 2\ndata: 2\n\n"], interval: .milliseconds(20))
    }
    defer { server.stop() }
    var events: [ServerSentEvent] = []
    let client = liveClient(server.baseURL)
    for try await event in try await client.events(Endpoint<Data>(path: "sse", decoding: .data)) {
      events.append(event)
    }
    #expect(
      events == [ServerSentEvent(data: "1"), ServerSentEvent(event: "tick", data: "2", id: "2")])
    #expect(server.requests.first?.headers["accept"] == "text/event-stream")
  }

  @Test(
    arguments: [
      ScriptedResponse.Ending.resetAfterBodyBytes(300_000), .closeAfterBodyBytes(300_000),
    ], [false, true])
  func aBodyCutShortEndsWithATransportError(ending: ScriptedResponse.Ending, chunked: Bool)
    async throws
  {
    let server = try LoopbackServer { _ in
      ScriptedResponse(
        body: patternBytes(1_000_000), chunkSize: chunked ? 50_000 : nil, ending: ending)
    }
    defer { server.stop() }
    var received = 0
    let error = await #expect(throws: APIError.self) {
      for try await chunk in try await liveClient(server.baseURL).stream(Self.endpoint) {
        received += chunk.count
      }
    }
    #expect(error?.kind == .transport)
    #expect(received <= 300_000)
  }

  enum Stop: CaseIterable { case breakOutOfTheLoop, cancel, dropTheStream }

  @Test(arguments: Stop.allCases)
  func aReaderThatStopsCancelsTheRequest(stop: Stop) async throws {
    let server = try LoopbackServer { _ in
      // A minute in all: the reader stops long before the end, however busy the machine.
      .chunks(Array(repeating: patternBytes(10_000), count: 200), interval: .milliseconds(300))
    }
    defer { server.stop() }
    let stream = try await liveClient(server.baseURL).stream(Self.endpoint)
    switch stop {
    case .breakOutOfTheLoop:
      for try await _ in stream { break }
    case .cancel:
      var iterator = stream.makeAsyncIterator()
      _ = try await iterator.next()
      stream.cancel()
    case .dropTheStream:
      _ = consume stream
    }
    #expect(await server.waitForEarlyDisconnect())
  }

  @Test(arguments: [true, false])
  func theSizeLimitStopsTheTransferAsItIsCrossed(announcesLength: Bool) async throws {
    let server = try LoopbackServer { _ in
      ScriptedResponse(body: patternBytes(5_000_000), chunkSize: announcesLength ? nil : 64 * 1024)
    }
    defer { server.stop() }
    let client = liveClient(
      server.baseURL, configuration: APIClient.Configuration(maximumResponseSize: 1_000_000))
    let buffered = await #expect(throws: APIError.self) { try await client.send(Self.endpoint) }
    #expect(buffered?.urlError?.code == .dataLengthExceedsMaximum)
    let streamed = await #expect(throws: APIError.self) {
      for try await _ in try await client.stream(Self.endpoint) {}
    }
    #expect(streamed?.urlError?.code == .dataLengthExceedsMaximum)
  }

  @Test func aRetryCancelsTheBodyOfTheAttemptItReplaces() async throws {
    let attempts = Locked(0)
    let server = try LoopbackServer { _ in
      let attempt = attempts.withLock { count in
        count += 1
        return count
      }
      return attempt == 1
        ? ScriptedResponse(
          status: 503, body: patternBytes(2_000_000), chunkSize: 10_000, delayMidBody: .seconds(100)
        )
        : .text("fresh")
    }
    defer { server.stop() }
    let client = liveClient(
      server.baseURL,
      configuration: APIClient.Configuration(middleware: [
        RetryMiddleware(policy: RetryPolicy(maxAttempts: 2, jitter: .none), clock: .immediate)
      ]))
    let stream = try await client.stream(Self.endpoint)
    #expect(stream.response.status == 200)
    #expect(try await stream.collect() == Data("fresh".utf8))
    #expect(await server.waitForEarlyDisconnect())
  }
}
