#if os(Linux)
  import Errand
  import ErrandCurl
  import Foundation
  import LoopbackServer
  import TestSupport
  import Testing

  /// CurlTransport's metrics over a real socket: phases in order, sizes as sent, the connection.
  @Suite(.timeLimit(.minutes(1))) struct TransferMetricsTests {
    @Test func curlTransportReportsPhasesSizesAndTheConnection() async throws {
      let body = Data(repeating: 7, count: 12_345)
      let server = try LoopbackServer { _ in
        ScriptedResponse(headers: [("Connection", "keep-alive")], body: body)
      }
      defer { server.stop() }
      let client = APIClient(baseURL: server.baseURL, transport: CurlTransport())
      let endpoint = Endpoint<Data>(path: "bytes", decoding: .data)
      let first = try #require(try await client.response(for: endpoint).response.metrics)
      let second = try #require(try await client.response(for: endpoint).response.metrics)
      #expect(first.protocolName == "HTTP/1.1")
      #expect(first.remoteAddress == "127.0.0.1")
      #expect(first.remotePort == Int(server.port))
      #expect(first.responseBodyBytes == body.count)
      #expect((first.responseHeaderBytes ?? 0) > 0 && (first.requestHeaderBytes ?? 0) > 0)
      #expect(first.reusedConnection == false)
      #expect(second.reusedConnection == true)
      #expect(first.secureConnectionEnd == nil)  // no TLS
      let phases = [first.connectEnd, first.requestStart, first.responseStart, first.responseEnd]
      let known = phases.compactMap { $0 }
      #expect(known.count == 4)
      #expect(known == known.sorted())
      #expect(abs(first.start?.timeIntervalSinceNow ?? -100) < 60)
    }

    /// A streamed head carries what was known when it arrived: no end yet.
    @Test func aStreamedHeadHasNoEndYet() async throws {
      let server = try LoopbackServer { _ in
        .chunks([Data("first".utf8), Data("second".utf8)], interval: .milliseconds(50))
      }
      defer { server.stop() }
      let client = APIClient(baseURL: server.baseURL, transport: CurlTransport())
      let stream = try await client.stream(Endpoint<Data>(path: "slow", decoding: .data))
      let metrics = try #require(stream.response.metrics)
      #expect(metrics.responseStart != nil)
      #expect(metrics.responseEnd == nil)
      _ = try await stream.collect()
    }
  }
#endif
