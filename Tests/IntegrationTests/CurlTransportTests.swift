#if os(Linux)
  import ErrandCurl
  import ErrandTesting
  import Foundation
  import LoopbackServer
  import TestSupport
  import Testing

  @testable import Errand

  /// CurlTransport over a real socket: what it sends, what it streams, how it stops. The fault
  /// matrix and the redirect suites run against it too (see `TransportKind`).
  @Suite(.timeLimit(.minutes(3))) struct CurlTransportTests {
    @Test func sendsTheMethodHeadersAndBodyAsGiven() async throws {
      let server = try LoopbackServer()
      defer { server.stop() }
      server.enqueue(.json(#"{"name":"Rex"}"#))
      let body = patternBytes(300_000)
      let request = HTTPRequest(
        method: .put, url: server.url("/dogs/1?x=1"),
        headers: ["X-Trace": "abc", "Content-Type": "application/octet-stream"], body: body)
      let response = try await CurlTransport().send(request)
      let received = try await server.takeRequest()
      #expect(received.method == "PUT")
      #expect(received.target == "/dogs/1?x=1")
      #expect(received.headers["X-Trace"] == "abc")
      #expect(received.headers["Expect"] == nil)
      #expect(received.body == body)
      #expect(response.status == 200)
      #expect(response.body == Data(#"{"name":"Rex"}"#.utf8))
      #expect(response.headers["Content-Type"]?.hasPrefix("application/json") == true)
    }

    /// A `3xx` without `Location` is the answer, body and all (URLSession on Linux passes its
    /// status on but keeps its body to itself; on Apple platforms the body arrives).
    @Test(arguments: [301, 302, 303, 307, 308])
    func aRedirectWithoutALocationIsTheAnswerWithItsBody(status: Int) async throws {
      let server = try LoopbackServer { _ in
        ScriptedResponse(status: status, body: Data("moved, but not saying where".utf8))
      }
      defer { server.stop() }
      let response = try await CurlTransport().send(HTTPRequest(url: server.url("/old")))
      #expect(response.status == status)
      #expect(response.body == Data("moved, but not saying where".utf8))
      #expect(server.requests.map(\.path) == ["/old"])
    }

    @Test func uploadsAFileFromDisk() async throws {
      let server = try LoopbackServer()
      defer { server.stop() }
      server.enqueue(.text("stored"))
      let body = patternBytes(3_000_000)
      let file = FileManager.default.temporaryDirectory.appendingPathComponent(
        "errand-curl-\(UUID().uuidString)")
      try body.write(to: file)
      defer { try? FileManager.default.removeItem(at: file) }
      var request = HTTPRequest(method: .post, url: server.url("/upload"))
      request.bodyFile = file
      let response = try await CurlTransport().send(request)
      let received = try await server.takeRequest()
      #expect(response.body == Data("stored".utf8))
      #expect(received.method == "POST")
      #expect(received.body == body)
    }

    @Test func aStreamArrivesChunkByChunkInOrder() async throws {
      let chunks = (0..<5).map { Data("chunk \($0)\n".utf8) }
      let server = try LoopbackServer { _ in
        var response = ScriptedResponse(body: chunks.reduce(Data(), +))
        response.chunkLengths = chunks.map(\.count)
        response.chunkInterval = .milliseconds(20)
        return response
      }
      defer { server.stop() }
      let client = APIClient(baseURL: server.baseURL, transport: CurlTransport())
      let stream = try await client.stream(Endpoint<Data>(path: "feed"))
      var lines: [String] = []
      for try await line in stream.lines {
        lines.append(line)
      }
      #expect(lines == (0..<5).map { "chunk \($0)" })
    }

    @Test func leavingAStreamStopsTheTransfer() async throws {
      let server = try LoopbackServer { _ in
        var response = ScriptedResponse(body: patternBytes(1_000_000))
        response.chunkSize = 1000
        // A minute in all: the client leaves long before the end, however busy the machine.
        response.chunkInterval = .milliseconds(60)
        return response
      }
      defer { server.stop() }
      let client = APIClient(baseURL: server.baseURL, transport: CurlTransport())
      let stream = try await client.stream(Endpoint<Data>(path: "big"))
      for try await _ in stream {
        break
      }
      #expect(await server.waitForEarlyDisconnect())
    }

    /// A reader that falls behind pauses the transfer (libcurl stops reading the socket) instead
    /// of having the rest of the body buffered: over loopback, 40 MB would otherwise all arrive
    /// while the reader sleeps.
    @Test func aSlowReaderPausesTheTransferInsteadOfBuffering() async throws {
      let size = 40_000_000
      let server = try LoopbackServer { _ in ScriptedResponse(body: patternBytes(size)) }
      defer { server.stop() }
      let response = try await CurlTransport().stream(HTTPRequest(url: server.url("/big")))
      let body = try #require(response.bodyStream)
      var iterator = body.makeAsyncIterator()
      var received = try await iterator.next()?.count ?? 0
      try await Task.sleep(for: .milliseconds(500))
      #expect(body.buffer.unreadBytes < HTTPBody.memoryBudget + 1_000_000)
      while let chunk = try await iterator.next() {
        received += chunk.count
      }
      #expect(received == size)
    }

    @Test func cancellingTheCallerEndsTheWaitAtOnce() async throws {
      let server = try LoopbackServer { _ in ScriptedResponse(delayBeforeHeaders: .seconds(20)) }
      defer { server.stop() }
      let client = APIClient(baseURL: server.baseURL, transport: CurlTransport())
      let call = Task { try await client.send(Endpoint<Data>(path: "slow")) }
      #expect(await server.waitForRequests(1))
      call.cancel()
      // Had the call gone on, the server would have answered after 20 s and closed normally.
      let error = await #expect(throws: APIError.self) { try await call.value }
      #expect(error?.kind == .cancelled)
      #expect(await server.waitForEarlyDisconnect())
    }

    @Test func manyConcurrentRequestsEachGetTheirOwnAnswer() async throws {
      let server = try LoopbackServer { request in .text(request.path) }
      defer { server.stop() }
      let client = APIClient(baseURL: server.baseURL, transport: CurlTransport())
      let answers = try await withThrowingTaskGroup(of: (Int, String).self) { group in
        for index in 0..<200 {
          group.addTask { (index, try await client.send(Endpoint<String>(path: "n/\(index)"))) }
        }
        return try await group.reduce(into: [Int: String]()) { $0[$1.0] = $1.1 }
      }
      #expect(answers.count == 200)
      #expect(answers.allSatisfy { $0.value == "/n/\($0.key)" })
    }

    /// Bursts of calls, the client idle between them, reuse the connections the first burst
    /// opened: the transport keeps idle connections for as long as the server does, not only
    /// four per call still in flight when one ends (libcurl's default, which closed connections
    /// the next burst opened again, a TLS handshake each).
    @Test func burstsOfCallsReuseTheFirstBurstsConnections() async throws {
      let server = try LoopbackServer { _ in
        // Slow enough that every call of a burst has a connection of its own.
        var answer = ScriptedResponse.text("ok").keepingConnectionOpen()
        answer.delayBeforeHeaders = .milliseconds(50)
        return answer
      }
      defer { server.stop() }
      let transport = CurlTransport()
      let (bursts, width) = (12, 8)
      for _ in 0..<bursts {
        try await withThrowingTaskGroup(of: Int.self) { group in
          for _ in 0..<width {
            group.addTask { try await transport.send(HTTPRequest(url: server.url("/"))).status }
          }
          for try await status in group { #expect(status == 200) }
        }
      }
      let connections = Set(server.requests.map(\.connection))
      #expect(server.requests.count == bursts * width)
      #expect(connections.count <= width, "\(connections.count) connections for \(bursts) bursts")
    }
  }
#endif
