import Errand
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One way of fetching and decoding the small JSON document.
struct Contender: Sendable {
  var name: String
  var fetch: @Sendable () async throws -> Void
}

/// Requests per second of each contender at each concurrency, rounds interleaved, medians kept.
enum Throughput {
  static func contenders(url: URL) -> [Contender] {
    let defaultSession = URLSession(configuration: .default)
    let sameSession = URLSession(configuration: URLSessionTransport.defaultConfiguration())
    let base = url.deletingLastPathComponent()
    let transport = URLSessionTransport()
    let client = APIClient(baseURL: base, transport: URLSessionTransport())
    let endpoint = Endpoint<[Dog]>(path: url.lastPathComponent)
    let request = URLRequest(url: url)
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
      Contender(name: "URLSessionTransport alone") {
        let response = try await transport.send(HTTPRequest(url: url))
        _ = try JSONDecoder().decode([Dog].self, from: response.body)
      },
    ]
  }

  /// Completed requests per second for one contender, `concurrency` workers, for `seconds`.
  static func measure(_ contender: Contender, concurrency: Int, seconds: Double) async -> Double {
    let start = now()
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
    return Double(completed) / (now() - start)
  }

  /// Medians per contender per concurrency.
  static func run(url: URL, concurrencies: [Int], rounds: Int, seconds: Double) async -> [Int:
    [Double]]
  {
    let contenders = contenders(url: url)
    for contender in contenders {
      _ = await measure(contender, concurrency: 4, seconds: 0.5)  // warm up connections and caches
    }
    var results: [Int: [Double]] = [:]
    for concurrency in concurrencies {
      var samples = Array(repeating: [Double](), count: contenders.count)
      for round in 0..<rounds {
        // Interleave, and rotate who goes first, so that drift affects every contender alike.
        for offset in 0..<contenders.count {
          let index = (offset + round) % contenders.count
          samples[index].append(
            await measure(contenders[index], concurrency: concurrency, seconds: seconds))
        }
      }
      results[concurrency] = samples.map(median)
      FileHandle.standardError.write(
        Data("concurrency \(concurrency): \(results[concurrency]!.map { format($0) })\n".utf8))
    }
    return results
  }
}
