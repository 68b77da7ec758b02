import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// The stub server under clients and stubs that misbehave: requests built to smuggle a second
/// request past it, clients that hold connections or never read, reports that would send the
/// other process's secrets back, stubs that throw, never answer or answer what cannot be sent,
/// and a stop in the middle of it all.
@Suite(.timeLimit(.minutes(3))) struct StubServerHostileTests {
  /// What a raw client sends, and whether the server must refuse it (`400`, the stub never
  /// asked) or answer only its first request.
  struct Probe: Sendable {
    var name: String
    var bytes: String
    var refused: Bool
  }

  static let smuggled = "GET /v1/smuggled HTTP/1.1\r\nHost: x\r\n\r\n"

  static let probes: [Probe] = [
    Probe(
      name: "CL.TE",
      bytes: "POST /v1/a HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n"
        + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled,
      refused: true),
    Probe(
      name: "TE.CL",
      bytes: "POST /v1/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
        + "Content-Length: 3\r\n\r\n8\r\nSMUGGLED\r\n0\r\n\r\n",
      refused: true),
    Probe(
      name: "two Content-Lengths",
      bytes: "POST /v1/a HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 40\r\n\r\n"
        + smuggled,
      refused: true),
    Probe(
      name: "a Content-Length list",
      bytes: "POST /v1/a HTTP/1.1\r\nHost: x\r\nContent-Length: 0, 40\r\n\r\n" + smuggled,
      refused: true),
    Probe(
      name: "a transfer coding besides chunked",
      bytes: "POST /v1/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n"
        + "0\r\n\r\n" + smuggled,
      refused: true),
    Probe(
      name: "a space before the colon",
      bytes: "POST /v1/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n"
        + "Content-Length: 5\r\n\r\n0\r\n\r\n" + smuggled,
      refused: true),
    Probe(
      name: "obs-fold",
      bytes: "POST /v1/a HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n Transfer-Encoding: chunked\r\n"
        + "\r\n0\r\n\r\n" + smuggled,
      refused: true),
    Probe(
      name: "a huge head",
      bytes:
        "GET /v1/a HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 70_000))\r\n\r\n",
      refused: true),
    Probe(
      name: "a request line that ends with a CR alone",
      bytes: "POST /v1/a HTTP/1.1\rTransfer-Encoding:chunked\r\nHost: x\r\n\r\n0\r\n\r\n"
        + smuggled,
      refused: true),
    Probe(
      name: "a field that ends with an LF alone",
      bytes: "POST /v1/a HTTP/1.1\r\nHost: x\nTransfer-Encoding: chunked\r\n"
        + "Content-Length: 0\r\n\r\n" + smuggled,
      refused: true),
    Probe(
      name: "a NUL in a field",
      bytes: "GET /v1/a HTTP/1.1\r\nHost: x\r\nX-Nul: a\u{0}b\r\n\r\n",
      refused: true),
    Probe(
      name: "an absolute target",
      bytes: "GET http://evil.example/v1/a HTTP/1.1\r\nHost: x\r\n\r\n",
      refused: true),
    Probe(
      name: "a pipelined request", bytes: "GET /v1/a HTTP/1.1\r\nHost: x\r\n\r\n" + smuggled,
      refused: false),
    Probe(
      name: "a request after a chunked body",
      bytes: "POST /v1/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "2\r\nhi\r\n0\r\n\r\n" + smuggled,
      refused: false),
  ]

  /// Send `text` on a connection that stays open for sending, and read until the server closes,
  /// on a thread of its own (not one of Swift's cooperative pool, which the stub answers on).
  static func exchange(_ text: String, port: UInt16) async throws -> String {
    let connection = try RawConnection(port: port)
    defer { connection.close() }
    let answer = Locked<[UInt8]>([])
    await onThread {
      connection.send(Array(text.utf8))
      let received = connection.receiveAll()
      answer.withLock { $0 = received }
    }
    return String(decoding: answer.withLock { $0 }, as: UTF8.self)
  }

  /// Every probe, one after another on one server: each refused with `400`, or answered for its
  /// first request only; the stub never sees a smuggled one.
  @Test func noSmuggledRequestReachesTheStub() async throws {
    let stub = StubTransport()
    await stub.on(.method(.get) || .method(.post), .status(200, body: Data("first".utf8)))
    let server = try LoopbackServer(serving: stub)
    defer { server.stop() }
    var answered = 0
    for probe in Self.probes {
      let answer = try await Self.exchange(probe.bytes, port: server.port)
      if probe.refused {
        #expect(
          answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(probe.name): \(answer.prefix(200))")
      } else {
        answered += 1
        #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(probe.name): \(answer.prefix(200))")
        #expect(answer.hasSuffix("\r\n\r\nfirst"), "\(probe.name)")
        #expect(!answer.dropFirst(10).contains("HTTP/1.1"), "\(probe.name): two answers")
      }
      let seen = await stub.requests.map(\.url.path)
      #expect(seen.count == answered, "\(probe.name): \(seen)")
    }
    #expect(await stub.requests.map(\.url.path).allSatisfy { $0 == "/v1/a" })
    #expect(server.malformedRequests.count == Self.probes.filter(\.refused).count)
  }

  /// Clients that open connections and never finish a request hold at most
  /// `maximumConnections` threads; the rest wait in the listen queue, and the server serves
  /// again once they leave.
  @Test func clientsThatHoldConnectionsCannotMakeThreadsWithoutBound() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/a", .status(200, body: Data("served".utf8)))
    let server = try LoopbackServer(serving: stub, maximumConnections: 4)
    defer { server.stop() }
    var holders: [RawConnection] = []
    for _ in 0..<10 {
      let holder = try RawConnection(port: server.port)
      holder.send(Array("GET /v1/a HTTP/1.1\r\nX-Slow: ".utf8))
      holders.append(holder)
    }
    try #require(await server.waitForOpenConnections(4))
    #expect(server.peakOpenConnections == 4)
    for holder in holders { holder.close() }
    try #require(await server.waitForOpenConnections(0))
    let answer = try await liveClient(server.url("/v1")).send(Endpoint<String>(path: "a"))
    #expect(answer == "served")
    #expect(server.peakOpenConnections == 4)
  }

  /// A request no route matches gets the stub's report back, but never a secret it carried: not
  /// its credentials, query secrets, secret body fields, nor a field the server's redaction
  /// names; the report in the test's own process keeps them for the test to read.
  @Test(arguments: TransportKind.allCases)
  func theUnmatchedReportSentBackHoldsNoSecret(_ kind: TransportKind) async throws {
    let stub = StubTransport()
    await stub.on(
      .method(.post) && .path("/v1/login") && .header("Authorization", "Bearer other")
        && .header("X-Session", "other") && .query("token", "other")
        && .jsonBody(["password": "other", "user": "ann"]),
      .status(200))
    var redaction = Redaction.default
    redaction.headers.insert("X-Session")
    let server = try LoopbackServer(serving: stub, redaction: redaction)
    defer { server.stop() }
    let secrets = ["b3arer-s3cret", "s3ssion-s3cret", "qu3ry-s3cret", "b0dy-s3cret"]
    let client = kind.client(server.url("/v1"))

    let error = try await #require(throws: APIError.self) {
      try await client.send(
        Endpoint<Data>(
          method: .post, path: "login", query: [URLQueryItem(name: "token", value: secrets[2])],
          headers: ["Authorization": "Bearer \(secrets[0])", "X-Session": secrets[1]],
          body: .json(["password": secrets[3], "user": "ann"])))
    }
    let report = String(decoding: error.response?.body ?? Data(), as: UTF8.self)
    #expect(error.response?.status == 501)
    #expect(report.contains("closest routes:"), "\(report)")
    for secret in secrets {
      #expect(!report.contains(secret), "\(secret) in \(report)")
    }
    let unmatched = try #require(await stub.unmatchedRequests.first)
    #expect(unmatched.headers["Authorization"] == "Bearer \(secrets[0])")
  }

  /// A stop while a streamed answer is in flight ends it: the client's stream fails at once
  /// instead of waiting for chunks the stub's clock will never reach.
  @Test(arguments: TransportKind.allCases)
  func aStopWhileAStreamIsInFlightEndsIt(_ kind: TransportKind) async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(
      .get, "/v1/feed", .chunks([Data("one".utf8), Data("two".utf8)], interval: .seconds(60)))
    let server = try LoopbackServer(serving: stub)
    let stream = try await kind.client(server.url("/v1")).stream(Endpoint<Data>(path: "feed"))
    var chunks = stream.makeAsyncIterator()
    #expect(try await chunks.next() == Data("one".utf8))
    server.stop()
    await #expect(throws: APIError.self) { _ = try await chunks.next() }
    #expect(await server.waitForOpenConnections(0))
  }

  /// A client that leaves a stream stops the stub's feed: the chunk it waited for on the stub's
  /// clock is never written, and nothing sleeps on that clock any more.
  @Test(arguments: TransportKind.allCases)
  func aClientThatLeavesAStreamStopsTheStubsFeed(_ kind: TransportKind) async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(
      .get, "/v1/feed", .chunks([Data("one".utf8), Data("two".utf8)], interval: .seconds(60)))
    let server = try LoopbackServer(serving: stub)
    defer { server.stop() }
    let stream = try await kind.client(server.url("/v1")).stream(Endpoint<Data>(path: "feed"))
    var chunks = stream.makeAsyncIterator()
    #expect(try await chunks.next() == Data("one".utf8))
    try #require(await clock.waitForSleeper(dueIn: .seconds(60)))
    stream.cancel()
    #expect(await server.waitForEarlyDisconnect())
    #expect(await eventually { clock.sleeperCount == 0 })
    #expect(await server.waitForOpenConnections(0))
  }

  /// A stop while the stub has not answered (`.hang`) ends the call, though it has no deadline.
  @Test(arguments: TransportKind.allCases)
  func aStopWhileTheStubHangsEndsTheCall(_ kind: TransportKind) async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/never", .hang)
    let server = try LoopbackServer(serving: stub)
    let call = Task { try await kind.client(server.url("/v1")).send(Endpoint<Data>(path: "never")) }
    _ = try await stub.nextRequest()
    server.stop()
    let error = await #expect(throws: APIError.self) { try await call.value }
    #expect(error?.kind == .transport)
    #expect(await server.waitForOpenConnections(0))
  }

  /// A stop ends a write to a client that stopped reading, whose socket buffers are full: the
  /// client, with a small receive buffer, reads the start of a 16 MB body, whole or streamed as
  /// one chunk, and reads no more, so the server's thread is inside the write that cannot finish
  /// (the system's send buffer holds at most 4 MB) when the stop comes.
  @Test(arguments: ["whole", "streamed"])
  func aStopEndsAWriteToAClientThatStoppedReading(_ form: String) async throws {
    let body = Data(repeating: 0x61, count: 16 * 1024 * 1024)
    let stub = StubTransport()
    await stub.on(.get, "/v1/big", form == "whole" ? .status(200, body: body) : .chunks([body]))
    let server = try LoopbackServer(serving: stub)
    let reader = try RawConnection(port: server.port, receiveBuffer: 16 * 1024)
    defer { reader.close() }
    let first = Locked<[UInt8]>([])
    await onThread {
      reader.send(Array("GET /v1/big HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
      let received = reader.receive(atLeast: 64 * 1024)
      first.withLock { $0 = received }
    }
    #expect(first.withLock { $0 }.starts(with: Array("HTTP/1.1 200 OK\r\n".utf8)))
    #expect(first.withLock { $0.count } >= 64 * 1024)
    server.stop()
    #expect(await server.waitForOpenConnections(0, timeout: .seconds(30)))
  }

  struct Refusal: Error, CustomStringConvertible {
    var description: String { "the handler gave up on token=qu3ry-s3cret" }
  }

  /// A handler that throws is answered `500` naming the error (its secrets scrubbed), and the
  /// server goes on serving.
  @Test(arguments: TransportKind.allCases)
  func aHandlerThatThrowsIsAnswered500(_ kind: TransportKind) async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/throws", .handler { _, _ in throw Refusal() })
    await stub.on(.get, "/v1/fine", .status(200, body: Data("fine".utf8)))
    let server = try LoopbackServer(serving: stub)
    defer { server.stop() }
    let client = kind.client(server.url("/v1"))
    let error = try await #require(throws: APIError.self) {
      try await client.send(
        Endpoint<Data>(path: "throws", query: [URLQueryItem(name: "token", value: "qu3ry-s3cret")]))
    }
    #expect(error.response?.status == 500)
    #expect(error.response?.headers["X-Errand-Stub-Server"] == "failed")
    let text = String(decoding: error.response?.body ?? Data(), as: UTF8.self)
    #expect(text.contains("the handler gave up on token=<redacted>"), "\(text)")
    #expect(!text.contains("qu3ry-s3cret"))
    #expect(try await client.send(Endpoint<String>(path: "fine")) == "fine")
  }

  /// A stub whose handler never returns, and a transport that never answers and ignores
  /// cancellation, hold no thread of the server once the client has left: the connection's
  /// thread does not wait for the task that asks them.
  @Test(arguments: TransportKind.allCases, ["a stub's handler", "a transport"])
  func anAnswerThatNeverComesHoldsNoThreadOnceTheClientLeaves(
    _ kind: TransportKind, _ who: String
  ) async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/stuck", .handler { request, _ in try await StuckTransport().handle(request) })
    let server = try LoopbackServer(serving: who == "a transport" ? StuckTransport() : stub)
    defer { server.stop() }
    let client = kind.client(server.url("/v1"))
    let error = try await #require(throws: APIError.self) {
      try await client.send(Endpoint<Data>(path: "stuck", timeout: .seconds(1)))
    }
    #expect(error.kind == .timedOut)
    #expect(await server.waitForEarlyDisconnect())
    #expect(await server.waitForOpenConnections(0))
  }

  /// An answer that cannot be written as HTTP (a field value with a line break, a status that
  /// is not final) is replaced by a `500` that says why: the stub cannot split the response.
  @Test(arguments: TransportKind.allCases)
  func anAnswerThatCannotBeSentIsReplacedBy500(_ kind: TransportKind) async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/split",
      .status(200, headers: ["X-Evil": "a\r\nSet-Cookie: stolen=1"]))
    await stub.on(.get, "/v1/informational", .status(101))
    let server = try LoopbackServer(serving: stub)
    defer { server.stop() }
    let client = kind.client(server.url("/v1"))
    for path in ["split", "informational"] {
      let error = try await #require(throws: APIError.self) {
        try await client.send(Endpoint<Data>(path: path))
      }
      #expect(error.response?.status == 500, "\(path)")
      #expect(error.response?.headers["Set-Cookie"] == nil, "\(path)")
    }
  }
}

/// A transport that never answers and never notices that it was cancelled.
private struct StuckTransport: Transport {
  /// The waits it never ends, kept so that none is dropped without being resumed.
  static let parked = Locked<[CheckedContinuation<Void, Never>]>([])

  func send(_ request: HTTPRequest) async throws -> HTTPResponse {
    await withCheckedContinuation { continuation in
      Self.parked.withLock { $0.append(continuation) }
    }
    return HTTPResponse(status: 500)
  }

  /// The same wait, as a stub's handler.
  func handle(_ request: HTTPRequest) async throws -> StubResponse {
    _ = try await send(request)
    return .status(500)
  }
}
