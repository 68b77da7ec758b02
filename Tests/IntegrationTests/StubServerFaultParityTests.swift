import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// A fault a stub answers ends a call the same way in-process and over the stub server's socket:
/// the same `APIError` kind and status, through both production transports. One server per
/// transport; the rows run one after another.
@Suite(.timeLimit(.minutes(3))) struct StubServerFaultParityTests {
  struct Row: Sendable {
    var name: String
    var answer: StubResponse
    /// Short for the rows that stall, so that they end; none for the rest, which end by
    /// themselves and must not time out however busy the machine is.
    var timeout: Duration?
    /// What both calls end with.
    var expected: String
  }

  static let json = Data(#"[{"name":"Rex"},{"name":"Bella"}]"#.utf8)

  static let rows: [Row] = [
    Row(
      name: "dropped mid-body", answer: .droppedMidBody(patternBytes(10_000), keeping: 4_000),
      expected: "transport"),
    Row(
      name: "truncated JSON", answer: .truncated([Dog(name: "Rex"), Dog(name: "Bella")]),
      expected: "transport"),
    Row(
      name: "stalled after the headers", answer: .stalledAfterHeaders(body: Data("[".utf8)),
      timeout: .seconds(1), expected: "timedOut"),
    Row(name: "no answer at all", answer: .hang, timeout: .seconds(1), expected: "timedOut"),
    Row(name: "a timeout", answer: .timedOut, timeout: .seconds(1), expected: "timedOut"),
    Row(name: "a reset", answer: .connectionLost, expected: "transport"),
    Row(name: "offline", answer: .notConnected, expected: "transport"),
    Row(name: "refused", answer: .connectionRefused, expected: "transport"),
    Row(
      name: "not HTTP", answer: .error(URLError(.badServerResponse)), expected: "transport"),
    Row(
      name: "a slow body", answer: .slowBody(json, chunkSize: 8, interval: .milliseconds(5)),
      expected: "2 dogs"),
    Row(name: "not JSON", answer: .invalidJSON, expected: "decoding 200"),
    Row(
      name: "an error status", answer: .json(["error": "down"], status: 503),
      expected: "unacceptableStatus 503"),
  ]

  static func outcome(_ client: APIClient, path: String, timeout: Duration?) async -> String {
    do {
      let dogs = try await client.send(Endpoint<[Dog]>(path: path, timeout: timeout))
      return "\(dogs.count) dogs"
    } catch let error as APIError {
      return error.kind.rawValue + (error.response.map { " \($0.status)" } ?? "")
    } catch {
      return "\(error)"
    }
  }

  @Test(arguments: TransportKind.allCases)
  func eachFaultEndsTheCallAlikeInProcessAndOverTheSocket(_ kind: TransportKind) async throws {
    let stub = StubTransport()
    for (index, row) in Self.rows.enumerated() {
      await stub.on(.get, "/v1/row\(index)", row.answer)
    }
    let server = try LoopbackServer(serving: stub)
    defer { server.stop() }
    let inProcess = APIClient(baseURL: ChildApp.api, transport: stub)
    let overSocket = kind.client(server.url("/v1"))
    for (index, row) in Self.rows.enumerated() {
      let here = await Self.outcome(inProcess, path: "row\(index)", timeout: row.timeout)
      let there = await Self.outcome(overSocket, path: "row\(index)", timeout: row.timeout)
      #expect(here == row.expected, "\(row.name), in-process")
      #expect(there == row.expected, "\(row.name), over the socket")
    }
    #expect(await stub.unusedRoutes.isEmpty)
    #expect(await stub.unmatchedRequests.isEmpty)
  }
}
