#if os(Linux)
  import Foundation
  import LoopbackServer
  import TestSupport
  import Testing

  @testable import Errand

  /// Attacks on `URLSessionTransport`'s flow control on Linux (URLSession waits while its
  /// delegate has a backlog: `DelegateQueue`), with readers that stop: every byte still arrives
  /// in order, and other calls, uploads and streams go on. The probes that hold URLSession on
  /// purpose run in child processes (`FlowControlHeldProbes`), one each, from here.
  @Suite(.timeLimit(.minutes(3))) struct FlowControlHostileTests {
    /// The probes of `FlowControlHeldProbes`, by name.
    enum HeldProbe: String, CaseIterable, Sendable, CustomTestStringConvertible {
      case aBufferedCallGetsThroughOnceAHeldStreamsDelegateRunsAgain
      case cancellingTheReaderOfAHeldStreamEndsItAtOnce
      case aBodyLimitCrossedAsAHeldDelegateRunsEndsTheCallAndNothingElse
      case aTimeoutPassesWhileURLSessionWaitsAndTheCallEndsOnTime
      case aTransportReleasedWhileURLSessionWaitsLetsItsBodyFinish
      case aRefusedChallengeWhileURLSessionWaitsHoldsNothingUp
      case aSlowUploadProgressObserverHoldsUpNoOtherCall
      case aDelegateThatAsksURLSessionForSomethingWhileItWaitsGoesOn

      var testDescription: String { rawValue }
    }

    @Test(arguments: HeldProbe.allCases)
    func heldProbeInAProcessOfItsOwn(_ probe: HeldProbe) async throws {
      var environment = ProcessInfo.processInfo.environment
      environment[HeldProbeProcess.variable] = "1"
      let (status, output) = try await ChildTestProcess.run(
        filter: "FlowControlHeldProbes/\(probe.rawValue)", environment: environment)
      #expect(status == 0, "the probe failed in its child process:\n\(output)")
      #expect(output.contains("1 test"), "the child ran no probe:\n\(output)")
    }

    /// Streams on one transport, or one each, whose readers all stop after the first chunk until
    /// their whole bodies have arrived (in their temporary files), and a buffered call meanwhile:
    /// the call gets through, and each reader then gets every byte of its own body, in order.
    @Test(arguments: [true, false])
    func manyStalledReadersEachGetTheirWholeBodyInOrder(sharedTransport: Bool) async throws {
      let count = 6
      let size = 8 << 20
      let bodies = (0..<count).map { index in
        Data(patternBytes(size + index).dropFirst(index))
      }
      let server = try LoopbackServer { request in
        guard let index = Int(request.path.dropFirst()) else { return .text("small") }
        return ScriptedResponse(body: bodies[index])
      }
      defer { server.stop() }
      let shared = URLSessionTransport()
      let streams = try await withThrowingTaskGroup(of: (Int, HTTPBody).self) { group in
        for index in 0..<count {
          group.addTask {
            let transport = sharedTransport ? shared : URLSessionTransport()
            let response = try await transport.stream(HTTPRequest(url: server.url("/\(index)")))
            return (index, try #require(response.bodyStream))
          }
        }
        return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
      }
      var iterators = (0..<count).map { streams[$0]?.makeAsyncIterator() }
      var received = [Int](repeating: 0, count: count)
      for index in 0..<count {
        received[index] = try await iterators[index]?.next()?.count ?? 0
      }
      let answered = await returnsInTime(seconds: 60) {
        (try? await shared.send(HTTPRequest(url: server.url("/small"))))?.status == 200
      }
      #expect(answered, "a buffered call did not get through beside the stalled readers")
      for index in 0..<count {
        let arrived = await eventually { [received] in
          received[index] + (streams[index]?.buffer.unreadBytes ?? 0) == size
        }
        #expect(arrived, "body \(index) never arrived whole")
      }
      for index in 0..<count {
        var rest = Data()
        while let chunk = try await iterators[index]?.next() { rest.append(chunk) }
        #expect(bodies[index].dropFirst(received[index]) == rest, "body \(index)")
      }
    }

    /// An upload with progress beside a streamed download whose reader has stopped: the upload
    /// goes through whole, its progress never goes back and ends with the whole body, and the
    /// download's reader then gets every byte in order.
    @Test func anUploadWithProgressBesideAStalledDownloadGoesThrough() async throws {
      let download = patternBytes(32 << 20)
      let upload = Data(patternBytes((8 << 20) + 7).dropFirst(7))
      let server = try LoopbackServer { request in
        request.path == "/logs"
          ? .json(#"{"name":"Rex"}"#, status: 201) : ScriptedResponse(body: download)
      }
      defer { server.stop() }
      let transport = URLSessionTransport()
      let client = APIClient(baseURL: server.baseURL, transport: transport)
      let body = try #require(
        try await transport.stream(HTTPRequest(url: server.url("/video"))).bodyStream)
      var chunks = body.makeAsyncIterator()
      var downloaded = try await chunks.next() ?? Data()
      let heard = Locked<[TransferProgress]>([])
      let dog = try await client.send(
        Endpoint<Dog>(
          method: .post, path: "logs", body: .data(upload, contentType: "application/zip"))
      ) { progress in heard.withLock { $0.append(progress) } }
      #expect(dog == Dog(name: "Rex"))
      #expect(server.requests.first { $0.path == "/logs" }?.body == upload)
      let reports = heard.withLock { $0 }
      #expect(
        reports.last == TransferProgress(completedBytes: upload.count, expectedBytes: upload.count))
      #expect(
        zip(reports, reports.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
      while let chunk = try await chunks.next() { downloaded.append(chunk) }
      #expect(downloaded == download)
    }

    /// A reader that stops after the first chunk until the whole body has reached it (all but
    /// the memory budget in its temporary file), then reads: every byte, in order.
    @Test func aReaderThatResumesAfterTheWholeBodyArrivedGetsEveryByteInOrder() async throws {
      let size = 48 << 20
      let bytes = patternBytes(size)
      let server = try LoopbackServer { _ in ScriptedResponse(body: bytes) }
      defer { server.stop() }
      let transport = URLSessionTransport()
      let body = try #require(
        try await transport.stream(HTTPRequest(url: server.url("/video"))).bodyStream)
      var chunks = body.makeAsyncIterator()
      var received = try await chunks.next() ?? Data()
      let first = received.count
      #expect(await eventually { first + body.buffer.unreadBytes == size })
      while let chunk = try await chunks.next() { received.append(chunk) }
      #expect(received.count == size)
      #expect(received == bytes)
    }
  }
#endif
