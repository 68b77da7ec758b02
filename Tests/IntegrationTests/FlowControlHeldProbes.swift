#if os(Linux)
  import ErrandTesting
  import Foundation
  import FoundationNetworking
  import LoopbackServer
  import TestSupport
  import Testing

  @testable import Errand

  /// Attacks on `URLSessionTransport`'s flow control while URLSession waits for a delegate that
  /// the probe holds (`DelegateQueue`): what must still work while every URLSession of the
  /// process waits, and once it goes on. Holding URLSession's work queue holds every test beside
  /// it, so each probe runs in a child process of its own (`FlowControlHostileTests`), its cases
  /// one at a time, and is skipped anywhere else.
  @Suite(
    .enabled(if: HeldProbeProcess.isChild, "runs in a child process of FlowControlHostileTests"),
    .serialized, .timeLimit(.minutes(3)))
  struct FlowControlHeldProbes {
    /// The body the server sends as fast as it can: 16 MiB, a thousand callbacks and more.
    static let size = 16 << 20
    static let bytes = patternBytes(size)
    /// Zeroes, sent half at once, then half after a minute.
    static let pausing = Data(count: 32 << 20)

    /// A server with a large body (`/big`), one without a length that sends half of its 32 MiB
    /// and then pauses for a minute (`/pausing`), a redirect to a small one (`/hop`), the small
    /// one (`/small`), an answer that takes a minute (`/slow`) and an upload sink (`/logs`).
    ///
    /// The pause is where a client that left shows: over loopback a server outpaces
    /// FoundationNetworking, whose `URLSessionTask.cancel()` waits for the session's work queue,
    /// which it serves only once the socket has nothing left to read; a body that never paused
    /// would run to its end first (as it does without the flow control).
    static func server() throws -> LoopbackServer {
      let small = try #require(URL(string: "/small"))
      return try LoopbackServer { request in
        switch request.path {
        case "/big": ScriptedResponse(body: bytes)
        case "/pausing":
          ScriptedResponse(body: pausing, chunkSize: 64 << 10, delayMidBody: .seconds(60))
        case "/hop": .redirect(to: small)
        case "/slow": ScriptedResponse(delayBeforeHeaders: .seconds(60))
        case "/logs": .json(#"{"name":"Rex"}"#, status: 201)
        default: .text("small")
        }
      }
    }

    /// A transport whose sessions make URLSession wait at 64 callbacks until 4 are left, and
    /// wait up to 10 minutes for a delegate that runs nothing: the probe decides when the
    /// delegate runs.
    static func heldTransport() -> (
      transport: URLSessionTransport, buffered: DelegateQueue, streaming: DelegateQueue
    ) {
      let buffered = DelegateQueue(backlogLimit: 64, resumeBelow: 4, stallAllowance: 600)
      let streaming = DelegateQueue(backlogLimit: 64, resumeBelow: 4, stallAllowance: 600)
      return (URLSessionTransport(delegateQueues: (buffered, streaming)), buffered, streaming)
    }

    /// Hold `queue`'s delegate behind a gate, and wait until URLSession waits for it.
    static func hold(_ queue: DelegateQueue) async throws -> Gate {
      let gate = Gate()
      queue.addOperation { gate.pass() }
      guard await eventually({ queue.backlogState.callerWaits }) else {
        gate.open()
        throw HeldProbeFailure("URLSession never waited for the held delegate")
      }
      return gate
    }

    /// Read `body` to its end, comparing each chunk with `expected` where it should be.
    /// - Returns: Where the first byte that differs (or is missing or extra) is; `nil` when the
    ///   body is `expected` exactly.
    static func mismatch(reading body: HTTPBody, against expected: Data) async throws -> Int? {
      var offset = 0
      for try await chunk in body {
        let end = offset + chunk.count
        guard end <= expected.count, expected[offset..<end] == chunk else { return offset }
        offset = end
      }
      return offset == expected.count ? nil : offset
    }

    /// A buffered call (through a same-origin redirect) beside a streamed body whose reader has
    /// stopped and whose delegate URLSession waits for: once the delegate runs again, the call
    /// gets through while the stream goes on at the delegate's pace, on the same transport and
    /// on another; the reader, when it reads again, gets every byte in order.
    @Test(arguments: [true, false])
    func aBufferedCallGetsThroughOnceAHeldStreamsDelegateRunsAgain(sameTransport: Bool)
      async throws
    {
      let server = try Self.server()
      defer { server.stop() }
      let (transport, _, streaming) = Self.heldTransport()
      let body = try #require(
        try await transport.stream(HTTPRequest(url: server.url("/big"))).bodyStream)
      let gate = try await Self.hold(streaming)
      defer { gate.open() }
      let other: any Transport = sameTransport ? transport : URLSessionTransport()
      let call = Task { try await other.send(HTTPRequest(url: server.url("/hop"))) }
      gate.open()
      let answered = await returnsInTime(seconds: 60) {
        (try? await call.value).map { $0.status == 200 && $0.body == Data("small".utf8) } ?? false
      }
      #expect(answered, "the buffered call never got through: \(streaming.backlogState)")
      #expect(try await Self.mismatch(reading: body, against: Self.bytes) == nil)
    }

    /// The task that reads a streamed body whose delegate URLSession waits for is cancelled: its
    /// read ends at once with `CancellationError`, the connection closes once URLSession goes
    /// on, and the transport still works.
    @Test func cancellingTheReaderOfAHeldStreamEndsItAtOnce() async throws {
      let server = try Self.server()
      defer { server.stop() }
      let (transport, _, streaming) = Self.heldTransport()
      let body = try #require(
        try await transport.stream(HTTPRequest(url: server.url("/pausing"))).bodyStream)
      let gate = try await Self.hold(streaming)
      defer { gate.open() }
      let reader = Task {
        var received = 0
        for try await chunk in body { received += chunk.count }
        return received
      }
      reader.cancel()
      let outcome = Locked<(any Error)?>(nil)
      let ended = await returnsInTime(seconds: 60) {
        do {
          _ = try await reader.value
        } catch {
          outcome.withLock { $0 = error }
        }
        return true
      }
      #expect(ended, "the cancelled read did not end while URLSession waited")
      #expect(outcome.withLock { $0 } is CancellationError, "\(String(describing: outcome))")
      gate.open()
      #expect(await server.waitForEarlyDisconnect())
      let after = try await transport.stream(HTTPRequest(url: server.url("/big")))
      #expect(
        try await Self.mismatch(reading: try #require(after.bodyStream), against: Self.bytes) == nil
      )
    }

    /// A streamed body without a length crosses its size limit as the held delegate runs again:
    /// the reader gets `dataLengthExceedsMaximum`, the connection closes, and the transport's
    /// next calls (buffered and streamed) work.
    @Test func aBodyLimitCrossedAsAHeldDelegateRunsEndsTheCallAndNothingElse() async throws {
      let server = try Self.server()
      defer { server.stop() }
      let (transport, _, streaming) = Self.heldTransport()
      var request = HTTPRequest(url: server.url("/pausing"))
      request.maximumResponseSize = 1 << 20
      let body = try #require(try await transport.stream(request).bodyStream)
      let gate = try await Self.hold(streaming)
      defer { gate.open() }
      gate.open()
      let outcome = Locked<(any Error)?>(nil)
      let ended = await returnsInTime(seconds: 60) {
        do {
          for try await _ in body {}
        } catch {
          outcome.withLock { $0 = error }
        }
        return true
      }
      #expect(ended)
      #expect(
        (outcome.withLock { $0 } as? URLError)?.code == .dataLengthExceedsMaximum,
        "\(String(describing: outcome))")
      #expect(await server.waitForEarlyDisconnect())
      #expect(
        try await transport.send(HTTPRequest(url: server.url("/small"))).body == Data("small".utf8))
      let after = try await transport.stream(HTTPRequest(url: server.url("/big")))
      #expect(
        try await Self.mismatch(reading: try #require(after.bodyStream), against: Self.bytes) == nil
      )
    }

    /// A call's timeout passes while URLSession waits for another call's delegate: the call ends
    /// with `.timedOut` then, not when URLSession goes on.
    @Test func aTimeoutPassesWhileURLSessionWaitsAndTheCallEndsOnTime() async throws {
      let server = try Self.server()
      defer { server.stop() }
      let (transport, _, streaming) = Self.heldTransport()
      let body = try #require(
        try await transport.stream(HTTPRequest(url: server.url("/big"))).bodyStream)
      let gate = try await Self.hold(streaming)
      defer { gate.open() }
      let clock = TestClock()
      let client = APIClient(
        baseURL: server.baseURL, transport: transport,
        configuration: APIClient.Configuration(timeout: .seconds(5), clock: clock))
      let call = Task { try await client.send(Endpoint<Data>(path: "small", decoding: .data)) }
      try #require(await clock.waitForSleepers(1))
      await clock.advance(by: .seconds(5))
      let outcome = Locked<(any Error)?>(nil)
      let ended = await returnsInTime(seconds: 60) {
        do {
          _ = try await call.value
        } catch {
          outcome.withLock { $0 = error }
        }
        return true
      }
      #expect(ended, "the timeout did not end the call while URLSession waited")
      #expect((outcome.withLock { $0 } as? APIError)?.kind == .timedOut)
      gate.open()
      #expect(try await Self.mismatch(reading: body, against: Self.bytes) == nil)
    }

    /// The transport is released while URLSession waits for its streamed body's delegate: the
    /// body still arrives whole and in order, and a new transport works.
    @Test func aTransportReleasedWhileURLSessionWaitsLetsItsBodyFinish() async throws {
      let server = try Self.server()
      defer { server.stop() }
      let streaming = DelegateQueue(backlogLimit: 64, resumeBelow: 4, stallAllowance: 600)
      var transport: URLSessionTransport? = URLSessionTransport(
        delegateQueues: (DelegateQueue(), streaming))
      let body = try #require(
        try await transport?.stream(HTTPRequest(url: server.url("/big"))).bodyStream)
      let gate = try await Self.hold(streaming)
      defer { gate.open() }
      transport = nil
      gate.open()
      #expect(try await Self.mismatch(reading: body, against: Self.bytes) == nil)
      let fresh = URLSessionTransport()
      #expect(
        try await fresh.send(HTTPRequest(url: server.url("/small"))).body == Data("small".utf8))
    }

    /// A `401` with `WWW-Authenticate` (a challenge FoundationNetworking puts to the delegate,
    /// which Errand answers `.cancelAuthenticationChallenge` to return the 401 as a response)
    /// waits in the delegate's backlog ahead of another call's body, whose chunks make URLSession
    /// wait for the delegate: answering it must not wait for URLSession (FoundationNetworking's
    /// handler cancels the task, which waits for its work queue). One connection per host, so
    /// that the other call's answer can only come once the 401's transfer is done.
    @Test func aRefusedChallengeWhileURLSessionWaitsHoldsNothingUp() async throws {
      let server = try LoopbackServer { request in
        request.path == "/private"
          ? ScriptedResponse(
            status: 401, headers: [("WWW-Authenticate", #"Basic realm="private""#)],
            body: Data("sign in".utf8)
          ).keepingConnectionOpen()
          : ScriptedResponse(body: Self.bytes)
      }
      defer { server.stop() }
      let configuration = URLSessionTransport.defaultConfiguration()
      configuration.httpMaximumConnectionsPerHost = 1
      let buffered = DelegateQueue(backlogLimit: 64, resumeBelow: 4, stallAllowance: 600)
      let transport = URLSessionTransport(
        configuration: configuration, delegateQueues: (buffered, DelegateQueue()))
      let gate = Gate()
      buffered.addOperation { gate.pass() }
      defer { gate.open() }
      let refused = Task { try await transport.send(HTTPRequest(url: server.url("/private"))) }
      #expect(await server.waitForRequests(1))
      let other = Task { try await transport.send(HTTPRequest(url: server.url("/big"))) }
      try #require(await eventually { buffered.backlogState.callerWaits })
      gate.open()
      let answered = await returnsInTime(seconds: 60) {
        let status = (try? await refused.value)?.status
        let body = (try? await other.value)?.body
        return status == 401 && body == Self.bytes
      }
      #expect(answered, "the delegate and URLSession wait for each other: \(buffered.backlogState)")
    }

    /// An upload's progress observer that is slow but never stops (it stands for an app's
    /// observer that does real work for each report: here each report takes 1.5 s, well within
    /// the queue's allowance for a delegate that runs nothing, until the other call is answered)
    /// holds up no other call, on the same transport or another: URLSession waits for the
    /// delegate's backlog, and every session of the process waits with it, so the observer must
    /// not be what the delegate waits for. Its reports still all arrive, in order, the last one
    /// the whole body.
    @Test(arguments: [true, false])
    func aSlowUploadProgressObserverHoldsUpNoOtherCall(sameTransport: Bool) async throws {
      let server = try Self.server()
      defer { server.stop() }
      let (transport, buffered, _) = Self.heldTransport()
      let client = APIClient(baseURL: server.baseURL, transport: transport)
      let upload = Self.bytes
      let otherAnswered = Locked(false)
      let answeredSignal = DispatchSemaphore(value: 0)
      let heard = Locked<[TransferProgress]>([])
      let call = Task {
        try await client.send(
          Endpoint<Dog>(
            method: .post, path: "logs", body: .data(upload, contentType: "application/zip"))
        ) { progress in
          heard.withLock { $0.append(progress) }
          if !otherAnswered.withLock({ $0 }) { _ = answeredSignal.wait(timeout: .now() + 1.5) }
        }
      }
      try #require(await eventually { !heard.withLock { $0.isEmpty } })
      // Until URLSession waits for the delegate, or the upload has all gone without it waiting.
      try #require(
        await eventually { buffered.backlogState.callerWaits || server.requests.count == 1 })
      let other: any Transport = sameTransport ? transport : URLSessionTransport()
      let answered = await returnsInTime(seconds: 60) {
        (try? await other.send(HTTPRequest(url: server.url("/small"))))?.status == 200
      }
      otherAnswered.withLock { $0 = true }
      answeredSignal.signal()
      #expect(answered, "the other call waited for the observer: \(buffered.backlogState)")
      #expect(try await call.value == Dog(name: "Rex"))
      #expect(server.requests.first { $0.path == "/logs" }?.body == upload)
      let reports = heard.withLock { $0 }
      #expect(
        reports.last == TransferProgress(completedBytes: upload.count, expectedBytes: upload.count))
      #expect(
        zip(reports, reports.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
    }
  }

  /// The child process a held probe runs in.
  enum HeldProbeProcess {
    /// Set in the child's environment.
    static let variable = "ERRAND_FLOW_CONTROL_PROBE"
    /// Whether this process is such a child.
    static let isChild = ProcessInfo.processInfo.environment[variable] != nil
  }

  /// What a held probe found before it could probe anything.
  struct HeldProbeFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
  }
#endif
