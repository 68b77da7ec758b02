import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// Every wall-clock bound of the test suite: a deadline ends its call on time through each
/// transport, while another exchange keeps URLSession busy, and fires while CPU-bound tasks hold
/// every thread of the cooperative pool. Everything else in the suite waits for events or runs on
/// a `TestClock`.
///
/// Two bounds. A deadline *fires* (the transfer ends, which the server sees on a thread of its
/// own) within ``slack`` of its time, whatever else runs: that needs no cooperative thread. The
/// call *returns* within ``deliverySlack``: handing the error back needs a free cooperative thread,
/// and while the rest of the suite starts up beside this one (all of it in its first few
/// seconds), a 2-core machine's two threads are busy. Serialized, so that these tests do not load
/// each other. Measured figures: `Benchmarks/README.md`, "Deadlines under load".
///
/// Run on its own with `ERRAND_WALL_CLOCK=1` (CI has a step for it), and skipped otherwise: beside
/// the rest of the suite on a loaded 2-core machine, URLSession's one shared work queue (which a
/// deadline's cancellation goes through on Linux) was seen busy for 16 s with the other suites'
/// large bodies, and the bound measured them, not Errand.
@Suite(
  .timeLimit(.minutes(3)), .serialized,
  .enabled(
    if: ProcessInfo.processInfo.environment["ERRAND_WALL_CLOCK"] != nil,
    "wall-clock bounds run alone: ERRAND_WALL_CLOCK=1"))
struct WallClockTests {
  /// How late a deadline may fire.
  static let slack = Duration.milliseconds(500)
  /// How late a call may return after its deadline, on a machine busy with the rest of the suite.
  static let deliverySlack = Duration.seconds(1)

  /// How long `call` took and what it threw, run at high priority, as an app runs a call a
  /// person waits for: while the rest of the suite starts up, hundreds of tests at the default
  /// priority wait for the cooperative pool's two threads, and the call's return would queue
  /// behind them.
  static func timedFailure(_ call: @escaping @Sendable () async throws -> Void) async -> (
    Duration, APIError?
  ) {
    await timed { await #expect(throws: APIError.self) { try await call() } }
  }

  /// How long `work` took and what it returned, run at high priority (see ``timedFailure(_:)``).
  static func timed<Value: Sendable>(_ work: @escaping @Sendable () async -> Value) async -> (
    Duration, Value
  ) {
    await Task(priority: .high) {
      let start = ContinuousClock.now
      let value = await work()
      return (ContinuousClock.now - start, value)
    }.value
  }

  enum Stall: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case beforeTheHead, midBody

    var testDescription: String { rawValue }

    /// A server that stalls for a minute at this point.
    func server() throws -> LoopbackServer {
      switch self {
      case .beforeTheHead:
        try LoopbackServer { _ in ScriptedResponse(delayBeforeHeaders: .seconds(60)) }
      case .midBody:
        try LoopbackServer { _ in
          ScriptedResponse(body: patternBytes(1_000), delayMidBody: .seconds(60))
        }
      }
    }
  }

  @Test(arguments: Stall.allCases, TransportKind.allCases)
  func aDeadlineEndsItsCallOnTime(_ stall: Stall, _ transport: TransportKind) async throws {
    let server = try stall.server()
    defer { server.stop() }
    let client = transport.client(server.baseURL)
    let limit = Duration.seconds(1)
    let start = ContinuousClock.now
    let (elapsed, error) = await Self.timedFailure {
      _ = try await client.send(Endpoint<Data>(path: "slow", timeout: limit, decoding: .data))
    }
    #expect(error?.kind == .timedOut, "\(String(describing: error))")
    #expect(elapsed >= limit)
    #expect(elapsed < limit + Self.deliverySlack, "returned after \(elapsed)")
    guard await server.waitForEarlyDisconnect(timeout: .seconds(5)) else {
      // Nothing to see: the deadline came before the request left (URLSession was busy).
      #expect(server.requests.isEmpty, "the server got the request but never saw the client leave")
      print("wall clock: a 1 s deadline (\(stall), \(transport)) returned after \(elapsed), unsent")
      return
    }
    let fired = try #require(server.earlyDisconnectTimes.first) - start
    #expect(fired < limit + Self.slack, "the client left after \(fired)")
    print(
      "wall clock: a 1 s deadline (\(stall), \(transport)) fired after \(fired), "
        + "returned after \(elapsed)")
  }

  /// A head of many short header lines (within libcurl's limit of 300 KB for a head), which
  /// URLSession on Linux takes seconds to read: it handles each line on its internal queue, which
  /// every session in the process shares, in time that grows with the square of their number.
  static let hugeHead =
    "HTTP/1.1 200 OK\r\n"
    + String(repeating: "X-F: v\r\n", count: 15_000)
    + "Content-Length: 2\r\nConnection: close\r\n\r\nok"

  /// Exchange H reads a huge head under a 0.5-second deadline; then exchange V, on the same
  /// transport or another one, asks a server that never answers, with a 0.3-second deadline.
  /// Both must end on time although URLSession's internal queue is still busy with H's head:
  /// creating V's task waits for that queue, and V's deadline must not.
  @Test(arguments: TransportKind.allCases, [false, true])
  func aDeadlineHoldsWhileAnotherExchangeReadsAHugeHead(
    _ transport: TransportKind, sharesTheTransport: Bool
  ) async throws {
    let huge = try LoopbackServer { _ in .raw(Self.hugeHead) }
    let silent = try LoopbackServer { _ in ScriptedResponse(delayBeforeHeaders: .seconds(60)) }
    defer {
      huge.stop()
      silent.stop()
    }
    let first = transport.make()
    let h = APIClient(baseURL: huge.baseURL, transport: first)
    let v = APIClient(
      baseURL: silent.baseURL, transport: sharesTheTransport ? first : transport.make())
    let hLimit = Duration.milliseconds(500)
    let (hElapsed, hOutcome) = await Self.timed { () -> String in
      do {
        _ = try await h.send(Endpoint<Data>(path: "h", timeout: hLimit, decoding: .data))
        return "answered"
      } catch {
        return (error as? APIError).map { "\($0.kind)" } ?? "\(error)"
      }
    }
    #expect(hElapsed < hLimit + Self.deliverySlack, "H took \(hElapsed)")
    let limit = Duration.milliseconds(300)
    let (elapsed, error) = await Self.timedFailure {
      _ = try await v.send(Endpoint<Data>(path: "v", timeout: limit, decoding: .data))
    }
    #expect(error?.kind == .timedOut, "\(String(describing: error))")
    #expect(elapsed < limit + Self.deliverySlack, "V took \(elapsed)")
    // URLSession goes on reading H's head after H ended: wait until its queue is free again, so
    // that the suites beside this one do not wait for it.
    let quick = try LoopbackServer { _ in .text("free") }
    defer { quick.stop() }
    let probe = APIClient(baseURL: quick.baseURL, transport: transport.make())
    #expect(try await probe.send(Endpoint<String>(path: "probe")) == "free")
    print(
      "wall clock: H (\(transport)) \(hOutcome) after \(hElapsed); then V (\(sharesTheTransport ? "same" : "another") "
        + "transport) ended after \(elapsed)")
  }

  /// More CPU-bound tasks than the cooperative pool has threads, none of which yields until the
  /// server has seen the client leave: the deadline must still fire (the transfer ends, which the
  /// server sees on a thread of its own). Delivering the error to the caller needs a free thread,
  /// so it comes once the tasks stop.
  @Test(arguments: TransportKind.allCases)
  func aDeadlineFiresWhileCPUBoundTasksHoldEveryThread(_ transport: TransportKind) async throws {
    let server = try LoopbackServer { _ in ScriptedResponse(delayBeforeHeaders: .seconds(60)) }
    defer { server.stop() }
    let client = transport.client(server.baseURL)
    let limit = Duration.milliseconds(500)
    let call = Task {
      try await client.send(Endpoint<Data>(path: "slow", timeout: limit, decoding: .data))
    }
    #expect(await server.waitForRequests(1))
    // The deadline started before the request reached the server, so it is due by `limit` after
    // this instant.
    let arrived = ContinuousClock.now
    let hogs = (0..<8).map { _ in
      Task.detached {
        // Spins without a suspension point; gives up after 20 seconds should the deadline never
        // fire, so that the rest of the suite can go on.
        while server.earlyDisconnects == 0, ContinuousClock.now - arrived < .seconds(20) {}
      }
    }
    for hog in hogs {
      await hog.value
    }
    let error = await #expect(throws: APIError.self) { try await call.value }
    #expect(error?.kind == .timedOut, "\(String(describing: error))")
    let left = try #require(server.earlyDisconnectTimes.first)
    #expect(left - arrived < limit + Self.slack, "the client left \(left - arrived) after")
    print(
      "wall clock: a 0.5 s deadline (\(transport)) beside 8 CPU-bound tasks: the client left "
        + "\(left - arrived) after the request arrived")
  }

  /// Buffering a body costs time in proportion to its size: four times the body may take ten
  /// times as long (or 15 s, on a busy machine), not sixteen. Copying the body so far for every
  /// chunk made 16 MB take 6 s and 64 MB more than a minute. The 256 MB row against
  /// `data(for:)` is in `Benchmarks/results-streaming.md`.
  @Test(arguments: TransportKind.allCases)
  func aBufferedBodyCostsTimeInProportionToItsSize(_ transport: TransportKind) async throws {
    let megabyte = 1 << 20
    let server = try LoopbackServer { request in
      ScriptedResponse(body: Data(count: (request.path == "/64" ? 64 : 16) * megabyte))
    }
    defer { server.stop() }
    let client = transport.client(server.baseURL)
    var times: [Duration] = []
    for size in [16, 64] {
      let (time, count) = await Self.timed {
        (try? await client.send(Endpoint<Data>(path: "\(size)", decoding: .data)).count) ?? -1
      }
      #expect(count == size * megabyte)
      times.append(time)
    }
    #expect(times[1] < max(times[0] * 10, .seconds(15)), "16 MB: \(times[0]), 64 MB: \(times[1])")
    print("wall clock: buffered 16 MB and 64 MB (\(transport)): \(times[0]), \(times[1])")
  }
  /// Hiding a secret that a body repeats costs time in proportion to the repeats: a HAR whose
  /// body repeats a bearer token 80,000 times is redacted in at most 8 times the time of one that
  /// repeats it 20,000 times (it was quadratic: 16 times, 2.7 s).
  @Test func scrubbingARepeatedSecretCostsTimeInProportionToTheRepeats() async {
    func best(_ repeats: Int) -> Duration {
      let har = HAR(entries: [
        HAR.Entry(
          startedDateTime: Date(timeIntervalSince1970: 1_700_000_000),
          request: HAR.Request(
            method: "GET", url: "https://api.example.com/v1/echo",
            headers: [HAR.Header(name: "Authorization", value: "Bearer tok-q1w2e3r4")]),
          response: HAR.Response(
            status: 200,
            content: HAR.Content(
              size: 13 * repeats, mimeType: "text/plain",
              text: String(repeating: "tok-q1w2e3r4 ", count: repeats))))
      ])
      var fastest = Duration.seconds(3600)
      for _ in 0..<3 {
        let start = ContinuousClock.now
        let redacted = har.redacted()
        fastest = min(fastest, ContinuousClock.now - start)
        #expect(redacted.log.entries[0].response.content.text?.contains("tok-q1w2e3r4") == false)
      }
      return fastest
    }
    let small = best(20_000)
    let large = best(80_000)
    #expect(large < max(small * 8, .milliseconds(50)), "20,000 repeats: \(small), 80,000: \(large)")
    print("wall clock: scrubbing 20,000 and 80,000 repeats: \(small), \(large)")
  }
}
