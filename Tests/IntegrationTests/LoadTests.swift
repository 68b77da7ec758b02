import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// Load, a cancellation storm and the fault matrix's file descriptors, measured with nothing
/// else running: CI runs this suite on its own with `ERRAND_LOAD=1` (it is skipped otherwise),
/// and it prints what it measured.
@Suite(
  .timeLimit(.minutes(10)), .serialized,
  .enabled(if: ProcessInfo.processInfo.environment["ERRAND_LOAD"] != nil),
  // Its descriptor and memory checks read /proc, which Darwin does not have: there they would
  // pass without measuring anything, so the suite does not run.
  .enabled(
    if: FileManager.default.fileExists(atPath: "/proc/self/status"), "reads /proc (Linux only)"))
struct LoadTests {
  /// Open file descriptors and resident memory of this process (Linux; 0 where unknown).
  static func usage() -> (descriptors: Int, residentKB: Int) {
    (ProcessUsage.descriptors, ProcessUsage.residentKB)
  }

  /// Wait until the descriptor count falls to `limit` (sockets close in the background).
  static func settle(to limit: Int) async -> Int {
    for _ in 0..<50 {
      let now = usage().descriptors
      if now <= limit { return now }
      try? await Task.sleep(for: .milliseconds(100))
    }
    return usage().descriptors
  }

  static func percentile(_ sorted: [Duration], _ p: Double) -> Duration {
    guard !sorted.isEmpty else { return .zero }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
  }

  @Test func tenThousandRequestsAtSixtyFourConcurrent() async throws {
    let server = try LoopbackServer { _ in .json(#"{"name":"Rex"}"#) }
    defer { server.stop() }
    let client = liveClient(server.baseURL)
    _ = try await client.send(Endpoint<Dog>(path: "warm-up"))
    let before = Self.usage()
    let started = ContinuousClock.now
    var latencies: [Duration] = []
    var failures: [String] = []
    try await withThrowingTaskGroup(of: (Duration, String?).self) { group in
      var sent = 0
      func send() {
        group.addTask {
          let start = ContinuousClock.now
          do {
            _ = try await client.send(Endpoint<Dog>(path: "dogs"))
            return (ContinuousClock.now - start, nil)
          } catch {
            return (ContinuousClock.now - start, "\(error)")
          }
        }
        sent += 1
      }
      for _ in 0..<64 { send() }
      while let (latency, failure) = try await group.next() {
        latencies.append(latency)
        if let failure { failures.append(failure) }
        if sent < 10_000 { send() }
      }
    }
    let elapsed = ContinuousClock.now - started
    let after = Self.usage()
    let settled = await Self.settle(to: before.descriptors + 4)
    latencies.sort()
    print(
      "load: 10000 requests, 64 concurrent, \(failures.count) failures, \(elapsed), "
        + "p50 \(Self.percentile(latencies, 0.5)), p99 \(Self.percentile(latencies, 0.99)), "
        + "fds \(before.descriptors) -> \(after.descriptors) -> \(settled), "
        + "RSS \(before.residentKB) KB -> \(after.residentKB) KB")
    #expect(failures.isEmpty, "\(failures.prefix(3))")
    #expect(latencies.count == 10_000)
    #expect(settled <= before.descriptors + 4)
  }

  @Test func aThousandCancellationsEndCancelledAtOnce() async throws {
    let server = try LoopbackServer { _ in ScriptedResponse(delayBeforeHeaders: .seconds(30)) }
    defer { server.stop() }
    let client = liveClient(server.baseURL)
    let before = Self.usage()
    let calls = (0..<1_000).map { _ in
      Task { () -> (APIError.Kind?, ContinuousClock.Instant) in
        do {
          _ = try await client.send(Endpoint<Data>(path: "slow", decoding: .data))
          return (nil, .now)
        } catch {
          return ((error as? APIError)?.kind, .now)
        }
      }
    }
    // Every call in flight (URLSession sends 16 per host; the rest wait in its queue).
    _ = await server.waitForRequests(16)
    try await Task.sleep(for: .seconds(1))
    let cancelled = ContinuousClock.now
    for call in calls { call.cancel() }
    var kinds: [APIError.Kind?] = []
    var latencies: [Duration] = []
    for call in calls {
      let (kind, ended) = await call.value
      kinds.append(kind)
      latencies.append(ended - cancelled)
    }
    let settled = await Self.settle(to: before.descriptors + 4)
    latencies.sort()
    print(
      "cancellation storm: 1000 calls, \(kinds.filter { $0 == .cancelled }.count) cancelled, "
        + "p50 \(Self.percentile(latencies, 0.5)), p99 \(Self.percentile(latencies, 0.99)), "
        + "max \(latencies.last ?? .zero), fds \(before.descriptors) -> \(settled)")
    #expect(kinds.allSatisfy { $0 == .cancelled })
    #expect(Self.percentile(latencies, 0.99) < .seconds(1))
    #expect(settled <= before.descriptors + 4)
  }

  @Test func theFaultMatrixLeavesNoDescriptorOpen() async throws {
    let before = Self.usage().descriptors
    for fault in FaultMatrixTests.faults {
      let server = try LoopbackServer(fault.script)
      var endpoint = Endpoint<Data>(path: "fault", timeout: fault.timeout, decoding: .data)
      endpoint.maximumResponseSize = fault.maximumResponseSize
      _ = try? await liveClient(server.baseURL).send(endpoint)
      server.stop()
    }
    let settled = await Self.settle(to: before + 4)
    print("fault matrix: fds \(before) -> \(settled)")
    #expect(settled <= before + 4)
  }

  /// A deadline never waits for another exchange: while one response keeps the session busy, a
  /// request with a 300 ms timeout still ends at 300 ms.
  @Test func anIndependentDeadlineFiresOnTimeWhileAnotherExchangeIsBusy() async throws {
    let busy = try LoopbackServer { _ in
      .chunks(Array(repeating: patternBytes(64 * 1024), count: 2_000), interval: .milliseconds(1))
    }
    defer { busy.stop() }
    let stalled = try LoopbackServer { _ in ScriptedResponse(delayBeforeHeaders: .seconds(30)) }
    defer { stalled.stop() }
    let transport = URLSessionTransport()
    let reader = Task {
      let client = APIClient(baseURL: busy.baseURL, transport: transport)
      for try await _ in try await client.stream(Endpoint<Data>(path: "big", decoding: .data)) {}
    }
    defer { reader.cancel() }
    _ = await busy.waitForRequests(1)
    var late: [Duration] = []
    for _ in 0..<5 {
      let started = ContinuousClock.now
      let error = await #expect(throws: APIError.self) {
        _ = try await APIClient(baseURL: stalled.baseURL, transport: transport).send(
          Endpoint<Data>(path: "slow", timeout: .milliseconds(300), decoding: .data))
      }
      #expect(error?.kind == .timedOut)
      late.append(ContinuousClock.now - started - .milliseconds(300))
    }
    print("independent deadline while another exchange is busy: late by \(late)")
    #expect(late.allSatisfy { $0 < .milliseconds(500) })
  }
}
