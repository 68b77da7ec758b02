import Errand
import Foundation

/// The HTTP cache: `send` answered by a fresh stored response, against the same `send` going to
/// the server, and against a revalidation (a `304` from nginx); rounds interleaved, microseconds
/// per request, through `URLSessionTransport`. Then the memory that 10,000 stored responses of
/// the benchmark's JSON take.
enum CacheBenchmark {
  /// `base` serves `dogs.json` (no caching headers), `cached/dogs.json` (an hour fresh) and
  /// `revalidated/dogs.json` (`no-cache`, with nginx's `ETag`).
  static func run(base: URL, rounds: Int, iterations: Int) async throws -> String {
    let plain = APIClient(baseURL: base, transport: URLSessionTransport())
    let cache = HTTPCache()
    let cached = APIClient(
      baseURL: base, transport: URLSessionTransport(),
      configuration: APIClient.Configuration(middleware: [CachingMiddleware(cache: cache)]))
    let variants: [(String, APIClient, String)] = [
      ("network round trip, no cache", plain, "dogs.json"),
      ("revalidated (`no-cache`, nginx answers `304`)", cached, "revalidated/dogs.json"),
      ("cached hit", cached, "cached/dogs.json"),
    ]
    var samples = Array(repeating: [Double](), count: variants.count)
    for (_, client, path) in variants {
      _ = try await client.send(Endpoint<[Dog]>(path: path))  // warm up, and store
    }
    for round in 0..<rounds {
      for offset in 0..<variants.count {
        let index = (offset + round) % variants.count
        let (_, client, path) = variants[index]
        let endpoint = Endpoint<[Dog]>(path: path)
        let start = now()
        for _ in 0..<iterations { _ = try await client.send(endpoint) }
        samples[index].append((now() - start) * 1e6 / Double(iterations))
      }
    }
    var report = """

      ## HTTP cache (µs per `send` of the 10-dog JSON through URLSessionTransport, decoded; median (min–max) of \(rounds) interleaved rounds of \(iterations))

      | Answered by | µs per request | / network round trip |
      | --- | ---: | ---: |

      """
    for (index, (label, _, _)) in variants.enumerated() {
      let ratios = zip(samples[index], samples[0]).map { $0 / max($1, 1e-9) }
      report +=
        "| \(label) | \(range(samples[index], decimals: 1)) | \(range(ratios, decimals: 3)) |\n"
    }
    report += try await memory(of: 10_000)
    return report
  }

  /// The resident memory that `count` stored responses of the benchmark's JSON take.
  static func memory(of count: Int) async throws -> String {
    let body = try JSONEncoder().encode(
      (0..<10).map { Dog(id: $0, name: "Dog \($0)", breed: "Labrador", age: $0, price: 100) })
    /// Answers every request alike and keeps no journal (a stub's would count here).
    struct Fixed: Transport {
      let body: Data
      func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        HTTPResponse(status: 200, headers: ["Cache-Control": "max-age=3600"], body: body)
      }
    }
    let cache = HTTPCache(memoryBudget: 1 << 30)
    let client = APIClient(
      baseURL: URL(string: "https://api.example.com/v1")!, transport: Fixed(body: body),
      configuration: APIClient.Configuration(middleware: [CachingMiddleware(cache: cache)]))
    let before = Soak.residentMegabytes()
    for id in 0..<count {
      _ = try await client.response(for: Endpoint<Data>(path: "dogs/\(id)", decoding: .data))
    }
    let after = Soak.residentMegabytes()
    return """

      \(count) stored responses (\(body.count) B bodies, headers and request kept): \
      \(format(Double(cache.storedBytes) / 1e6, decimals: 1)) MB counted against the budget, \
      \(format(after - before, decimals: 1)) MB more resident memory.

      """
  }

  private static func range(_ values: [Double], decimals: Int) -> String {
    "\(format(median(values), decimals: decimals)) (\(format(values.min() ?? 0, decimals: decimals))–\(format(values.max() ?? 0, decimals: decimals)))"
  }
}
