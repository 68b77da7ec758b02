import Errand
import Foundation

/// `HTTPCache` in memory, without a network: calls through `CachingMiddleware.intercept` whose
/// `next` answers at once, so that what is timed is the cache's lookup and insert. Per call, in
/// ns, with 10, 10,000 and 100,000 entries stored, the cache full (each miss stores its answer
/// and evicts the least recently used entry), rounds interleaved; and a hit at the same sizes.
/// Then, in a process of its own (`--cache-store memory`), the resident memory stored answers
/// take against what `storedBytes` counts for them.
enum CacheStoreBenchmark {
  static let sizes = [10, 10_000, 100_000]

  /// A full cache of `size` small answers, and the next id to ask for.
  final class Full {
    let size: Int
    let cache: HTTPCache
    let middleware: CachingMiddleware
    var next = 0

    init(size: Int, costPerEntry: Int) async throws {
      self.size = size
      cache = HTTPCache(memoryBudget: size * costPerEntry)
      middleware = CachingMiddleware(cache: cache)
      for _ in 0..<size {
        try await miss()
      }
      guard cache.count == size else {
        throw CocoaError(.featureUnsupported, userInfo: ["count": cache.count, "size": size])
      }
    }

    /// A URL not stored yet: looked up (a miss), answered and stored, evicting the oldest.
    func miss() async throws {
      _ = try await middleware.intercept(CacheStoreBenchmark.request(next)) { _ in
        CacheStoreBenchmark.answer
      }
      next += 1
    }

    /// One of the URLs stored last (after `newest` misses in a row, the newest `newest` entries
    /// are the most recently used, so all stored; a hit evicts nothing), spread over them: a hit.
    func hit(_ call: Int, newest: Int) async throws {
      let id = next - 1 - (call &* 7_919) % min(size, newest)
      _ = try await middleware.intercept(CacheStoreBenchmark.request(id)) { _ in
        throw CocoaError(.featureUnsupported)  // a hit never asks the network
      }
    }
  }

  static let answer = HTTPResponse(
    status: 200, headers: ["Cache-Control": "max-age=3600"], body: Data("{}".utf8))

  /// `GET` of item `id`; every URL has the same length, so every entry costs the same.
  static func request(_ id: Int) -> HTTPRequest {
    let digits = String(id)
    let padded = String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    return HTTPRequest(url: URL(string: "https://api.example.com/v1/items/\(padded)")!)
  }

  static func run(rounds: Int, calls: Int) async throws -> String {
    let probe = HTTPCache(memoryBudget: 1 << 40)
    _ = try await CachingMiddleware(cache: probe).intercept(request(0)) { _ in answer }
    let costPerEntry = probe.storedBytes
    var caches: [Full] = []
    for size in sizes {
      caches.append(try await Full(size: size, costPerEntry: costPerEntry))
    }
    var misses = Array(repeating: [Double](), count: sizes.count)
    var hits = Array(repeating: [Double](), count: sizes.count)
    for round in 0..<rounds {
      for offset in 0..<sizes.count {
        let index = (offset + round) % sizes.count
        let full = caches[index]
        var start = now()
        for _ in 0..<calls { try await full.miss() }
        misses[index].append((now() - start) * 1e9 / Double(calls))
        start = now()
        for call in 0..<calls { try await full.hit(call, newest: calls) }
        hits[index].append((now() - start) * 1e9 / Double(calls))
      }
    }
    var report = """

      ## HTTPCache in memory (ns per call through `CachingMiddleware.intercept`, `next` answering at once; median (min–max) of \(rounds) interleaved rounds of \(calls) calls)

      Each entry counts \(costPerEntry) bytes against the budget; the cache is full, so a miss
      stores its answer and evicts the least recently used entry.

      | Entries stored | miss: lookup + insert + eviction | hit: lookup |
      | ---: | ---: | ---: |

      """
    for (index, size) in sizes.enumerated() {
      report += "| \(format(Double(size))) | \(range(misses[index])) | \(range(hits[index])) |\n"
    }
    return report
  }

  /// Resident memory against `storedBytes`: `count` empty answers stored with an ample budget,
  /// then 60 `GET`s carrying 2 MB request bodies into a 1 MB cache.
  static func memory(count: Int) async throws -> String {
    var report = ""
    let empty = HTTPResponse(status: 200, headers: ["Cache-Control": "max-age=3600"])
    let ample = HTTPCache(memoryBudget: 1 << 40)
    let middleware = CachingMiddleware(cache: ample)
    var before = Soak.residentMegabytes()
    for id in 0..<count {
      _ = try await middleware.intercept(request(id)) { _ in empty }
    }
    var after = Soak.residentMegabytes()
    report += """
      \(format(Double(count))) empty answers: \(format((after - before) * 1_048_576 / Double(count))) \
      bytes of resident memory each, \(format(Double(ample.storedBytes) / Double(count))) counted \
      (\(String(format: "%.1f", after - before)) MB resident, \
      \(String(format: "%.1f", Double(ample.storedBytes) / 1_048_576)) MB counted).

      """
    ample.removeAll()
    let small = HTTPCache(memoryBudget: 1_000_000)
    let smallMiddleware = CachingMiddleware(cache: small)
    before = Soak.residentMegabytes()
    for id in 0..<60 {
      var request = request(count + id)
      request.body = Data(repeating: 1, count: 2_000_000)
      _ = try await smallMiddleware.intercept(request) { _ in answer }
    }
    after = Soak.residentMegabytes()
    report += """
      60 GETs with 2 MB request bodies into a 1 MB cache: \(small.count) stored, \
      storedBytes \(format(Double(small.storedBytes))), \
      \(String(format: "%.1f", after - before)) MB more resident memory.

      """
    return report
  }

  private static func range(_ values: [Double]) -> String {
    "\(format(median(values))) (\(format(values.min() ?? 0))–\(format(values.max() ?? 0)))"
  }
}
