import Errand
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// `cancelAll()` over real sockets, on every transport: 100 calls, half buffered and half
/// streamed, each end with `.cancelled` at once, those that had a connection waiting in the
/// transport's queue too, and the server sees every connection it accepted closed.
@Suite(.timeLimit(.minutes(3))) struct CallControlLoopbackTests {
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
    // More than every transport's connections per host (16 for CurlTransport): the calls past
    // them wait in the transport for a connection.
    let count = 50
    let buffered = (0..<count).map { _ in
      Task { try await client.send(Endpoint<Data>(path: "slow", decoding: .data)) }
    }
    let streamed = (0..<count).map { _ in
      Task { try await client.stream(Endpoint<Data>(path: "paused", decoding: .data)).collect() }
    }
    defer { for call in buffered + streamed { call.cancel() } }
    // Some of each kind on the wire, and every call listed.
    #expect(await server.waitForRequests(2))
    #expect(await eventually { client.inFlight.count == 2 * count })
    #expect(client.cancelAll() == 2 * count)
    for call in buffered + streamed {
      let error = await #expect(throws: APIError.self) { _ = try await call.value }
      #expect(error?.kind == .cancelled)
    }
    #expect(client.inFlight.isEmpty)
    #expect(
      await eventually { server.earlyDisconnects == server.requests.count },
      "every socket closed: \(server.earlyDisconnects) of \(server.requests.count)")
  }
}
