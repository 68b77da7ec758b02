import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// `APIClient.stream` through a stub: the same pipeline as `send`, the body as it arrives.
@Suite(.timeLimit(.minutes(3))) struct ResponseStreamTests {
  static let endpoint = Endpoint<Data>(path: "events", decoding: .data)

  @Test func chunksArriveInOrderAfterTheHead() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/events", .chunks(["a", "bc", "", "d"].map { Data($0.utf8) }))
    let stream = try await client(stub).stream(Self.endpoint)
    #expect(stream.response.status == 200)
    #expect(stream.response.body.isEmpty)
    var chunks: [String] = []
    for try await chunk in stream {
      chunks.append(String(decoding: chunk, as: UTF8.self))
    }
    #expect(chunks == ["a", "bc", "d"])
    #expect(await stub.requests.map(\.url.path) == ["/v1/events"])
  }

  @Test func linesEndAtNewlineOrCRLFAcrossChunks() async throws {
    let stub = StubTransport()
    let chunks = ["one\r", "\ntwo\nthr", "ee\r\n\nlast"].map { Data($0.utf8) }
    await stub.on(.get, "/v1/events", .chunks(chunks))
    var lines: [String] = []
    for try await line in try await client(stub).stream(Self.endpoint).lines {
      lines.append(line)
    }
    #expect(lines == ["one", "two", "three", "", "last"])
  }

  @Test func theStatusIsValidatedBeforeTheBody() async throws {
    // On a test clock, the bound on reading an error body (10 s) cannot pass while a busy test
    // run keeps the stub's writer from its thread.
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(
      .get, "/v1/events", .chunks([Data("no such ".utf8), Data("feed".utf8)], status: 404))
    let client = APIClient(
      baseURL: base, transport: stub, configuration: APIClient.Configuration(clock: clock))
    let error = await #expect(throws: APIError.self) {
      _ = try await client.stream(Self.endpoint)
    }
    #expect(error?.kind == .unacceptableStatus)
    #expect(error?.response?.status == 404)
    #expect(error?.response?.body == Data("no such feed".utf8))
  }

  @Test func aFailureMidStreamEndsTheIterationWithTheTypedError() async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/events",
      .chunks([Data("a".utf8), Data("b".utf8)], failingWith: URLError(.networkConnectionLost)))
    var received = Data()
    let error = await #expect(throws: APIError.self) {
      for try await chunk in try await client(stub).stream(Self.endpoint) {
        received.append(chunk)
      }
    }
    #expect(received == Data("ab".utf8))
    #expect(error?.kind == .transport)
    #expect(error?.urlError?.code == .networkConnectionLost)
  }

  @Test(arguments: [3, 4, 5])
  func crossingTheSizeLimitFailsAtOnce(limit: Int) async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/events", .chunks(["ab", "cd", "ef"].map { Data($0.utf8) }))
    var endpoint = Self.endpoint
    endpoint.maximumResponseSize = limit
    var received = Data()
    let error = await #expect(throws: APIError.self) {
      for try await chunk in try await client(stub).stream(endpoint) {
        received.append(chunk)
      }
    }
    #expect(received.count == limit / 2 * 2)
    #expect(error?.urlError?.code == .dataLengthExceedsMaximum)
  }

  @Test(arguments: [
    (APIClient.Configuration(maximumResponseSize: 5), Endpoint<Data>(path: "big", decoding: .data)),
    (
      APIClient.Configuration(maximumResponseSize: 100),
      {
        var endpoint = Endpoint<Data>(path: "big", decoding: .data)
        endpoint.maximumResponseSize = 5
        return endpoint
      }()
    ),
  ])
  func aBufferedSendOverTheLimitFails(
    configuration: APIClient.Configuration, endpoint: Endpoint<Data>
  ) async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/big", .status(200, body: Data("123456".utf8)))
    let client = APIClient(baseURL: base, transport: stub, configuration: configuration)
    let error = await #expect(throws: APIError.self) { try await client.send(endpoint) }
    #expect(error?.kind == .transport)
    #expect(error?.urlError?.code == .dataLengthExceedsMaximum)
    #expect(
      error?.localizedDescription.hasPrefix(
        "The request failed for GET https://api.example.com/v1/big")
        == true)
  }

  /// A transport of the app's own that knows nothing of size limits is held to them all the
  /// same: the client settles every body, whole or streamed, in one place.
  @Test(arguments: [false, true])
  func aTransportThatKnowsNoLimitIsHeldToIt(streams: Bool) async throws {
    struct Plain: Transport {
      func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        HTTPResponse(status: 200, body: Data("123456".utf8))
      }
    }
    let client = APIClient(
      baseURL: base, transport: Plain(),
      configuration: APIClient.Configuration(maximumResponseSize: 5))
    let endpoint = Endpoint<Data>(path: "big", decoding: .data)
    let error = await #expect(throws: APIError.self) {
      if streams {
        _ = try await client.stream(endpoint).collect()
      } else {
        _ = try await client.send(endpoint)
      }
    }
    #expect(error?.kind == .transport)
    #expect(error?.urlError?.code == .dataLengthExceedsMaximum)
  }

  @Test func theTimeoutBoundsEachWaitNotTheWholeStream() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    let chunks = (1...5).map { Data("\($0)".utf8) }
    await stub.on(.get, "/v1/events", .chunks(chunks, interval: .seconds(30)))
    await stub.on(.get, "/v1/stalls", .chunks(chunks, interval: .seconds(61)))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(timeout: .seconds(60), clock: clock))

    let healthy = Task {
      var received = 0
      for try await _ in try await client.stream(Self.endpoint) { received += 1 }
      return received
    }
    for _ in 1..<5 {
      // The reader's timeout for a later chunk, armed once it has taken the earlier ones (so
      // their timeouts are gone and cannot be mistaken for the stub's), then the stub's wait. At
      // the start the timeouts for the first and second chunks are due at the same instant, and
      // either will do: the first advance is only 30 seconds.
      try #require(await clock.waitForSleeper(dueIn: .seconds(60)))
      try #require(await clock.waitForSleeper(dueIn: .seconds(30)))
      await clock.advance(by: .seconds(30))
    }
    #expect(try await healthy.cancellableValue == 5)

    let (taken, took) = AsyncStream<Void>.makeStream()
    let stalled = Task { () -> (Int, APIError.Kind?) in
      defer { took.finish() }
      var received = 0
      do {
        for try await _ in try await client.stream(Endpoint<Data>(path: "stalls", decoding: .data))
        {
          received += 1
          took.yield()
        }
      } catch {
        return (received, (error as? APIError)?.kind)
      }
      return (received, nil)
    }
    // Once the reader has taken the first chunk, its timeout for the second (the one for the
    // first, due at the same instant, is gone), and the stub's own wait of 61 seconds.
    var first = taken.makeAsyncIterator()
    _ = await first.next()  // `nil` if the stream failed first: the checks below say how
    try #require(await clock.waitForSleeper(dueIn: .seconds(60)))
    try #require(await clock.waitForSleeper(dueIn: .seconds(61)))
    await clock.advance(by: .seconds(59))
    await clock.advance(by: .seconds(1))
    let (received, kind) = await stalled.cancellableValue
    #expect(received == 1)
    #expect(kind == .timedOut)
  }

  @Test func cancellingTheReadingTaskEndsWithCancelled() async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/events", .chunks([Data("a".utf8), Data("b".utf8)], interval: .seconds(3600)))
    let stream = try await client(stub).stream(Self.endpoint)
    let reader = Task {
      var iterator = stream.makeAsyncIterator()
      _ = try await iterator.next()
      return try await iterator.next()
    }
    try await Task.sleep(for: .milliseconds(10))
    reader.cancel()
    let error = await #expect(throws: APIError.self) { try await reader.cancellableValue }
    #expect(error?.kind == .cancelled)
  }

  /// A transport that implements only `send`, as third-party ones written before streaming do.
  struct BufferedOnly: Transport {
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
      HTTPResponse(status: 200, body: Data("whole body".utf8))
    }
  }

  @Test func aTransportWithOnlySendStreamsItsBodyAsOneChunk() async throws {
    var chunks: [Data] = []
    for try await chunk in try await client(BufferedOnly()).stream(Self.endpoint) {
      chunks.append(chunk)
    }
    #expect(chunks == [Data("whole body".utf8)])
    var endpoint = Self.endpoint
    endpoint.maximumResponseSize = 4
    let streamed = await #expect(throws: APIError.self) {
      for try await _ in try await client(BufferedOnly()).stream(endpoint) {}
    }
    #expect(streamed?.urlError?.code == .dataLengthExceedsMaximum)
    let buffered = await #expect(throws: APIError.self) {
      try await client(BufferedOnly()).send(endpoint)
    }
    #expect(buffered?.urlError?.code == .dataLengthExceedsMaximum)
  }
}
