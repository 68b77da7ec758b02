import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// The second round of the fault matrix: what a server that lies or never stops does to a call,
/// over a real socket through every transport.
@Suite(.timeLimit(.minutes(3))) struct HostileServerTests {
  @Test(arguments: TransportKind.allCases)
  func aLineThatNeverEndsIsCapped(_ transport: TransportKind) async throws {
    let server = try LoopbackServer { _ in
      ScriptedResponse(
        headers: [("Content-Type", "text/plain")],
        body: Data("first\n".utf8) + Data(repeating: UInt8(ascii: "x"), count: 3_000_000),
        chunkSize: 64 * 1024)
    }
    defer { server.stop() }
    var lines: [String] = []
    let error = await #expect(throws: APIError.self) {
      let stream = try await transport.client(server.baseURL).stream(
        Endpoint<Data>(path: "feed", decoding: .data))
      for try await line in stream.lines { lines.append(line) }
    }
    #expect(lines == ["first"])
    #expect(
      error?.underlyingError as? LineTooLongError
        == LineTooLongError(unit: .line, limit: APIClient.Configuration.defaultMaximumLineLength))
  }

  /// A `Retry-After` past the call's deadline is not waited for. The deadline is on a
  /// `TestClock`, which nothing advances: with a real one-second deadline, on a loaded machine the
  /// request did not leave URLSession's shared queue before it passed (2 of 3 clean-clone runs).
  @Test(arguments: TransportKind.allCases)
  func aRetryAfterPastTheDeadlineIsNotWaitedFor(_ transport: TransportKind) async throws {
    let server = try LoopbackServer { _ in
      ScriptedResponse(status: 503, headers: [("Retry-After", "60")], body: Data("busy".utf8))
    }
    defer { server.stop() }
    let client = transport.client(
      server.baseURL,
      configuration: APIClient.Configuration(
        timeout: .seconds(30), middleware: [RetryMiddleware(policy: RetryPolicy(maxAttempts: 3))],
        clock: TestClock()))
    let error = await #expect(throws: APIError.self) {
      try await client.send(Endpoint<Data>(path: "busy", decoding: .data))
    }
    #expect(error?.kind == .unacceptableStatus)
    #expect(error?.response?.retryPastDeadline == .seconds(60))
    #expect(server.requests.count == 1)
  }

  @Test(arguments: TransportKind.allCases)
  func aNextLinkInASecondLinkFieldIsFollowed(_ transport: TransportKind) async throws {
    let server = try LoopbackServer { request in
      guard request.target == "/dogs" else {
        return ScriptedResponse(
          headers: [("Content-Type", "application/json")], body: Data("[]".utf8))
      }
      return ScriptedResponse(
        headers: [
          ("Content-Type", "application/json"), ("Link", "</dogs?page=9>; rel=\"last\""),
          ("Link", "</dogs?page=2>; title=\"next; rel=prev\"; rel=\"next\""),
        ], body: Data("[]".utf8))
    }
    defer { server.stop() }
    var targets: [String] = []
    for try await page in transport.client(server.baseURL).pages(Endpoint<[Dog]>(path: "dogs")) {
      targets.append(page.request.url.path + (page.request.url.query.map { "?\($0)" } ?? ""))
    }
    #expect(targets == ["/dogs", "/dogs?page=2"])
  }

  @Test(arguments: TransportKind.allCases)
  func anUppercaseSchemeWorksOnEveryTransport(_ transport: TransportKind) async throws {
    let server = try LoopbackServer { _ in .text("fine") }
    defer { server.stop() }
    let base = try #require(URL(string: "HTTP://127.0.0.1:\(server.port)"))
    #expect(try await transport.client(base).send(Endpoint<String>(path: "x")) == "fine")
  }
}
