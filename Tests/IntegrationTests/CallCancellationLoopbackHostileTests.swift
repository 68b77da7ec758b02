import Errand
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// Probes of `cancelAll()` against calls that run in their caller's task over real sockets, on
/// every transport: raced against calls starting and ending, and made between two of a call's
/// waits. A call counted is never sent afterwards, and the count is the calls that end cancelled.
@Suite(.timeLimit(.minutes(3))) struct CallCancellationLoopbackHostileTests {
  /// Calls answered at once, with `cancelAll()` made among them from another task, round after
  /// round: the counts add up to the calls that threw `.cancelled`, every other call gets its
  /// answer, and none is left listed.
  @Test(arguments: TransportKind.allCases)
  func theCountsAreTheCallsThatEndCancelled(_ kind: TransportKind) async throws {
    let server = try LoopbackServer { _ in ScriptedResponse(body: Data("ok".utf8)) }
    defer { server.stop() }
    let client = kind.client(server.baseURL, configuration: APIClient.Configuration(timeout: nil))
    let endpoint = Endpoint<Data>(path: "dogs", decoding: .data)
    for round in 0..<TestSize.count(small: 10, full: 100) {
      let outcomes = Locked((cancelled: 0, succeeded: 0, other: [String]()))
      let counted = Locked(0)
      await withTaskGroup(of: Void.self) { group in
        for _ in 0..<12 {
          group.addTask {
            do {
              let data = try await client.send(endpoint)
              outcomes.withLock {
                if data == Data("ok".utf8) { $0.succeeded += 1 } else { $0.other.append("\(data)") }
              }
            } catch let error as APIError where error.kind == .cancelled {
              outcomes.withLock { $0.cancelled += 1 }
            } catch {
              outcomes.withLock { $0.other.append("\(error)") }
            }
          }
        }
        group.addTask {
          for _ in 0..<4 {
            await Task.yield()
            let count = client.cancelAll()
            counted.withLock { $0 += count }
          }
        }
      }
      let ended = outcomes.withLock { $0 }
      #expect(ended.other.isEmpty, "round \(round): \(ended.other)")
      #expect(ended.cancelled + ended.succeeded == 12, "round \(round)")
      #expect(counted.withLock { $0 } == ended.cancelled, "round \(round)")
      #expect(client.inFlight.isEmpty, "round \(round)")
    }
  }

  /// A call its client cancels between two of its waits (while a middleware of Errand's asks
  /// the app for the trace context) never reaches the server.
  @Test(arguments: TransportKind.allCases)
  func aCallCancelledBetweenItsWaitsNeverReachesTheServer(_ kind: TransportKind) async throws {
    let server = try LoopbackServer { _ in ScriptedResponse(body: Data("ok".utf8)) }
    defer { server.stop() }
    let late = LateClient()
    let trace = TraceContextMiddleware {
      late.cancelAll()
      return nil
    }
    let client = kind.client(
      server.baseURL, configuration: APIClient.Configuration(timeout: nil, middleware: [trace]))
    late.client = client
    let error = await #expect(throws: APIError.self) {
      try await client.send(Endpoint<Data>(path: "dogs", decoding: .data))
    }
    #expect(error?.kind == .cancelled)
    #expect(late.cancelled == [1])
    // A request sent after all would have reached the server before this one.
    let control = APIClient(
      baseURL: server.baseURL, transport: kind.make(),
      configuration: APIClient.Configuration(timeout: nil))
    #expect(
      try await control.send(Endpoint<Data>(path: "control", decoding: .data)) == Data("ok".utf8))
    #expect(server.requests.map(\.path) == ["/control"])
  }
}
