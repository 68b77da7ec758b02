import Errand
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// 10,000 calls through call limits and shared in-flight requests, on each transport over a real
/// socket: none fails, the server never has more exchanges at once than the per-host limit,
/// identical calls share, nothing stays listed, and the process's threads and memory stay
/// bounded. Measured with nothing else running: CI runs it with `ERRAND_LOAD=1` (it is skipped
/// otherwise), and it prints what it measured.
@Suite(
  .timeLimit(.minutes(10)), .serialized,
  .enabled(if: ProcessInfo.processInfo.environment["ERRAND_LOAD"] != nil),
  .enabled(
    if: FileManager.default.fileExists(atPath: "/proc/self/status"), "reads /proc (Linux only)"))
struct CallControlLoadTests {
  /// Threads and resident memory of this process.
  static func usage() -> (threads: Int, residentKB: Int) {
    (ProcessUsage.threads, ProcessUsage.residentKB)
  }

  @Test(arguments: TransportKind.allCases)
  func tenThousandCallsThroughLimitsAndSharing(_ kind: TransportKind) async throws {
    let inside = Locked((now: 0, most: 0, requests: 0))
    let server = try LoopbackServer { _ in
      inside.withLock {
        $0.now += 1
        $0.most = max($0.most, $0.now)
        $0.requests += 1
      }
      defer { inside.withLock { $0.now -= 1 } }
      // A little work, so that exchanges overlap.
      Thread.sleep(forTimeInterval: 0.002)
      return .json(#"["Rex"]"#)
    }
    defer { server.stop() }
    var configuration = APIClient.Configuration()
    configuration.callLimits = CallLimits(maximumCalls: 12, maximumCallsPerHost: 8)
    configuration.sharesInFlightRequests = true
    let client = kind.client(server.baseURL, configuration: configuration)
    _ = try await client.send(Endpoint<[String]>(path: "warm-up"))
    let before = Self.usage()
    let started = ContinuousClock.now
    var failures: [String] = []
    var done = 0
    try await withThrowingTaskGroup(of: String?.self) { group in
      var sent = 0
      func send() {
        let path = "dogs/\(sent % 50)"
        group.addTask {
          do {
            _ = try await client.send(Endpoint<[String]>(path: path))
            return nil
          } catch {
            return "\(error)"
          }
        }
        sent += 1
      }
      for _ in 0..<256 { send() }
      while let failure = try await group.next() {
        done += 1
        if let failure { failures.append(failure) }
        if sent < 10_000 { send() }
      }
    }
    let elapsed = ContinuousClock.now - started
    let after = Self.usage()
    let (most, requests) = inside.withLock { ($0.most, $0.requests) }
    print(
      "call control load (\(kind)): 10000 calls, 256 at once, \(failures.count) failures, "
        + "\(elapsed), \(requests - 1) requests reached the server, at most \(most) at once, "
        + "threads \(before.threads) -> \(after.threads), "
        + "RSS \(before.residentKB) KB -> \(after.residentKB) KB")
    #expect(failures.isEmpty, "\(failures.prefix(3))")
    #expect(done == 10_000)
    #expect(most <= 8)
    #expect(requests - 1 < 10_000, "identical calls in flight shared")
    #expect(client.inFlight.isEmpty)
    #expect(after.threads - before.threads < 64)
    #expect(after.residentKB - before.residentKB < 200_000)
  }
}
