import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// A server that ends the connection after every event and resumes from `Last-Event-ID`: a
/// reconnecting stream reads every event exactly once, through every transport. The waits
/// between connections (at least half a second, growing as each connection ends at once) run
/// on a `TestClock`, advanced as each is announced.
@Suite(.timeLimit(.minutes(3))) struct ReconnectionOverSocketTests {
  static let count = 100

  @Test(arguments: TransportKind.allCases)
  func everyEventArrivesOnceAcrossAHundredConnections(_ transport: TransportKind) async throws {
    let server = try LoopbackServer { request in
      let last = request.headers["Last-Event-ID"].flatMap { Int($0) } ?? 0
      guard last < Self.count else { return ScriptedResponse(status: 204) }
      // `retry: 0`: reconnect as soon as allowed. The body has a length, so each connection
      // ends cleanly.
      let next = last + 1
      return ScriptedResponse(
        headers: [("Content-Type", "text/event-stream")],
        body: Data("retry: 0\nid: \(next)\ndata: event \(next)\n\n".utf8))
    }
    defer { server.stop() }
    let clock = TestClock()
    let states = Locked<[ConnectionState]>([])
    let (waits, announce) = AsyncStream.makeStream(of: Duration.self)
    // A timeout of an hour: no sleeper of a call is due in a wait the test looks for.
    let configuration = APIClient.Configuration(timeout: .seconds(3600), clock: clock)
    let events = transport.client(server.baseURL, configuration: configuration).events(
      Endpoint<Data>(path: "feed", decoding: .data), reconnect: .default
    ) { state in
      states.withLock { $0.append(state) }
      if case .reconnecting(let wait, _) = state { announce.yield(wait) }
      if case .closed = state { announce.finish() }
    }
    let advancing = Task {
      for await wait in waits {
        guard await clock.waitForSleeper(dueIn: wait) else { return }
        await clock.advance(by: wait)
      }
    }
    defer { advancing.cancel() }
    var received: [String] = []
    for try await event in events { received.append(event.data) }
    #expect(received == (1...Self.count).map { "event \($0)" })
    #expect(server.requests.count == Self.count + 1)
    #expect(server.requests.first?.headers["Last-Event-ID"] == nil)
    #expect(server.requests.last?.headers["Last-Event-ID"] == "\(Self.count)")
    let connected = states.withLock { $0 }.filter {
      if case .connected = $0 { true } else { false }
    }
    #expect(connected.count == Self.count)
  }

  /// Servers that make a reconnecting stream end, or back off and give up, over real sockets.
  enum Ending: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// Every connection is closed before the head.
    case closesBeforeTheHead
    /// Every answer is an event stream with no event in it.
    case emptyStreams
    /// Every answer redirects to another path of the server, for ever.
    case redirectLoop
    /// `204 No Content`.
    case noContent

    var testDescription: String { rawValue }

    func answer(_ request: RecordedRequest) -> ScriptedResponse {
      switch self {
      case .closesBeforeTheHead: ScriptedResponse(ending: .closeWithoutResponse)
      case .emptyStreams:
        ScriptedResponse(
          headers: [("Content-Type", "text/event-stream")], body: Data(": nothing\n\n".utf8))
      case .redirectLoop: .redirect(to: URL(string: "/loop\(request.path.count)")!)
      case .noContent: ScriptedResponse(status: 204)
      }
    }
  }

  /// A server that fails every connection (closing before the head, or answering with no event)
  /// gets the first connection and two reconnections, 3 then 6 seconds apart, then the stream
  /// gives up, once; a redirect loop and a `204` end the stream at once, without a wait.
  @Test(arguments: Ending.allCases, TransportKind.allCases)
  func aServerThatNeverDeliversIsLeftAlone(_ ending: Ending, _ transport: TransportKind)
    async throws
  {
    let server = try LoopbackServer { request in ending.answer(request) }
    defer { server.stop() }
    let clock = TestClock()
    let states = Locked<[String]>([])
    let (waits, announce) = AsyncStream.makeStream(of: Duration.self)
    let configuration = APIClient.Configuration(timeout: .seconds(3600), clock: clock)
    let events = transport.client(server.baseURL, configuration: configuration).events(
      Endpoint<Data>(path: "feed", decoding: .data),
      reconnect: ReconnectPolicy(maximumAttempts: 2, jitter: false)
    ) { state in
      states.withLock { $0.append("\(state)".prefix { $0 != ":" }.description) }
      switch state {
      case .reconnecting(let wait, _): announce.yield(wait)
      case .closed, .failed: announce.finish()
      case .connected: break
      }
    }
    let advancing = Task {
      var seen: [Duration] = []
      for await wait in waits {
        seen.append(wait)
        guard await clock.waitForSleeper(dueIn: wait) else { break }
        await clock.advance(by: wait)
      }
      return seen
    }
    let outcome = await Task { try await events.reduce(0) { count, _ in count + 1 } }.result
    let announced = await advancing.value
    let told = states.withLock { $0 }
    switch ending {
    case .closesBeforeTheHead, .emptyStreams:
      #expect(announced == [.seconds(3), .seconds(6)])
      let error = try #require(throws: APIError.self) { try outcome.get() }
      #expect((error.underlyingError as? ReconnectionError)?.attempts == 2)
      #expect(server.requests.count == 3)
      #expect(told.filter { $0.hasPrefix("failed") }.count == 1)
    case .redirectLoop:
      #expect(announced.isEmpty)
      let error = try #require(throws: APIError.self) { try outcome.get() }
      #expect(error.urlError?.code == .httpTooManyRedirects)
      #expect(told.count == 1 && told[0].hasPrefix("failed"))
    case .noContent:
      #expect(announced.isEmpty)
      #expect(try outcome.get() == 0)
      #expect(told == ["closed"])
      #expect(server.requests.count == 1)
    }
  }
}
