#if canImport(FoundationNetworking)
  import Foundation
  import FoundationNetworking
  import LoopbackServer
  import TestSupport
  import Testing

  @testable import Errand

  /// On Apple platforms URLSession reports a task's metrics in a callback of its own, before or
  /// after the task's end (Apple documents no order). `URLSessionTransport` then ends the body
  /// (and answers a buffered call) when both have come, whichever comes last, or half a second
  /// after the end. URLSession on Linux reports none, so here a transport that waits as on Apple
  /// platforms is given the report by the test, after the end.
  @Suite(.timeLimit(.minutes(3))) struct ReportedMetricsWaitTests {
    enum Call: String, CaseIterable, CustomTestStringConvertible {
      case streamed, buffered
      var testDescription: String { rawValue }
    }

    static let body = Data(repeating: 5, count: 40_000)

    /// A transport whose tasks' ends wait up to `wait` for URLSession's metrics.
    static func transport(waiting wait: Duration) -> URLSessionTransport {
      URLSessionTransport(delegateQueues: (DelegateQueue(), DelegateQueue()), reportWait: wait)
    }

    /// The metrics URLSession reports, as far as this test makes them up.
    static var reported: TransferMetrics {
      var reported = TransferMetrics()
      reported.protocolName = "h2"
      reported.reusedConnection = false
      reported.responseBodyBytes = body.count
      return reported
    }

    /// The body of a call, read to its end in a task of its own, with its metrics there.
    static func read(_ call: Call, from transport: URLSessionTransport, _ url: URL)
      -> Task<TransferMetrics?, any Error>
    {
      Task {
        let request = HTTPRequest(method: .get, url: url)
        switch call {
        case .streamed:
          let head = try await transport.stream(request)
          let body = try #require(head.bodyStream)
          #expect(try await body.collect() == Self.body)
          return body.metrics
        case .buffered:
          let response = try await transport.send(request)
          #expect(response.body == Self.body)
          return response.metrics
        }
      }
    }

    /// The report comes after the task's end: the body ends (the buffered call returns) only
    /// then, with the report's fields and the end Errand observed.
    @Test(arguments: Call.allCases)
    func aReportAfterTheEndIsWaitedFor(_ call: Call) async throws {
      let server = try LoopbackServer { _ in ScriptedResponse(body: Self.body) }
      defer { server.stop() }
      let transport = Self.transport(waiting: .seconds(3600))
      let delegate = try #require(
        call == .streamed ? transport.streamingDelegate : transport.delegate)
      let reading = Self.read(call, from: transport, server.baseURL.appendingPathComponent("a"))
      defer { reading.cancel() }
      #expect(await eventually { delegate.heldEnds.count == 1 }, "the task's end is held")
      let task = try #require(delegate.heldEnds.first)
      delegate.reported(Self.reported, forTask: task)
      let metrics = try #require(try await reading.value)
      #expect(metrics.protocolName == "h2")
      #expect(metrics.reusedConnection == false)
      #expect(metrics.responseEnd != nil)
      #expect(metrics.responseBodyBytes == Self.body.count)
      #expect(delegate.heldEnds.isEmpty)
    }

    /// A report that never comes holds the end for the wait only: the body ends with what Errand
    /// observed.
    @Test(arguments: Call.allCases)
    func aReportThatNeverComesHoldsTheEndForTheWaitOnly(_ call: Call) async throws {
      let server = try LoopbackServer { _ in ScriptedResponse(body: Self.body) }
      defer { server.stop() }
      let transport = Self.transport(waiting: .milliseconds(20))
      let reading = Self.read(call, from: transport, server.baseURL.appendingPathComponent("b"))
      let metrics = try #require(try await reading.value)
      #expect(metrics.protocolName == nil)
      #expect(metrics.responseEnd != nil)
      #expect(metrics.responseBodyBytes == Self.body.count)
    }

    /// A report that came before the end is not waited for again, and a failed task is not held.
    @Test func aFailureIsNotHeld() async throws {
      let server = try LoopbackServer { _ in
        ScriptedResponse(body: Self.body, ending: .closeAfterBodyBytes(1_000))
      }
      defer { server.stop() }
      let transport = Self.transport(waiting: .seconds(3600))
      let request = HTTPRequest(method: .get, url: server.baseURL.appendingPathComponent("cut"))
      await #expect(throws: URLError.self) { _ = try await transport.send(request) }
      #expect(transport.delegate?.heldEnds.isEmpty == true)
    }
  }
#endif
