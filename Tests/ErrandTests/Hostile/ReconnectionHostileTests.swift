import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Hostile probes of a reconnecting event stream: policies with absurd waits, an `id` with a
/// NUL, a `204` at once, a redirect loop, a budget of zero, and a cancellation while it waits.
/// Each asserts that the stream neither spins, nor traps, nor reports its end twice.
@Suite(.timeLimit(.minutes(3))) struct ReconnectionHostileTests {
  static let feed = Endpoint<Data>(path: "feed", decoding: .data)

  /// A client on `clock` over `stub`, with an hour's timeout (no wait a probe looks for).
  static func client(_ stub: StubTransport, clock: TestClock) -> APIClient {
    APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(timeout: .seconds(3600), clock: clock))
  }

  /// Policies whose waits are negative, zero, below the floor or beyond what a clock can count:
  /// each wait is held between the floor and the maximum (itself between the floor and a day),
  /// doubling saturates instead of overflowing, and the stream gives up as told.
  @Test(arguments: [
    (Duration.seconds(-5), Duration.seconds(-1), [Duration.milliseconds(500), .milliseconds(500)]),
    (.zero, .zero, [.milliseconds(500), .milliseconds(500)]),
    (.milliseconds(1), .seconds(60), [.milliseconds(500), .seconds(1)]),
    (.seconds(1e20), .seconds(1.6e20), [.seconds(86_400), .seconds(86_400)]),
    (.seconds(Int64.max), .seconds(Int64.max), [.seconds(86_400), .seconds(86_400)]),
    (.seconds(40_000), .seconds(Int64.max), [.seconds(40_000), .seconds(80_000)]),
  ])
  func absurdPoliciesNeitherSpinNorTrap(
    initial: Duration, maximum: Duration, waits: [Duration]
  ) async throws {
    let clock = TestClock()
    let stub = StubTransport()
    await stub.on(.get, "/v1/feed", .connectionRefused)
    let policy = ReconnectPolicy(
      initialDelay: initial, maximumDelay: maximum, maximumAttempts: 2, jitter: false)
    let events = Self.client(stub, clock: clock).events(Self.feed, reconnect: policy)
    let reading = Task { for try await _ in events {} }
    for (index, wait) in waits.enumerated() {
      try #require(await clock.waitForSleeper(dueIn: wait))
      #expect(await stub.requests(matching: .any).count == index + 1)
      await clock.advance(by: wait)
    }
    let error = try await #require(throws: APIError.self) { try await reading.cancellableValue }
    #expect((error.underlyingError as? ReconnectionError)?.attempts == 2)
  }

  /// With jitter, a wait that backs off is drawn between half and all of its length, but never
  /// under the floor: with a maximum of 0.6 s, every wait after the first is between 0.5 and
  /// 0.6 s (half of 0.6 s would be under the floor).
  @Test func jitterNeverGoesUnderTheFloor() async throws {
    let clock = TestClock()
    let stub = StubTransport()
    await stub.on(.get, "/v1/feed", .connectionRefused)
    let (announced, announce) = AsyncStream.makeStream(of: Duration.self)
    let policy = ReconnectPolicy(
      initialDelay: .zero, maximumDelay: .milliseconds(600), maximumAttempts: 30)
    let events = Self.client(stub, clock: clock).events(Self.feed, reconnect: policy) { state in
      if case .reconnecting(let wait, _) = state { announce.yield(wait) }
    }
    let reading = Task { for try await _ in events {} }
    var waits: [Duration] = []
    for await wait in announced.prefix(30) {
      waits.append(wait)
      try #require(await clock.waitForSleeper(dueIn: wait))
      await clock.advance(by: wait)
    }
    _ = try? await reading.cancellableValue
    #expect(waits.first == .milliseconds(500))
    #expect(waits.allSatisfy { $0 >= .milliseconds(500) && $0 <= .milliseconds(600) }, "\(waits)")
  }

  /// An `id` with a NUL in it is ignored, as the standard says: the reconnection sends the
  /// last ID before it.
  @Test func anIDWithANULIsIgnored() async throws {
    let clock = TestClock()
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/feed",
      .sequence([
        .chunks(
          [Data("id: 1\ndata: a\n\nid: 2\0x\ndata: b\n\n".utf8)],
          headers: ["Content-Type": "text/event-stream"]),
        .status(204),
      ]))
    let events = Self.client(stub, clock: clock).events(Self.feed, reconnect: .default)
    let reading = Task { try await events.reduce(into: []) { $0.append($1.id) } }
    try #require(await clock.waitForSleeper(dueIn: .seconds(3)))
    await clock.advance(by: .seconds(3))
    #expect(try await reading.cancellableValue == ["1", "1"])
    let sent = await stub.requests(matching: .any)
    #expect(sent.map { $0.headers["Last-Event-ID"] } == [nil, "1"])
  }

  /// Answers that end the stream at once, without a wait or a second request: a `204` (closed),
  /// a redirect loop (futile to repeat, as the standard lets a client decide), and any failure
  /// under a budget of zero failed reconnections.
  @Test(arguments: [
    ("204", StubResponse.status(204), ReconnectPolicy.default),
    ("redirect loop", .error(URLError(.httpTooManyRedirects)), .default),
    ("refused, budget 0", .connectionRefused, ReconnectPolicy(maximumAttempts: 0)),
    ("empty stream, budget 0", .events([]), ReconnectPolicy(maximumAttempts: 0)),
  ])
  func answersThatEndTheStreamAtOnce(
    name: String, answer: StubResponse, policy: ReconnectPolicy
  ) async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/feed", answer)
    let states = Locked<[String]>([])
    let events = Self.client(stub, clock: TestClock()).events(Self.feed, reconnect: policy) {
      state in states.withLock { $0.append("\(state)".prefix(while: { $0 != "(" }).description) }
    }
    let outcome = Locked<Result<Int, any Error>?>(nil)
    let ended = await returnsInTime(seconds: 60) {
      let result = await Task { try await events.reduce(0) { count, _ in count + 1 } }.result
      outcome.withLock { $0 = result }
      return true
    }
    try #require(ended, "the stream did not end at once")
    let result = try #require(outcome.withLock { $0 })
    #expect(await stub.requests(matching: .any).count == 1)
    let told = states.withLock { $0 }
    switch name {
    case "204":
      #expect(try result.get() == 0)
      #expect(told == ["closed"])
    case "redirect loop":
      #expect(throws: APIError.self) { try result.get() }
      #expect(told == ["failed"])
    default:
      let error = try #require(throws: APIError.self) { try result.get() }
      #expect((error.underlyingError as? ReconnectionError)?.attempts == 0)
      #expect(
        error.localizedDescription.contains("gave up on the event stream without reconnecting"))
      #expect(told.filter { $0 == "failed" }.count == 1)
      #expect(!told.contains("reconnecting"))
    }
  }

  /// Cancelling the reading task while it waits to reconnect ends the stream once: one
  /// `.failed` state, with the cancellation.
  @Test func cancellingWhileItWaitsIsToldOnce() async throws {
    let clock = TestClock()
    let stub = StubTransport()
    await stub.on(.get, "/v1/feed", .events([]))
    let states = Locked<[ConnectionState]>([])
    let events = Self.client(stub, clock: clock).events(Self.feed, reconnect: .default) {
      state in states.withLock { $0.append(state) }
    }
    let reading = Task { for try await _ in events {} }
    try #require(await clock.waitForSleeper(dueIn: .seconds(3)))
    reading.cancel()
    let error = await #expect(throws: APIError.self) { try await reading.value }
    #expect(error?.kind == .cancelled)
    let failed = states.withLock { $0 }.compactMap { state -> APIError.Kind? in
      if case .failed(let error) = state { error.kind } else { nil }
    }
    #expect(failed == [.cancelled])
  }
}
