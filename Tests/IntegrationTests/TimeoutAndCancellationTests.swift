import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Deadlines fire on time, and cancellation ends the call and the connection.
@Suite struct TimeoutAndCancellationTests {
  /// How long a call took and what it threw.
  private func timedFailure(_ call: @escaping @Sendable () async throws -> Void) async -> (
    Duration, APIError?
  ) {
    let clock = ContinuousClock()
    let start = clock.now
    let error = await #expect(throws: APIError.self) { try await call() }
    return (clock.now - start, error)
  }

  /// The one wall-clock deadline test; the rest run on a test clock (see `DeadlineTests`), which
  /// checks that deadlines fire exactly on time. Here: never early, and long before the server
  /// would answer (the upper bound allows for a machine busy with the other suites).
  @Test func endpointTimeoutFiresOnTheWallClock() async throws {
    let limit = Duration.seconds(1)
    let server = try LoopbackServer { _ in ScriptedResponse(delayBeforeHeaders: .seconds(20)) }
    defer { server.stop() }
    let client = liveClient(server.baseURL)
    let (elapsed, error) = await timedFailure {
      _ = try await client.send(Endpoint<Data>(path: "slow", timeout: limit))
    }
    #expect(error?.kind == .timedOut, "\(String(describing: error))")
    #expect(elapsed >= limit)
    #expect(elapsed < limit * 3, "took \(elapsed)")
  }

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
    let (_, error) = await timedFailure { _ = try await client.send(Endpoint<Data>(path: "slow")) }
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
    let clock = ContinuousClock()
    let start = clock.now
    call.cancel()
    let error = await call.value
    let elapsed = clock.now - start
    #expect(error?.kind == .cancelled, "\(String(describing: error))")
    // Far below the server's 20 s: the call does not wait for the server (generous, because a
    // loaded machine can take a few hundred milliseconds to schedule the cancelled task).
    #expect(elapsed < .seconds(5), "took \(elapsed)")
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
