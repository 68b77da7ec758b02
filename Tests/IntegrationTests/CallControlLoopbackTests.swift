import Errand
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// `cancelAll()` over real sockets, on every transport: each call ends with `.cancelled` at once,
/// and the server sees each connection closed.
@Suite(.timeLimit(.minutes(2))) struct CallControlLoopbackTests {
  @Test(arguments: TransportKind.allCases)
  func cancelAllClosesEverySocket(_ kind: TransportKind) async throws {
    // Buffered calls wait for a head that takes a minute; streamed ones for the second half of a
    // body that pauses for a minute.
    let server = try LoopbackServer { request in
      request.path == "/slow"
        ? ScriptedResponse(body: Data("late".utf8), delayBeforeHeaders: .seconds(60))
        : ScriptedResponse(body: Data(count: 64 << 10), delayMidBody: .seconds(60))
    }
    defer { server.stop() }
    let client = kind.client(server.baseURL, configuration: APIClient.Configuration(timeout: nil))
    // Within every transport's connections per host (16 for CurlTransport), so that each call
    // has its socket.
    let count = 7
    let buffered = (0..<count).map { _ in
      Task { try await client.send(Endpoint<Data>(path: "slow", decoding: .data)) }
    }
    let streamed = (0..<count).map { _ in
      Task { try await client.stream(Endpoint<Data>(path: "paused", decoding: .data)).collect() }
    }
    defer { for call in buffered + streamed { call.cancel() } }
    #expect(await server.waitForRequests(2 * count))
    #expect(await eventually { client.inFlight.count == 2 * count })
    #expect(client.cancelAll() == 2 * count)
    for call in buffered + streamed {
      let error = await #expect(throws: APIError.self) { _ = try await call.value }
      #expect(error?.kind == .cancelled)
    }
    #expect(client.inFlight.isEmpty)
    #expect(await eventually { server.earlyDisconnects == 2 * count }, "every socket closed")
  }
}
