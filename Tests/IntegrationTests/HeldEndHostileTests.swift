#if canImport(FoundationNetworking)
  import ErrandTesting
  import Foundation
  import FoundationNetworking
  import LoopbackServer
  import TestSupport
  import Testing

  @testable import Errand

  /// Hostile review of the held end: `URLSessionTransport` holds a task's successful end until
  /// URLSession reports the task's metrics or a wait passes (Apple platforms). URLSession on Linux
  /// reports none, so here a transport that waits as on Apple platforms is given the report by
  /// the test (``ReportedMetricsWaitTests``). Each test asserts the safe behaviour, so a failure
  /// is a finding.
  @Suite(.timeLimit(.minutes(3))) struct HeldEndHostileTests {
    typealias Call = ReportedMetricsWaitTests.Call

    static let body = ReportedMetricsWaitTests.body

    static func transport(waiting wait: Duration) -> URLSessionTransport {
      ReportedMetricsWaitTests.transport(waiting: wait)
    }

    static func delegate(of transport: URLSessionTransport, for call: Call) throws
      -> SessionDelegate
    {
      try #require(call == .streamed ? transport.streamingDelegate : transport.delegate)
    }

    /// The end a held task reports is when the transfer ended, not when the wait for URLSession's
    /// report did: the body's metrics say when its last byte came, whatever releases the end.
    /// (The pause only puts time between the two; nothing here bounds how fast anything runs.)
    @Test(arguments: Call.allCases)
    func aHeldEndReportsWhenTheTransferEndedNotWhenItWasReleased(_ call: Call) async throws {
      let server = try LoopbackServer { _ in ScriptedResponse(body: Self.body) }
      defer { server.stop() }
      let transport = Self.transport(waiting: .seconds(3600))
      let delegate = try Self.delegate(of: transport, for: call)
      let reading = ReportedMetricsWaitTests.read(
        call, from: transport, server.baseURL.appendingPathComponent("a"))
      defer { reading.cancel() }
      #expect(await eventually { delegate.heldEnds.count == 1 })
      let task = try #require(delegate.heldEnds.first)
      let held = Date()
      try await Task.sleep(for: .milliseconds(300))
      // A report without an end of its own (as a report of a task whose transactions are
      // missing): the end is Errand's own observation.
      delegate.reported(TransferMetrics(), forTask: task)
      let metrics = try #require(try await reading.value)
      let start = try #require(metrics.start)
      let end = try #require(metrics.responseEnd)
      let ended = start.addingTimeInterval(Double(end.components.seconds))
        .addingTimeInterval(Double(end.components.attoseconds) / 1e18)
      #expect(ended.timeIntervalSince(held) < 0.15, "the end is dated at its release")
    }

    /// A streamed body whose end is held when the app lets go of its transport: the session is
    /// invalidated and lets go of its delegate, and the body must still end, not hang.
    @Test func aHeldEndEndsWhenItsTransportGoesAway() async throws {
      let server = try LoopbackServer { _ in ScriptedResponse(body: Self.body) }
      defer { server.stop() }
      var transport: URLSessionTransport? = Self.transport(waiting: .seconds(3600))
      weak let delegate = transport?.streamingDelegate
      let head = try await transport?.stream(
        HTTPRequest(method: .get, url: server.baseURL.appendingPathComponent("gone")))
      let body = try #require(head?.bodyStream)
      #expect(await eventually { delegate?.heldEnds.count == 1 })
      transport = nil
      let collected = Locked<Data?>(nil)
      let reading = Task {
        let data = try await body.collect()
        collected.withLock { $0 = data }
      }
      defer { reading.cancel() }
      #expect(await eventually { collected.withLock { $0 } != nil }, "the body never ends")
      #expect(collected.withLock { $0 } == Self.body)
    }

    /// The caller's deadline passes while a buffered call's end is held: the call ends with
    /// `timedOut`, its table entry goes, and a report coming afterwards brings nothing back.
    @Test func aDeadlineDuringAHeldEndEndsTheCallAndLeavesNothingBehind() async throws {
      let server = try LoopbackServer { _ in ScriptedResponse(body: Self.body) }
      defer { server.stop() }
      let transport = Self.transport(waiting: .seconds(3600))
      let delegate = try #require(transport.delegate)
      let clock = TestClock()
      let exchange = Exchange(timeout: .seconds(30), clock: clock)
      let request = HTTPRequest(method: .get, url: server.baseURL.appendingPathComponent("late"))
      let call = Task { try await transport.exchange(request, exchange) }
      defer { call.cancel() }
      #expect(await eventually { delegate.heldEnds.count == 1 })
      let task = try #require(delegate.heldEnds.first)
      try #require(await clock.waitForSleeper(dueIn: .seconds(30)))
      await clock.advance(by: .seconds(30))
      let error = await #expect(throws: APIError.self) { _ = try await call.value }
      #expect(error?.kind == .timedOut)
      #expect(delegate.heldEnds.isEmpty, "the held end's entry is left in the table")
      delegate.reported(ReportedMetricsWaitTests.reported, forTask: task)
      #expect(delegate.heldEnds.isEmpty)
    }

    /// The reader of a streamed body cancels while its end is held: it ends at once with
    /// `CancellationError`, and the body has no metrics of an end, even once the report comes.
    @Test func aReaderThatCancelsDuringAHeldEndGetsNoMetrics() async throws {
      let server = try LoopbackServer { _ in ScriptedResponse(body: Self.body) }
      defer { server.stop() }
      let transport = Self.transport(waiting: .seconds(3600))
      let delegate = try #require(transport.streamingDelegate)
      let head = try await transport.stream(
        HTTPRequest(method: .get, url: server.baseURL.appendingPathComponent("left")))
      let body = try #require(head.bodyStream)
      #expect(await eventually { delegate.heldEnds.count == 1 })
      let task = try #require(delegate.heldEnds.first)
      let reading = Task { try await body.collect() }
      body.cancel()
      await #expect(throws: CancellationError.self) { _ = try await reading.value }
      delegate.reported(ReportedMetricsWaitTests.reported, forTask: task)
      #expect(body.metrics == nil, "metrics of a body its reader cancelled")
      #expect(delegate.heldEnds.isEmpty)
    }

    /// Several streamed calls held at once, their reports coming in another order: each body
    /// ends with its own task's report, none with another's.
    @Test func eachHeldEndGetsItsOwnTasksReport() async throws {
      let server = try LoopbackServer { request in
        ScriptedResponse(
          body: Data(repeating: 1, count: 1_000 + (Int(request.path.dropFirst(2)) ?? 0)))
      }
      defer { server.stop() }
      let transport = Self.transport(waiting: .seconds(3600))
      let delegate = try #require(transport.streamingDelegate)
      var bodies: [HTTPBody] = []
      for index in 0..<6 {
        // One at a time, so that the tasks' identifiers follow the calls' order.
        let head = try await transport.stream(
          HTTPRequest(method: .get, url: server.baseURL.appendingPathComponent("n\(index)")))
        bodies.append(try #require(head.bodyStream))
        #expect(await eventually { delegate.heldEnds.count == index + 1 })
      }
      let tasks = delegate.heldEnds.sorted()
      let reading = bodies.map { body in Task { try await body.collect().count } }
      for (index, task) in tasks.enumerated().reversed() {
        var report = TransferMetrics()
        report.remotePort = index
        delegate.reported(report, forTask: task)
      }
      for (index, read) in reading.enumerated() {
        #expect(try await read.value == 1_000 + index)
        #expect(bodies[index].metrics?.remotePort == index, "another task's report")
        #expect(bodies[index].metrics?.responseBodyBytes == 1_000 + index)
      }
      #expect(delegate.heldEnds.isEmpty)
    }

    /// On Linux the transport has two sessions, whose tasks are numbered apart: the same number
    /// held in both is released only in the one the report is for.
    @Test func theSameTaskNumberInBothSessionsIsReleasedApart() async throws {
      let server = try LoopbackServer { _ in ScriptedResponse(body: Self.body) }
      defer { server.stop() }
      let transport = Self.transport(waiting: .seconds(3600))
      let buffered = try #require(transport.delegate)
      let streaming = try #require(transport.streamingDelegate)
      let streamed = ReportedMetricsWaitTests.read(
        .streamed, from: transport, server.baseURL.appendingPathComponent("s"))
      let whole = ReportedMetricsWaitTests.read(
        .buffered, from: transport, server.baseURL.appendingPathComponent("b"))
      defer {
        streamed.cancel()
        whole.cancel()
      }
      #expect(await eventually { streaming.heldEnds.count == 1 && buffered.heldEnds.count == 1 })
      let task = try #require(streaming.heldEnds.first)
      try #require(buffered.heldEnds == [task], "the two sessions numbered their tasks alike")
      var report = TransferMetrics()
      report.protocolName = "streamed"
      streaming.reported(report, forTask: task)
      #expect(try await streamed.value?.protocolName == "streamed")
      #expect(buffered.heldEnds == [task], "the other session's end was released")
      report.protocolName = "buffered"
      buffered.reported(report, forTask: task)
      #expect(try await whole.value?.protocolName == "buffered")
    }
  }
#endif
