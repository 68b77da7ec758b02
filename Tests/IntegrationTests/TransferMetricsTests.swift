#if os(Linux) || os(macOS)
  import Errand
  import ErrandCurl
  import Foundation
  import LoopbackServer
  import TestSupport
  import Testing

  /// Each transport's metrics over a real socket: phases in order, sizes as sent, the connection
  /// where the transport knows it, redirects hop by hop. On macOS (the workflow) URLSession's own
  /// report is checked too.
  @Suite(.timeLimit(.minutes(3))) struct TransferMetricsTests {
    /// The phase marks that are known, in the order the phases happen.
    static func marks(_ metrics: TransferMetrics) -> [Duration] {
      [
        metrics.domainLookupStart, metrics.domainLookupEnd, metrics.connectStart,
        metrics.connectEnd, metrics.requestStart, metrics.responseStart, metrics.responseEnd,
      ].compactMap { $0 }
    }

    @Test(arguments: TransportKind.allCases)
    func phasesAreInOrderAndSizesAreAsSent(_ kind: TransportKind) async throws {
      let body = Data(repeating: 7, count: 12_345)
      let upload = Data(repeating: 1, count: 1_000)
      let server = try LoopbackServer { _ in
        ScriptedResponse(headers: [("Connection", "keep-alive")], body: body)
      }
      defer { server.stop() }
      let client = kind.client(server.baseURL)
      let endpoint = Endpoint<Data>(method: .post, path: "bytes", body: .data(upload))
      let first = try #require(try await client.response(for: endpoint).response.metrics)
      let second = try #require(try await client.response(for: endpoint).response.metrics)
      for metrics in [first, second] {
        #expect(metrics.responseBodyBytes == body.count)
        #expect(abs(metrics.start?.timeIntervalSinceNow ?? -100) < 60)
        #expect(Self.marks(metrics) == Self.marks(metrics).sorted())
        #expect(metrics.responseStart != nil && metrics.responseEnd != nil)
        #expect(metrics.secureConnectionStart == nil && metrics.secureConnectionEnd == nil)
        #expect(metrics.redirectCount == 0)
      }
      switch kind {
      #if os(Linux)
        case .curl:
          #expect(first.requestBodyBytes == upload.count)
          #expect(Self.marks(first).count == 7)
          #expect(first.protocolName == "http/1.1")
          #expect(first.remoteAddress == "127.0.0.1" && first.remotePort == Int(server.port))
          #expect((first.responseHeaderBytes ?? 0) > 0 && (first.requestHeaderBytes ?? 0) > 0)
          #expect(first.reusedConnection == false && second.reusedConnection == true)
          // A reused connection had no lookup and no connect.
          #expect(second.domainLookupEnd == nil && second.connectEnd == nil)
      #endif
      case .urlSession:
        #if canImport(FoundationNetworking)
          // URLSession on Linux reports no task metrics: only what Errand observes, nothing
          // invented.
          #expect(first.domainLookupEnd == nil && first.connectEnd == nil)
          #expect(first.protocolName == nil && first.reusedConnection == nil)
          #expect(first.remoteAddress == nil)
        #else
          // URLSession's report, whether it came before or after the task's end.
          #expect(first.requestBodyBytes == upload.count)
          #expect(first.protocolName == "http/1.1")
          #expect(first.remoteAddress == "127.0.0.1" && first.remotePort == Int(server.port))
          #expect((first.responseHeaderBytes ?? 0) > 0 && (first.requestHeaderBytes ?? 0) > 0)
          #expect(first.reusedConnection == false && second.reusedConnection == true)
        #endif
      }
    }

    /// Each redirect is a hop of its own, oldest first, before the final answer.
    @Test(arguments: TransportKind.allCases)
    func redirectHopsAppearInOrder(_ kind: TransportKind) async throws {
      let server = try LoopbackServer { request in
        switch request.path {
        case "/a": .redirect(to: URL(string: "/b", relativeTo: nil)!, status: 302)
        case "/b": .redirect(to: URL(string: "/c", relativeTo: nil)!, status: 307)
        default: .text("arrived")
        }
      }
      defer { server.stop() }
      let client = kind.client(server.baseURL)
      let response = try await client.response(for: Endpoint<String>(path: "a")).response
      #expect(response.url?.path == "/c")
      let metrics = try #require(response.metrics)
      #expect(metrics.redirectCount == 2)
      let starts = (metrics.redirects + [metrics]).compactMap(\.start)
      #expect(starts.count == 3)
      #expect(starts == starts.sorted())
      #expect(metrics.redirects.allSatisfy { $0.responseStart != nil && $0.redirects.isEmpty })
      #expect(metrics.responseBodyBytes == Data("arrived".utf8).count)

      // Streamed, the whole transfer's metrics at the end keep the hops.
      let stream = try await client.stream(Endpoint<String>(path: "a"))
      _ = try await stream.collect()
      #expect(stream.metrics?.redirectCount == 2)
      #expect(stream.metrics?.responseEnd != nil)
    }

    /// A transfer cut off mid-body fails with what was known of it: the head arrived, some of
    /// the body came, and the response never ended.
    @Test(arguments: TransportKind.allCases)
    func aFailedTransferKeepsWhatWasKnown(_ kind: TransportKind) async throws {
      let server = try LoopbackServer { _ in
        ScriptedResponse(
          body: Data(repeating: 1, count: 10_000), ending: .closeAfterBodyBytes(4_000))
      }
      defer { server.stop() }
      let client = kind.client(server.baseURL)
      let error = await #expect(throws: APIError.self) {
        _ = try await client.send(Endpoint<Data>(path: "cut", decoding: .data))
      }
      #expect(error?.kind == .transport)
      let metrics = try #require(error?.metrics)
      #expect(metrics.responseStart != nil)
      #expect(metrics.responseEnd == nil)
      #expect((metrics.responseBodyBytes ?? 0) > 0)
      #expect(abs(metrics.start?.timeIntervalSinceNow ?? -100) < 60)
    }

    /// A buffered body larger than the memory budget hands its head over before the body ends
    /// (so that its reader collects the rest): the response still has the whole transfer's
    /// metrics, taken at the body's end.
    @Test(arguments: TransportKind.allCases)
    func aHeadHandedOverEarlyHasTheWholeTransfersMetrics(_ kind: TransportKind) async throws {
      let size = 3 * HTTPBody.memoryBudget
      let server = try LoopbackServer { _ in ScriptedResponse(body: Data(count: size)) }
      defer { server.stop() }
      let client = kind.client(server.baseURL)
      let response = try await client.response(for: Endpoint<Data>(path: "big", decoding: .data))
      #expect(response.value.count == size)
      let metrics = try #require(response.response.metrics)
      #expect(metrics.responseStart != nil)
      #expect(metrics.responseEnd != nil)
      #expect(metrics.responseBodyBytes == size)
    }

    /// A streamed head carries what was known when it arrived, no end yet; read to its end, the
    /// stream (and the call's end event) has the whole transfer's metrics.
    @Test(arguments: TransportKind.allCases)
    func aStreamedCallHasTheWholeTransfersMetricsAtItsEnd(_ kind: TransportKind) async throws {
      let chunks = [Data("first".utf8), Data("second".utf8)]
      let server = try LoopbackServer { _ in .chunks(chunks, interval: .milliseconds(50)) }
      defer { server.stop() }
      let ended = EndedMetrics()
      let client = kind.client(
        server.baseURL, configuration: APIClient.Configuration(eventListeners: [ended]))
      let stream = try await client.stream(Endpoint<Data>(path: "slow", decoding: .data))
      let head = try #require(stream.response.metrics)
      #expect(head.responseStart != nil)
      #expect(head.responseEnd == nil)
      _ = try await stream.collect()
      let whole = try #require(stream.metrics)
      #expect(whole.responseStart != nil)
      #expect(whole.responseEnd != nil)
      #expect(whole.responseBodyBytes == chunks.reduce(0) { $0 + $1.count })
      #expect(await eventually { ended.metrics?.responseEnd != nil }, "the call's end event")
    }
  }

  /// Keeps the metrics of the last call that ended.
  final class EndedMetrics: EventListener {
    private let last = Locked<TransferMetrics?>(nil)
    var metrics: TransferMetrics? { last.withLock { $0 } }
    func callEnded(_ event: CallEvent, status: Int, metrics: TransferMetrics?) {
      last.withLock { $0 = metrics }
    }
  }
#endif
