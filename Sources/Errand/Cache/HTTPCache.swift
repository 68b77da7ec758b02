import Foundation

/// A private HTTP cache (RFC 9111) in memory: the responses a ``CachingMiddleware`` stores, within
/// a byte budget, the least recently used dropped first. Share one between clients to share what
/// they store; it is safe to use from any task.
///
/// ```swift
/// let cache = HTTPCache(memoryBudget: 20_000_000)
/// let client = APIClient(baseURL: base, transport: URLSessionTransport(),
///                        configuration: .init(middleware: [CachingMiddleware(cache: cache)]))
/// ```
///
/// Freshness comes from `Cache-Control: max-age`, else `Expires` minus `Date`; a response
/// without either is stored only when it has a validator (`ETag`, `Last-Modified`), and is then
/// revalidated before each use (heuristic freshness is not used). Age is the response's `Age`
/// plus the time it has been stored, on the client's clock, so a test's `TestClock` ages entries
/// without waiting. Only `GET` answers are stored; `no-store` (request or response) and
/// `Vary: *` are never stored; `Vary` keeps one entry per set of the named request headers.
/// As a private cache it stores answers to requests with `Authorization` (RFC 9111 §3.5 limits
/// shared caches only), in memory only.
public final class HTTPCache: Sendable {
  /// The most bytes (bodies and headers) the cache keeps.
  public let memoryBudget: Int
  private let store = Locked(CacheStore())

  /// Create an empty cache.
  /// - Parameter memoryBudget: The most bytes to keep; 10 MB by default. A response larger than
  ///   the whole budget is not stored.
  public init(memoryBudget: Int = 10 * 1024 * 1024) {
    self.memoryBudget = max(0, memoryBudget)
  }

  /// How many responses are stored.
  public var count: Int {
    store.withLock { $0.entries.values.reduce(0) { $0 + $1.count } }
  }

  /// How many bytes the stored responses take.
  public var storedBytes: Int {
    store.withLock { $0.bytes }
  }

  /// Drop every stored response.
  public func removeAll() {
    store.withLock { $0 = CacheStore() }
  }

  /// The stored response that answers `request`, marked as used.
  func lookup(_ request: HTTPRequest) -> CacheEntry? {
    store.withLock { $0.lookup(request) }
  }

  /// Store `entry`, replacing the variant it matches, and drop the least recently used entries
  /// until the budget holds.
  func insert(_ entry: CacheEntry) {
    guard entry.cost <= memoryBudget else { return }
    store.withLock { $0.insert(entry, budget: memoryBudget) }
  }

  /// Drop every response stored for `url`.
  func invalidate(_ url: URL) {
    store.withLock { $0.remove(CacheEntry.key(for: url)) }
  }
}

/// The cache's state: variants by URL, bytes used, and a use counter for least-recent eviction.
struct CacheStore {
  var entries: [String: [CacheEntry]] = [:]
  var bytes = 0
  private var uses = 0

  mutating func lookup(_ request: HTTPRequest) -> CacheEntry? {
    let key = CacheEntry.key(for: request.url)
    guard let index = entries[key]?.firstIndex(where: { $0.matches(request) }) else { return nil }
    uses += 1
    entries[key]?[index].lastUse = uses
    return entries[key]?[index]
  }

  mutating func insert(_ entry: CacheEntry, budget: Int) {
    var entry = entry
    uses += 1
    entry.lastUse = uses
    var variants = entries[entry.key] ?? []
    if let index = variants.firstIndex(where: { $0.varying == entry.varying }) {
      bytes -= variants[index].cost
      variants.remove(at: index)
    }
    variants.append(entry)
    entries[entry.key] = variants
    bytes += entry.cost
    while bytes > budget, let oldest = oldest() {
      bytes -= entries[oldest.key]?[oldest.index].cost ?? 0
      entries[oldest.key]?.remove(at: oldest.index)
      if entries[oldest.key]?.isEmpty == true {
        entries[oldest.key] = nil
      }
    }
  }

  mutating func remove(_ key: String) {
    bytes -= entries[key]?.reduce(0) { $0 + $1.cost } ?? 0
    entries[key] = nil
  }

  private func oldest() -> (key: String, index: Int)? {
    var found: (key: String, index: Int, use: Int)?
    for (key, variants) in entries {
      for (index, entry) in variants.enumerated() where entry.lastUse < found?.use ?? .max {
        found = (key, index, entry.lastUse)
      }
    }
    return found.map { ($0.key, $0.index) }
  }
}
