import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// Each fault preset of the stub kit ends a call the way the same fault does through
/// `URLSessionTransport` on a real socket: same `APIError` kind, same `URLError` code.
@Suite(.timeLimit(.minutes(3))) struct FaultPresetParityTests {
  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var preset: StubResponse
    var server: @Sendable (RecordedRequest) -> ScriptedResponse
    /// Short for the rows that stall, so that they end; none for the rest, which end by
    /// themselves and must not time out however busy the machine is (the suite's time limit
    /// catches a hang).
    var timeout: Duration?
    var testDescription: String { name }
  }

  static let json = Data(#"[{"name":"Rex"},{"name":"Bella"}]"#.utf8)

  static let rows: [Row] = [
    Row(
      name: "truncated JSON", preset: .truncated([Dog(name: "Rex"), Dog(name: "Bella")]),
      server: { _ in
        ScriptedResponse(
          headers: [("Content-Type", "application/json")], body: json,
          ending: .closeAfterBodyBytes(json.count / 2))
      }),
    Row(
      name: "dropped mid-body", preset: .droppedMidBody(patternBytes(10_000), keeping: 4_000),
      server: { _ in
        ScriptedResponse(
          body: patternBytes(10_000), chunkSize: 1_000, ending: .closeAfterBodyBytes(4_000))
      }),
    Row(
      name: "stalled after the headers", preset: .stalledAfterHeaders(body: Data("[".utf8)),
      server: { _ in ScriptedResponse(body: json, delayMidBody: .seconds(30)) },
      timeout: .seconds(1)),
    Row(
      name: "no answer at all", preset: .hang,
      server: { _ in ScriptedResponse(delayBeforeHeaders: .seconds(30)) }, timeout: .seconds(1)),
    Row(
      name: "a slow body", preset: .slowBody(json, chunkSize: 8, interval: .milliseconds(5)),
      server: { _ in ScriptedResponse(body: json, chunkSize: 8) }),
    Row(
      name: "not JSON", preset: .invalidJSON,
      server: { _ in .json("error") }),
    Row(
      name: "an error status", preset: .json(["error": "down"], status: 503),
      server: { _ in .json(#"{"error":"down"}"#, status: 503) }),
  ]

  static func outcome(_ client: APIClient) async -> String {
    do {
      let dogs = try await client.send(Endpoint<[Dog]>(path: "dogs"))
      return "\(dogs.count) dogs"
    } catch let error as APIError {
      return error.kind.rawValue + (error.urlError.map { " \($0.code.rawValue)" } ?? "")
        + (error.response.map { " \($0.status)" } ?? "")
    } catch {
      return "\(error)"
    }
  }

  @Test(arguments: rows)
  func endsTheWayTheRealFaultDoes(_ row: Row) async throws {
    let server = try LoopbackServer(row.server)
    defer { server.stop() }
    let configuration = APIClient.Configuration(timeout: row.timeout)
    let real = await Self.outcome(liveClient(server.baseURL, configuration: configuration))
    let stubbed = await Self.outcome(
      APIClient(
        baseURL: server.baseURL, transport: StubTransport { _ in row.preset },
        configuration: configuration))
    #expect(stubbed == real)
  }

  @Test func aRefusedConnectionToo() async throws {
    let refusing = try RefusingPort()
    let real = await Self.outcome(liveClient(refusing.url))
    let stubbed = await Self.outcome(
      APIClient(baseURL: refusing.url, transport: StubTransport { _ in .connectionRefused }))
    #expect(stubbed == real)
  }
}
