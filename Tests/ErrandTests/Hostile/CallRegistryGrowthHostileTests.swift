import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Probes of the client's list of calls as an attacker would try to fill it: every way a call
/// can end (refused, cut short, left early, dropped unread, cancelled by its caller, a
/// reconnecting stream left mid-wait or between events) must leave `inFlight`, or a long-lived
/// client grows for ever and `cancelAll()` keeps ending calls that are gone.
@Suite(.timeLimit(.minutes(3))) struct CallRegistryGrowthHostileTests {
  /// A way for a call to end that is not reading its answer to the end.
  enum Ending: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case streamRefused, streamDroppedUnread, linesLeftEarly, downloadRefused, downloadCutShort
    case downloadToAFolder, pagesLeftEarly, eventsCutShort, callbackCancelled
    case reconnectingLoopCancelledMidWait, reconnectingIteratorDroppedBetweenEvents
    case reconnectingGaveUp
    var testDescription: String { rawValue }

    /// The stub's answer to every request.
    var answer: StubResponse {
      switch self {
      case .streamRefused, .downloadRefused:
        .status(500, body: Data("down".utf8))
      case .streamDroppedUnread, .linesLeftEarly:
        .stalledAfterHeaders(body: Data("a\nb\n".utf8))
      case .downloadCutShort, .eventsCutShort:
        .chunks(
          [Data("data: a\n\n".utf8)], headers: ["Content-Type": "text/event-stream"],
          failingWith: URLError(.networkConnectionLost))
      case .downloadToAFolder:
        .status(200)
      case .pagesLeftEarly:
        .status(
          200, body: Data("[]".utf8),
          headers: ["Link": "<https://api.example.com/v1/feed?page=2>; rel=next"])
      case .callbackCancelled:
        .hang
      case .reconnectingLoopCancelledMidWait, .reconnectingGaveUp:
        .error(URLError(.cannotConnectToHost))
      case .reconnectingIteratorDroppedBetweenEvents:
        .stalledAfterHeaders(
          body: Data("data: a\n\n".utf8), headers: ["Content-Type": "text/event-stream"])
      }
    }

    /// End a call this way on `client`, whose clock is `clock`.
    func end(on client: APIClient, clock: TestClock) async throws {
      let feed = Endpoint<Data>(path: "feed", decoding: .data)
      switch self {
      case .streamRefused:
        await #expect(throws: APIError.self) { _ = try await client.stream(feed) }
      case .streamDroppedUnread:
        let stream = try await client.stream(feed)
        #expect(client.inFlight.count == 1)
        _ = stream.response
      case .linesLeftEarly:
        for try await _ in try await client.stream(feed).lines { break }
      case .downloadRefused, .downloadCutShort:
        let file = FileManager.default.temporaryDirectory
          .appendingPathComponent("errand-growth-\(UUID().uuidString)")
        await #expect(throws: APIError.self) { _ = try await client.download(feed, to: file) }
      case .downloadToAFolder:
        await #expect(throws: APIError.self) {
          _ = try await client.download(feed, to: FileManager.default.temporaryDirectory)
        }
      case .pagesLeftEarly:
        for try await _ in client.pages(Endpoint<[Int]>(path: "feed")) { break }
      case .eventsCutShort:
        await #expect(throws: APIError.self) {
          for try await _ in try await client.events(feed) {}
        }
      case .callbackCancelled:
        let handle = Locked<RequestHandle?>(nil)
        let result = await withCheckedContinuation { continuation in
          handle.withLock {
            $0 = client.send(feed, queue: .global()) { continuation.resume(returning: $0) }
          }
          Task {
            _ = await eventually { client.inFlight.count == 1 }
            handle.withLock { $0 }?.cancel()
          }
        }
        #expect(throws: APIError.self) { try result.get() }
      case .reconnectingLoopCancelledMidWait:
        let reading = Task {
          for try await _ in client.events(feed, reconnect: ReconnectPolicy(jitter: false)) {}
        }
        try #require(await clock.waitForSleeper(dueIn: .seconds(3)))
        reading.cancel()
        await #expect(throws: APIError.self) { try await reading.value }
      case .reconnectingIteratorDroppedBetweenEvents:
        var events = client.events(feed, reconnect: .default).makeAsyncIterator()
        #expect(try await events.next()?.data == "a")
        #expect(client.inFlight.count == 2)
      case .reconnectingGaveUp:
        let reading = Task {
          for try await _ in client.events(
            feed, reconnect: ReconnectPolicy(maximumAttempts: 1, jitter: false))
          {}
        }
        try #require(await clock.waitForSleeper(dueIn: .seconds(3)))
        await clock.advance(by: .seconds(3))
        await #expect(throws: APIError.self) { try await reading.cancellableValue }
      }
    }
  }

  /// Whatever way a call ends, it is no longer listed once it has ended, and `cancelAll()`
  /// counts nothing.
  @Test(arguments: Ending.allCases)
  func aCallThatEndedIsNotListed(_ ending: Ending) async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.any, ending.answer)
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(timeout: nil, clock: clock))
    try await ending.end(on: client, clock: clock)
    #expect(client.inFlight.isEmpty)
    #expect(client.cancelAll() == 0)
  }
}
