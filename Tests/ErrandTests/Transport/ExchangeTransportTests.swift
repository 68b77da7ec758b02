import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// A transport written outside Errand (this file imports no SPI) that adopts `ExchangeTransport`
/// honours the call's deadline, reports upload progress and tells listeners about a redirect,
/// through the public `Exchange` alone.
@Suite(.timeLimit(.minutes(3))) struct ExchangeTransportTests {
  /// Answers `/slow` never (it waits for the exchange's deadline), and anything else after a
  /// redirect it follows itself, reporting the body as sent in two halves.
  struct OutsideTransport: ExchangeTransport {
    func exchange(_ request: HTTPRequest, _ exchange: Exchange) async throws -> HTTPResponse {
      if request.url.path.hasSuffix("/slow") {
        let timedOut = AsyncStream.makeStream(of: Void.self)
        let disarm = exchange.whenDeadlinePasses { timedOut.continuation.finish() }
        defer { disarm() }
        for await _ in timedOut.stream {}
        throw APIError.timedOut
      }
      let body = request.body ?? Data()
      exchange.reportUploadProgress(
        TransferProgress(completedBytes: body.count / 2, expectedBytes: body.count))
      exchange.reportUploadProgress(
        TransferProgress(completedBytes: body.count, expectedBytes: body.count))
      exchange.redirectFollowed(
        status: 302, location: URL(string: "https://api.example.com/moved?token=s3cret")!)
      return HTTPResponse(status: 200, headers: [:], body: Data("{}".utf8), url: request.url)
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
      try await exchange(request, Exchange())
    }
  }

  @Test func theCallsDeadlineReachesTheTransport() async throws {
    let clock = TestClock()
    let client = APIClient(
      baseURL: url("https://api.example.com/"), transport: OutsideTransport(),
      configuration: .init(timeout: .seconds(5), clock: clock))
    let call = Task { try await client.send(Endpoint<Data>(path: "slow", decoding: .data)) }
    #expect(await clock.waitForSleepers(1))
    await clock.advance(by: .seconds(5))
    let error = await #expect(throws: APIError.self) { try await call.value }
    #expect(error?.kind == .timedOut)
  }

  @Test func progressAndRedirectsReachTheCaller() async throws {
    let listener = RecordingListener()
    let client = APIClient(
      baseURL: url("https://api.example.com/"), transport: OutsideTransport(),
      configuration: .init(eventListeners: [listener]))
    let reports = Locked<[Int]>([])
    _ = try await client.send(
      Endpoint<Data>(method: .post, path: "logs", body: .data(Data(count: 10)), decoding: .data)
    ) { progress in reports.withLock { $0.append(progress.completedBytes) } }
    #expect(reports.withLock { $0 } == [5, 10])
    let events = await listener.eventsOfOneCall()
    let redirect = events.first { $0.kind.name == "redirectFollowed" }
    guard case .redirectFollowed(let status, let location) = redirect?.kind else {
      Issue.record("no redirect was told: \(events.map(\.kind.name))")
      return
    }
    #expect(status == 302)
    #expect(location == "https://api.example.com/moved?token=<redacted>")
  }

  /// Outside a client, an exchange has no one to tell: its reports do nothing, and without a
  /// timeout its deadline never passes.
  @Test func anExchangeOutsideAClientHasNoDeadlineAndNoListeners() async throws {
    let heard = Locked<[TransferProgress]>([])
    let exchange = Exchange(uploadProgress: { progress in heard.withLock { $0.append(progress) } })
    #expect(exchange.remainingTime == nil)
    exchange.reportUploadProgress(TransferProgress(completedBytes: 3, expectedBytes: 3))
    #expect(heard.withLock { $0 } == [TransferProgress(completedBytes: 3, expectedBytes: 3)])
    exchange.redirectFollowed(status: 301, location: url("https://elsewhere.example/"))
    let timed = Exchange(timeout: .seconds(2), clock: TestClock())
    #expect(timed.remainingTime == .seconds(2))
  }
}
