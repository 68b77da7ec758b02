import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// URLSession's own timeout reads as `.timedOut`, and cancellation ends the call and the
/// connection. How soon deadlines fire is `WallClockTests`' to check.
@Suite(.timeLimit(.minutes(3))) struct TimeoutAndCancellationTests {
  /// URLSession's own request timeout (not Errand's deadline, which runs on the client's clock)
  /// fires on the wall clock; its `URLError(.timedOut)` must still read as `.timedOut`.
  @Test func sessionRequestTimeoutMapsToTimedOut() async throws {
    let server = try LoopbackServer { _ in ScriptedResponse(delayBeforeHeaders: .seconds(20)) }
    defer { server.stop() }
    let configuration = URLSessionTransport.defaultConfiguration()
    configuration.timeoutIntervalForRequest = 1
    let client = APIClient(
      baseURL: server.baseURL, transport: URLSessionTransport(configuration: configuration),
      configuration: APIClient.Configuration(timeout: nil))
    let error = await #expect(throws: APIError.self) {
      _ = try await client.send(Endpoint<Data>(path: "slow"))
    }
    #expect(error?.kind == .timedOut, "\(String(describing: error))")
  }

  @Test func cancellationEndsTheCallAndTheConnection() async throws {
    let server = try LoopbackServer { _ in ScriptedResponse(delayBeforeHeaders: .seconds(20)) }
    defer { server.stop() }
    let client = liveClient(server.baseURL)
    let call = Task {
      await #expect(throws: APIError.self) {
        _ = try await client.send(Endpoint<Data>(path: "slow"))
      }
    }
    #expect(await server.waitForRequests(1))
    call.cancel()
    // Had the call gone on, the server would have answered after 20 s and closed normally.
    let error = await call.value
    #expect(error?.kind == .cancelled, "\(String(describing: error))")
    #expect(await server.waitForEarlyDisconnect())
  }

  @Test func anAlreadyCancelledTaskEndsCancelled() async throws {
    let server = try LoopbackServer { _ in .text("late") }
    defer { server.stop() }
    let client = liveClient(server.baseURL)
    let call = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return await #expect(throws: APIError.self) {
        _ = try await client.send(Endpoint<String>(path: "x"))
      }
    }
    let error = await call.value
    #expect(error?.kind == .cancelled, "\(String(describing: error))")
  }
}
