import Errand
import ErrandCurl
import ErrandStubs
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One streaming scenario per process, so that each peak resident size is its own:
/// `errand-benchmarks --streaming NAME --url http://127.0.0.1:PORT --path FILE`. Prints one
/// line: `name seconds bytes events peakKB`.
enum Streaming {
  /// CurlTransport where it exists; URLSessionTransport elsewhere.
  static func curlTransport() -> any Transport {
    #if os(Linux)
      CurlTransport()
    #else
      URLSessionTransport()
    #endif
  }

  static func run(_ name: String, url: URL, path: String) async throws {
    let start = now()
    var bytes = 0
    var events = 0
    // A `-curl` suffix runs the scenario through CurlTransport (Linux).
    let usesCurl = name.hasSuffix("-curl")
    let transport: any Transport = usesCurl ? curlTransport() : URLSessionTransport()
    switch usesCurl ? String(name.dropLast(5)) : name {
    case "download":
      let destination = FileManager.default.temporaryDirectory.appendingPathComponent(
        "errand-bench-\(UUID().uuidString)")
      defer { try? FileManager.default.removeItem(at: destination) }
      let client = APIClient(baseURL: url, transport: transport)
      let saved = try await client.download(
        Endpoint<Data>(path: path, timeout: .seconds(600), decoding: .data), to: destination)
      bytes =
        (try FileManager.default.attributesOfItem(atPath: saved.value.path)[.size] as? Int) ?? 0
    case "slow-stream":
      let client = APIClient(baseURL: url, transport: transport)
      for try await chunk in try await client.stream(Endpoint<Data>(path: path, decoding: .data)) {
        bytes += chunk.count
        try await Task.sleep(for: .milliseconds(1))
      }
      events = bytes  // reported as chunks below
    case "sse":
      let client = APIClient(baseURL: url, transport: URLSessionTransport())
      for try await event in try await client.events(Endpoint<Data>(path: path, decoding: .data)) {
        bytes += event.data.utf8.count
        events += 1
      }
    case "sse-stub":
      let clock = TestClock()
      let stub = StubTransport(clock: clock)
      let count = 10_000
      await stub.on(
        .get, "/feed",
        .events(
          (0..<count).map { ServerSentEvent(event: "dog", data: #"{"id":\#($0)}"#, id: "\($0)") },
          interval: .seconds(1)))
      let client = APIClient(baseURL: URL(string: "https://stub.example")!, transport: stub)
      let driver = Task {
        while !Task.isCancelled {
          guard await clock.waitForSleepers(1, timeout: .seconds(1)) else { continue }
          await clock.advance(by: .seconds(1))
        }
      }
      for try await event in try await client.events(Endpoint<Data>(path: "feed", decoding: .data))
      {
        bytes += event.data.utf8.count
        events += 1
      }
      driver.cancel()
    case "buffered":
      // The whole body in memory through `send`, its limit raised past it.
      let client = APIClient(
        baseURL: url, transport: transport,
        configuration: APIClient.Configuration(timeout: .seconds(600), maximumResponseSize: 1 << 31)
      )
      bytes = try await client.send(Endpoint<Data>(path: path, decoding: .data)).count
    case "buffered-baseline":
      // The same body with URLSession's own `data(for:)`: what a buffered call should cost.
      let session = URLSession(configuration: .ephemeral)
      bytes = try await session.data(for: URLRequest(url: url.appendingPathComponent(path))).0.count
    case "urlsession-baseline":
      // URLSession alone, with a session delegate that only counts: what FoundationNetworking
      // holds by itself for the same transfer.
      let counter = CountingDelegate()
      let session = URLSession(configuration: .ephemeral, delegate: counter, delegateQueue: nil)
      bytes = await counter.run(session.dataTask(with: url.appendingPathComponent(path)))
    case "limit":
      let client = APIClient(
        baseURL: url, transport: URLSessionTransport(),
        configuration: APIClient.Configuration(maximumResponseSize: 1_000_000))
      do {
        bytes = try await client.send(Endpoint<Data>(path: path, decoding: .data)).count
      } catch let error as APIError where error.urlError?.code == .dataLengthExceedsMaximum {
        events = 1  // the expected outcome
      }
    default:
      FileHandle.standardError.write(Data("unknown scenario \(name)\n".utf8))
      exit(2)
    }
    if name == "slow-stream" { events = 0 }
    print(name, format(now() - start, decimals: 3), bytes, events, peakResidentKilobytes() ?? -1)
  }

  /// The process's peak resident set size, from `getrusage` (what `/proc`'s `VmHWM` says on
  /// Linux; Darwin has no `/proc`).
  static func peakResidentKilobytes() -> Int? {
    var usage = rusage()
    #if canImport(Darwin)
      guard getrusage(RUSAGE_SELF, &usage) == 0 else { return nil }
      return Int(usage.ru_maxrss) / 1024  // bytes on Darwin
    #else
      guard getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0 else { return nil }
      return Int(usage.ru_maxrss)  // kilobytes on Linux (glibc)
    #endif
  }
}

/// Counts the bytes of one task and says when it ends; nothing else.
final class CountingDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  private let lock = NSLock()
  private var count = 0
  private var finish: CheckedContinuation<Int, Never>?

  func run(_ task: URLSessionTask) async -> Int {
    await withCheckedContinuation { continuation in
      lock.withLock { finish = continuation }
      task.resume()
    }
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    lock.withLock { count += data.count }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?
  ) {
    let (continuation, total) = lock.withLock { (finish, count) }
    continuation?.resume(returning: total)
  }
}
