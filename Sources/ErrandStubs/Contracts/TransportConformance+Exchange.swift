import Errand
import Foundation

extension TransportConformance {
  /// The checks of a transport that adopts `ExchangeTransport`: it ends its own wait at the
  /// exchange's deadline, reports the request body's progress, and returns a streamed
  /// exchange's head with its body to follow. A transport that does not adopt it fails each one
  /// with that reason.
  ///
  /// ```swift
  /// @Test(arguments: TransportConformance.exchangeChecks)
  /// func myTransportHonoursItsExchange(_ check: TransportConformance.Check) async throws {
  ///   try await check.run(MyTransport(), httpbin: URL(string: "http://127.0.0.1:8080")!)
  /// }
  /// ```
  public static let exchangeChecks: [Check] = [
    Check(description: "the exchange's deadline ends the wait") { transport, base, _ in
      let exchanging = try exchanging(transport)
      let request = HTTPRequest(url: base.appendingPathComponent("delay/10"))
      let start = ContinuousClock.now
      do {
        let response = try await exchanging.exchange(
          request, Exchange(timeout: .milliseconds(300)))
        throw ConformanceFailure(
          "a 300 ms exchange of GET /delay/10 returned \(response.status) instead of timing out")
      } catch let failure as ConformanceFailure {
        throw failure
      } catch {
        let elapsed = ContinuousClock.now - start
        let kind = APIError(transportError: error, request: nil).kind
        try expect(kind == .timedOut, "a 300 ms exchange of GET /delay/10 threw \(error)")
        try expect(elapsed >= .milliseconds(250), "a 300 ms exchange timed out after \(elapsed)")
        // The server answers at 10 s: ending any time before that is the deadline's doing. The
        // margin is for a loaded machine, where a test process may wait seconds for a core.
        try expect(elapsed < .seconds(9), "a 300 ms exchange took \(elapsed) to time out")
      }
    },
    Check(description: "the request body's progress is reported") { transport, base, _ in
      let exchanging = try exchanging(transport)
      let body = Data(repeating: UInt8(ascii: "e"), count: 64 * 1024)
      let request = HTTPRequest(
        method: .post, url: base.appendingPathComponent("anything"),
        headers: ["Content-Type": "application/octet-stream"], body: body)
      let reports = Reports()
      let head = try await exchanging.exchange(
        request, Exchange(uploadProgress: { reports.append($0) }))
      _ = try await head.collectingBody()
      let heard = reports.all
      try expect(!heard.isEmpty, "a 65536-byte upload reported no progress")
      try expect(
        heard.last?.completedBytes == body.count,
        "a 65536-byte upload's last report was \(String(describing: heard.last))")
      try expect(
        zip(heard, heard.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes },
        "upload progress went back: \(heard.map(\.completedBytes))")
    },
    Check(description: "a streamed exchange returns at the head") { transport, base, _ in
      let exchanging = try exchanging(transport)
      let head = try await exchanging.exchange(
        HTTPRequest(url: base.appendingPathComponent("stream/5")), Exchange(streams: true))
      try expect(head.status == 200, "GET /stream/5 came back as \(head.status)")
      let body = try await head.collectingBody().body
      let lines = String(decoding: body, as: UTF8.self).split(separator: "\n")
      try expect(lines.count == 5, "GET /stream/5 streamed \(lines.count) lines, not 5")
    },
  ]

  private static func exchanging(_ transport: any Transport) throws -> any ExchangeTransport {
    guard let exchanging = transport as? any ExchangeTransport else {
      throw ConformanceFailure("\(type(of: transport)) does not adopt ExchangeTransport")
    }
    return exchanging
  }
}

/// Progress reports heard, from any thread.
private final class Reports: Sendable {
  private let heard = Locked<[TransferProgress]>([])

  func append(_ progress: TransferProgress) { heard.withLock { $0.append(progress) } }
  var all: [TransferProgress] { heard.withLock { $0 } }
}
