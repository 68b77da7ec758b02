import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

/// The clauses of the WHATWG HTML standard's `EventSource` interface (§9.2.2) that a loop over
/// ``ReconnectingServerSentEvents`` stands for: the constructor's failure and `close()`.
@Suite(.timeLimit(.minutes(3))) struct EventSourceInterfaceTests {
  /// The constructor throws a `SyntaxError` for a URL it cannot parse: a request that cannot be
  /// made ends the stream with ``APIError/invalidRequest(_:)`` at once, nothing sent, no
  /// reconnection.
  @Test func aRequestThatCannotBeMadeFailsWithoutARequest() async throws {
    let stub = StubTransport()
    await stub.on(.any, .status(204))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(timeout: nil, clock: TestClock()))
    let states = Locked<[String]>([])
    let events = client.events(
      Endpoint<Data>(path: "feed/../admin", decoding: .data), reconnect: .default
    ) { state in states.withLock { $0.append("\(state)".prefix { $0 != "(" }.description) } }
    let error = await #expect(throws: APIError.self) {
      for try await _ in events {}
    }
    #expect(error?.kind == .invalidRequest)
    #expect(states.withLock { $0 } == ["failed"])
    #expect(await stub.requests.isEmpty)
  }

  /// `close()` aborts the fetch: leaving the loop cancels the open connection (its call ends
  /// cancelled) and lets it go.
  @Test func leavingTheLoopCancelsTheConnection() async throws {
    let listener = RecordingListener()
    let stub = StubTransport()
    await stub.on(
      .any,
      .stalledAfterHeaders(
        body: Data("data: a\n\n".utf8), headers: ["Content-Type": "text/event-stream"]))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        timeout: nil, clock: TestClock(), eventListeners: [listener]))
    let events = client.events(Endpoint<Data>(path: "feed", decoding: .data), reconnect: .default)
    for try await event in events {
      #expect(event.data == "a")
      break
    }
    let call = await listener.eventsOfOneCall()
    #expect(call.last?.kind.name == "callCancelled")
    #expect(events.restarts.registered == (connections: 0, waits: 0))
  }
}
