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
@Suite(.timeLimit(.minutes(2))) struct ReconnectionOverSocketTests {
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
}
