import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// One row per way a server can misbehave, each ending in the right `APIError`, over a real
/// socket. How soon the deadline rows end is `WallClockTests`' to check; here every other row has
/// a deadline far beyond its fault, so that a busy machine cannot turn it into `.timedOut`.
@Suite(.timeLimit(.minutes(3))) struct FaultMatrixTests {
  struct Fault: Sendable, CustomTestStringConvertible {
    var name: String
    var script: @Sendable (RecordedRequest) -> ScriptedResponse
    var kind: APIError.Kind?
    var codes: Set<URLError.Code> = []
    var timeout: Duration = .seconds(60)
    var maximumResponseSize: Int? = nil
    var testDescription: String { name }
  }

  static let faults: [Fault] = [
    Fault(
      name: "empty reply", script: { _ in ScriptedResponse(ending: .closeWithoutResponse) },
      kind: .transport, codes: [.badServerResponse, .networkConnectionLost]),
    Fault(
      name: "invalid status line", script: { _ in .raw("GARBAGE\r\n\r\n") },
      kind: .transport, codes: [.badServerResponse]),
    Fault(
      name: "bad chunk size",
      script: { _ in
        .raw(
          "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nZZ\r\nabc\r\n0\r\n\r\n"
        )
      },
      kind: .transport, codes: [.badServerResponse]),
    Fault(
      name: "1xx then 200",
      script: { _ in
        .raw(
          "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
        )
      },
      kind: nil),
    Fault(
      name: "gzip that is not gzip",
      script: { _ in
        .raw(
          "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 8\r\nConnection: close\r\n\r\nnot gzip"
        )
      },
      kind: .transport, codes: [.cannotDecodeContentData]),
    Fault(
      name: "reset mid-body",
      script: { _ in
        ScriptedResponse(body: patternBytes(200_000), ending: .resetAfterBodyBytes(50_000))
      },
      kind: .transport, codes: [.networkConnectionLost]),
    Fault(
      name: "closed mid-body",
      script: { _ in
        ScriptedResponse(body: patternBytes(200_000), ending: .closeAfterBodyBytes(50_000))
      },
      kind: .transport, codes: [.networkConnectionLost]),
    Fault(
      name: "chunked, dropped mid-body",
      script: { _ in
        ScriptedResponse(
          body: patternBytes(200_000), chunkSize: 10_000, ending: .closeAfterBodyBytes(50_000))
      },
      kind: .transport, codes: [.networkConnectionLost]),
    Fault(
      name: "headers, then a stall",
      script: { _ in
        ScriptedResponse(body: patternBytes(1_000), delayMidBody: .seconds(30))
      }, kind: .timedOut, timeout: .seconds(1)),
    Fault(
      name: "slow headers", script: { _ in ScriptedResponse(delayBeforeHeaders: .seconds(30)) },
      kind: .timedOut, timeout: .seconds(1)),
    Fault(
      name: "conflicting Content-Length",
      script: { _ in
        .raw(
          "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc"
        )
      },
      kind: .transport, codes: [.badServerResponse]),
    Fault(
      name: "body over the limit", script: { _ in ScriptedResponse(body: patternBytes(100_000)) },
      kind: .transport, codes: [.dataLengthExceedsMaximum], maximumResponseSize: 10_000),
    Fault(
      name: "redirect to file:",
      script: { _ in ScriptedResponse(status: 302, headers: [("Location", "file:///etc/passwd")]) },
      kind: .transport),
    Fault(
      name: "redirect loop",
      script: { request in .redirect(to: URL(string: "/loop\(request.path.count)")!) },
      kind: .transport, codes: [.httpTooManyRedirects]),
    Fault(
      name: "401 with a challenge",
      script: { _ in ScriptedResponse(status: 401, headers: [("WWW-Authenticate", "Bearer")]) },
      kind: .unacceptableStatus),
  ]

  @Test(arguments: faults, TransportKind.allCases)
  func endsInTheRightError(_ fault: Fault, _ transport: TransportKind) async throws {
    let server = try LoopbackServer(fault.script)
    defer { server.stop() }
    var endpoint = Endpoint<Data>(path: "fault", timeout: fault.timeout, decoding: .data)
    endpoint.maximumResponseSize = fault.maximumResponseSize
    let outcome: Result<Data, APIError>
    do {
      outcome = .success(try await transport.client(server.baseURL).send(endpoint))
    } catch let error as APIError {
      outcome = .failure(error)
    }
    switch (outcome, fault.kind) {
    case (.success(let body), nil):
      #expect(body == Data("ok".utf8))
    case (.failure(let error), let kind?):
      #expect(error.kind == kind, "\(error)")
      if !fault.codes.isEmpty {
        #expect(error.urlError.map { fault.codes.contains($0.code) } == true, "\(error)")
      }
    case (.success, let kind?):
      Issue.record("expected \(kind), got a response")
    case (.failure(let error), nil):
      Issue.record("expected a response, got \(error)")
    }
  }

  @Test(arguments: TransportKind.allCases)
  func aRefusedConnectionIsATransportError(_ transport: TransportKind) async throws {
    let refusing = try RefusingPort()
    let error = await #expect(throws: APIError.self) {
      _ = try await transport.client(refusing.url).send(Endpoint<Data>(path: "x", decoding: .data))
    }
    #expect(error?.urlError?.code == .cannotConnectToHost)
  }

  /// 10 KB of gzip that inflates to 10 MB: the limit counts the bytes after decoding.
  @Test(arguments: [(1_000_000, false), (20_000_000, true)], TransportKind.allCases)
  func theSizeLimitCountsDecodedBytes(limit: (Int, Bool), _ transport: TransportKind) async throws {
    let (limit, fits) = limit
    let compressed = try Fixtures.nearest().data("zeros-10mb.gz")
    let server = try LoopbackServer { _ in
      ScriptedResponse(headers: [("Content-Encoding", "gzip")], body: compressed)
    }
    defer { server.stop() }
    var endpoint = Endpoint<Data>(path: "bomb", decoding: .data)
    endpoint.maximumResponseSize = limit
    if fits {
      let body = try await transport.client(server.baseURL).send(endpoint)
      #expect(body.count == 10 * 1024 * 1024)
    } else {
      let error = await #expect(throws: APIError.self) {
        try await transport.client(server.baseURL).send(endpoint)
      }
      #expect(error?.urlError?.code == .dataLengthExceedsMaximum)
    }
  }
}
