import Errand
import ErrandCurl
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One way of fetching (and decoding) the small JSON document.
struct Contender: Sendable {
  var name: String
  var fetch: @Sendable () async throws -> Void
  /// For a contender measured in a process of its own (the C loop): requests per second and
  /// processor microseconds per request at a concurrency, for some seconds.
  var external: (@Sendable (Int, Double) async -> (rate: Double, cpu: Double))? = nil
}

/// One contender at one concurrency: requests per second in each round, and processor time per
/// request (microseconds) in each round.
struct Samples: Sendable {
  var rates: [Double] = []
  var cpu: [Double] = []
}

/// A URLSession data task with a session delegate and nothing else: what any delegate-based
/// client pays before its own code runs.
final class RawDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  private let lock = NSLock()
  private var pending: [Int: (data: Data, continuation: CheckedContinuation<Data, any Error>)] = [:]
  /// Set once in `init`, before any task runs.
  private(set) var session: URLSession!

  override init() {
    super.init()
    session = URLSession(
      configuration: URLSessionTransport.defaultConfiguration(), delegate: self, delegateQueue: nil)
  }

  func fetch(_ request: URLRequest) async throws -> Data {
    try await withCheckedThrowingContinuation { continuation in
      let task = session.dataTask(with: request)
      lock.withLock { pending[task.taskIdentifier] = (Data(), continuation) }
      task.resume()
    }
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    lock.withLock { pending[dataTask.taskIdentifier]?.data.append(data) }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?
  ) {
    guard let entry = lock.withLock({ pending.removeValue(forKey: task.taskIdentifier) }) else {
      return
    }
    if let error {
      entry.continuation.resume(throwing: error)
    } else {
      entry.continuation.resume(returning: entry.data)
    }
  }
}

/// Requests per second of each contender at each concurrency, rounds interleaved, medians kept.
enum Throughput {
  static func contenders(url: URL, cLoop: String?) -> [Contender] {
    let defaultSession = URLSession(configuration: .default)
    let sameSession = URLSession(configuration: URLSessionTransport.defaultConfiguration())
    let base = url.deletingLastPathComponent()
    let transport = URLSessionTransport()
    let client = APIClient(baseURL: base, transport: URLSessionTransport())
    let endpoint = Endpoint<[Dog]>(path: url.lastPathComponent)
    let request = URLRequest(url: url)
    let raw = RawDelegate()
    return [
      Contender(name: "URLSession, default configuration") {
        let (data, _) = try await defaultSession.data(for: request)
        _ = try JSONDecoder().decode([Dog].self, from: data)
      },
      Contender(name: "URLSession, Errand's configuration") {
        let (data, _) = try await sameSession.data(for: request)
        _ = try JSONDecoder().decode([Dog].self, from: data)
      },
      Contender(name: "Errand APIClient + URLSessionTransport") {
        _ = try await client.send(endpoint)
      },
      Contender(name: "raw delegate task, Errand's configuration") {
        _ = try JSONDecoder().decode([Dog].self, from: try await raw.fetch(request))
      },
      Contender(name: "URLSessionTransport alone") {
        let response = try await transport.send(HTTPRequest(url: url))
        _ = try JSONDecoder().decode([Dog].self, from: response.body)
      },
    ] + curlContenders(url: url, endpoint: endpoint, cLoop: cLoop)
      + listenerContenders(base: base, endpoint: endpoint)
  }

  /// Errand through each transport again, with one event listener that does nothing: what
  /// events cost a call (metrics are always on, in both).
  static func listenerContenders(base: URL, endpoint: Endpoint<[Dog]>) -> [Contender] {
    let configuration = APIClient.Configuration(eventListeners: [NoOpListener()])
    let client = APIClient(
      baseURL: base, transport: URLSessionTransport(), configuration: configuration)
    var contenders = [
      Contender(name: "Errand APIClient + URLSessionTransport, no-op listener") {
        _ = try await client.send(endpoint)
      }
    ]
    #if os(Linux)
      let curl = APIClient(baseURL: base, transport: CurlTransport(), configuration: configuration)
      contenders.append(
        Contender(name: "Errand APIClient + CurlTransport, no-op listener") {
          _ = try await curl.send(endpoint)
        })
    #endif
    return contenders
  }

  /// Where CurlTransport exists (Linux): through APIClient; alone, without decoding; and, given
  /// its path, the C loop over libcurl's multi interface (the ceiling, without decoding).
  static func curlContenders(url: URL, endpoint: Endpoint<[Dog]>, cLoop: String?) -> [Contender] {
    #if os(Linux)
      let client = APIClient(baseURL: url.deletingLastPathComponent(), transport: CurlTransport())
      let transport = CurlTransport()
      var contenders = [
        Contender(name: "Errand APIClient + CurlTransport") { _ = try await client.send(endpoint) },
        Contender(name: "CurlTransport alone (no decode)") {
          _ = try await transport.send(HTTPRequest(url: url))
        },
      ]
      if ProcessInfo.processInfo.environment["ERRAND_BENCHMARK_ONLY"] != nil {
        // For comparisons of the client layer: the transport's answer decoded as the client
        // decodes it (not in the report's table, whose columns are fixed).
        contenders.append(
          Contender(name: "CurlTransport alone + decode") {
            let response = try await transport.send(HTTPRequest(url: url))
            _ = try JSONDecoder().decode([Dog].self, from: response.body)
          })
      }
      if let cLoop {
        contenders.append(
          Contender(name: "C libcurl multi loop (no decode)", fetch: {}) { concurrency, seconds in
            await runCLoop(cLoop, url: url, concurrency: concurrency, seconds: seconds)
          })
      }
      return contenders
    #else
      return []
    #endif
  }

  /// Run the C loop for `seconds` and read what it measured of itself.
  static func runCLoop(
    _ path: String, url: URL, concurrency: Int, seconds: Double, extra: [String] = []
  ) async -> (rate: Double, cpu: Double) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = [url.absoluteString, "\(concurrency)", "\(seconds)"] + extra
    let output = Pipe()
    process.standardOutput = output
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
      process.terminationHandler = { _ in done.resume() }
      do {
        try process.run()
      } catch {
        process.terminationHandler = nil
        done.resume()
      }
    }
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let fields = text.split(separator: " ").compactMap {
      Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
    }
    guard fields.count == 2 else { return (0, 0) }
    return (fields[0], fields[1])
  }

  /// Completed requests per second for one contender, `concurrency` workers, for `seconds`, and
  /// the processor time per request in microseconds.
  static func measure(_ contender: Contender, concurrency: Int, seconds: Double) async -> (
    rate: Double, cpu: Double
  ) {
    if let external = contender.external {
      return await external(concurrency, seconds)
    }
    let start = now()
    let cpuStart = cpuSeconds()
    let deadline = start + seconds
    let completed = await withTaskGroup(of: Int.self) { group in
      for _ in 0..<concurrency {
        group.addTask {
          var count = 0
          while now() < deadline {
            do {
              try await contender.fetch()
              count += 1
            } catch {
              try? await Task.sleep(for: .milliseconds(1))
            }
          }
          return count
        }
      }
      return await group.reduce(0, +)
    }
    let cpu = (cpuSeconds() - cpuStart) * 1e6 / Double(max(completed, 1))
    return (Double(completed) / (now() - start), cpu)
  }

  /// The samples of each contender (in `contenders(url:)` order) at each concurrency.
  static func run(
    url: URL, cLoop: String?, concurrencies: [Int], rounds: Int, seconds: Double
  ) async -> [Int: [Samples]] {
    var contenders = contenders(url: url, cLoop: cLoop)
    let only = ProcessInfo.processInfo.environment["ERRAND_BENCHMARK_ONLY"]
    if let only {
      // For profilers: one contender alone, or a few (names separated by `|`), interleaved. A
      // part that is a whole name picks that contender only; any other part, every contender
      // whose name contains it.
      let wanted = only.split(separator: "|").map(String.init)
      let names = Set(contenders.map(\.name))
      contenders = contenders.filter { contender in
        wanted.contains { part in
          names.contains(part) ? contender.name == part : contender.name.contains(part)
        }
      }
    }
    for contender in contenders {
      _ = await measure(contender, concurrency: 4, seconds: 0.5)  // warm up connections and caches
    }
    var results: [Int: [Samples]] = [:]
    for concurrency in concurrencies {
      var samples = Array(repeating: Samples(), count: contenders.count)
      for round in 0..<rounds {
        // Interleave, and rotate who goes first, so that drift affects every contender alike.
        for offset in 0..<contenders.count {
          let index = (offset + round) % contenders.count
          let (rate, cpu) = await measure(
            contenders[index], concurrency: concurrency, seconds: seconds)
          samples[index].rates.append(rate)
          samples[index].cpu.append(cpu)
        }
      }
      results[concurrency] = samples
      if only != nil {
        for (contender, sample) in zip(contenders, samples) {
          FileHandle.standardError.write(
            Data(
              "c=\(concurrency) \(contender.name): \(range(sample.rates)) requests/s, \(range(sample.cpu)) CPU µs/request\n"
                .utf8))
        }
      }
      FileHandle.standardError.write(
        Data(
          "concurrency \(concurrency): \(samples.map { format(median($0.rates)) })\n".utf8))
    }
    return results
  }
}

/// Hears every event and does nothing with it.
struct NoOpListener: EventListener {}
