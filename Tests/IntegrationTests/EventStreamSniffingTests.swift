import Errand
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// An event that comes before a long gap in the stream reaches the reader before the gap ends,
/// on every transport: nothing holds the start of a `text/event-stream` body back (URLSession on
/// Apple platforms may hold up to 512 bytes of a body to guess its type when the type does not
/// say; Errand relies on it not doing so for `text/event-stream`, which this runs on the macOS
/// workflow to check).
@Suite(.timeLimit(.minutes(3))) struct EventStreamSniffingTests {
  @Test(arguments: TransportKind.allCases)
  func anEventBeforeALongGapArrivesAtOnce(_ transport: TransportKind) async throws {
    // The first event (30 bytes), then an hour's wait before the rest: the test would time out
    // if the first event waited for more bytes.
    let first = "data: the first event, short\n\n"
    let rest = ":" + String(repeating: "x", count: first.utf8.count - 2) + "\n"
    let server = try LoopbackServer { _ in
      ScriptedResponse(
        headers: [("Content-Type", "text/event-stream")], body: Data((first + rest).utf8),
        delayMidBody: .seconds(3600))
    }
    defer { server.stop() }
    let client = transport.client(
      server.baseURL, configuration: APIClient.Configuration(timeout: nil))
    let events = try await client.events(Endpoint<Data>(path: "sse", decoding: .data))
    var iterator = events.makeAsyncIterator()
    let event = try await iterator.next()
    #expect(event?.data == "the first event, short")
    events.stream.cancel()
  }
}
