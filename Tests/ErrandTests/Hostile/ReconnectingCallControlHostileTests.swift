import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Probes of `cancelAll()` against event streams that reconnect: make one miss a stream whose
/// first request is being made or whose first attempt failed, make a stream reconnect after
/// it, or make it end a loop started after it on the same stream.
@Suite(.timeLimit(.minutes(3))) struct ReconnectingCallControlHostileTests {
  static func client(_ stub: StubTransport, clock: TestClock) -> APIClient {
    APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(timeout: nil, clock: clock))
  }

  static let feed = Endpoint<Data>(path: "feed", decoding: .data)
  static let sse: HTTPHeaders = ["Content-Type": "text/event-stream"]

  /// `cancelAll()` while the stream's first request is being made (the endpoint closure
  /// fetching a cursor) ends the stream: the loop had started, so it is counted, and nothing is
  /// sent.
  @Test func cancelAllWhileTheFirstEndpointIsMadeEndsTheStream() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.any, .status(204))
    let late = LateClient()
    let client = Self.client(stub, clock: clock)
    late.client = client
    let events = client.events(reconnect: ReconnectPolicy(jitter: false)) { _ in
      late.cancelAll()
      return Self.feed
    }
    let error = await #expect(throws: APIError.self) { for try await _ in events {} }
    #expect(error?.kind == .cancelled)
    // The endpoint closure runs in a task of its own, which the stream does not wait for once
    // stopped: the stream can end before `cancelAll()` has returned inside the closure.
    #expect(await eventually { late.cancelled == [1] })
    #expect(await stub.requests.isEmpty)
    #expect(client.inFlight.isEmpty)
  }

  /// An endpoint closure that waits without looking at cancellation (a cursor fetch that does
  /// not check) does not hold the stream: `cancelAll()`, or the reader's task being cancelled,
  /// ends the loop at once, and what the closure makes later is never sent.
  @Test(arguments: [false, true])
  func anEndpointClosureThatIgnoresCancellationDoesNotHoldTheStream(byCancelAll: Bool)
    async throws
  {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.any, .status(204))
    let client = Self.client(stub, clock: clock)
    let gate = AsyncGate()
    let entered = Locked(false)
    let events = client.events(reconnect: ReconnectPolicy(jitter: false)) { _ in
      entered.withLock { $0 = true }
      await gate.wait()
      return Self.feed
    }
    let reading = Task { for try await _ in events {} }
    #expect(await eventually { entered.withLock { $0 } })
    if byCancelAll {
      #expect(client.cancelAll() == 1)
    } else {
      reading.cancel()
    }
    let ended = await returnsInTime(seconds: 60) {
      _ = try? await reading.value
      return true
    }
    #expect(ended, "the loop waited for an endpoint closure that ignores cancellation")
    await gate.open()
    #expect(await stub.requests.isEmpty)
  }

  /// A stream whose first endpoint failed with a timeout (a cursor fetch that timed out) waits
  /// to try again: it is listed while it waits, `cancelAll()` ends it, and it never connects,
  /// however far the clock goes.
  @Test func aStreamWaitingAfterItsFirstEndpointFailedIsEndedAndNeverConnects() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.any, .status(204))
    let client = Self.client(stub, clock: clock)
    let made = Locked(0)
    let events = client.events(reconnect: ReconnectPolicy(jitter: false)) { attempt in
      made.withLock { $0 += 1 }
      if attempt.connection == 1 { throw APIError.timedOut }
      return Self.feed
    }
    let reading = Task { for try await _ in events {} }
    defer { reading.cancel() }
    try #require(await clock.waitForSleeper(dueIn: .seconds(3)))
    #expect(client.inFlight.map(\.kind) == [.eventStream])
    #expect(client.cancelAll() == 1)
    // Were the wait not ended, this would make the stream connect (and end at the 204).
    await clock.advance(by: .seconds(3))
    await expectCancelled(reading)
    #expect(made.withLock { $0 } == 1)
    #expect(await stub.requests.isEmpty)
    #expect(client.inFlight.isEmpty)
  }

  /// A stream its client cancelled can be read again by a new loop, started after the cancel:
  /// that loop connects and reads, as any call started after `cancelAll()` runs.
  @Test func aLoopStartedAfterCancelAllOnTheSameStreamRuns() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(
      .any,
      .sequence([
        .stalledAfterHeaders(body: Data("data: 1\n\n".utf8), headers: Self.sse),
        .stalledAfterHeaders(body: Data("data: 2\n\n".utf8), headers: Self.sse),
      ]))
    let client = Self.client(stub, clock: clock)
    let events = client.events(Self.feed, reconnect: ReconnectPolicy(jitter: false))
    let first = Task { for try await _ in events {} }
    defer { first.cancel() }
    _ = try await stub.nextRequest()
    #expect(await eventually { client.inFlight.count == 2 })
    #expect(client.cancelAll() == 2)
    await expectCancelled(first)
    var again = events.makeAsyncIterator()
    let event = try await again.next()
    #expect(event?.data == "2")
    #expect(await stub.requests.count == 2)
  }

  /// `cancelAll()` while the stream waits to reconnect ends it, and nothing is sent when the
  /// wait would have ended.
  @Test func cancelAllDuringAReconnectWaitNeverReconnects() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.any, .events([ServerSentEvent(data: "1")]))
    let client = Self.client(stub, clock: clock)
    let reading = Task {
      for try await _ in client.events(Self.feed, reconnect: ReconnectPolicy(jitter: false)) {}
    }
    defer { reading.cancel() }
    try #require(await clock.waitForSleeper(dueIn: .seconds(3)))
    #expect(client.inFlight.map(\.kind) == [.eventStream])
    #expect(client.cancelAll() == 1)
    await expectCancelled(reading)
    await clock.advance(by: .seconds(60))
    #expect(await stub.requests.count == 1)
    #expect(client.inFlight.isEmpty)
  }

  /// `cancelAll()` made from the stream's own state callback, as it says it will reconnect,
  /// ends it at once: no wait, no reconnection.
  @Test func cancelAllFromTheStateCallbackEndsTheStream() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.any, .events([ServerSentEvent(data: "1")]))
    let late = LateClient()
    let client = Self.client(stub, clock: clock)
    late.client = client
    let events = client.events(Self.feed, reconnect: ReconnectPolicy(jitter: false)) { state in
      if case .reconnecting = state { late.cancelAll() }
    }
    let error = await #expect(throws: APIError.self) { for try await _ in events {} }
    #expect(error?.kind == .cancelled)
    #expect(late.cancelled == [1])
    #expect(await stub.requests.count == 1)
    #expect(client.inFlight.isEmpty)
  }
}
