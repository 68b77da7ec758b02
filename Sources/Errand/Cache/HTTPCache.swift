import Foundation

/// A private HTTP cache (RFC 9111): the responses a ``CachingMiddleware`` stores, in memory within
/// a byte budget and, when given a folder, on disk within another, the least recently used
/// dropped first. Share one between clients of the same user to share what they store; it is safe
/// to use from any task.
///
/// ```swift
/// let cache = HTTPCache(memoryBudget: 20_000_000, directory: cachesFolder.appendingPathComponent("api"))
/// let client = APIClient(baseURL: base, transport: URLSessionTransport(),
///                        configuration: .init(middleware: [CachingMiddleware(cache: cache)]))
/// ```
///
/// Freshness comes from `Cache-Control: max-age`, else `Expires` minus `Date`, else, only when
/// `heuristicFreshness` is set, that fraction of the time since `Last-Modified` (at most a day);
/// a response with none of these is stored only when it has a validator (`ETag`,
/// `Last-Modified`), and is then revalidated before each use. Age is the response's `Age`
/// plus the time it has been stored, on the client's clock, so a test's `TestClock` ages entries
/// without waiting (a response read back from disk is first aged by the wall time it spent
/// there). Only `GET` answers are stored; `no-store` (request or response) and `Vary: *` are never
/// stored; `Vary` keeps one entry per set of the named request headers. As a private cache it
/// stores answers to requests with `Authorization` (RFC 9111 §3.5 limits shared caches only) in
/// memory; on disk only when `storesAuthenticatedResponsesOnDisk` says so.
///
/// On disk, nothing secret is written: files are named by hashes of the URL (which is not
/// written), the headers a request's ``HTTPRequest/redaction`` hides (`Authorization`, `Cookie`,
/// `Set-Cookie`, your API key headers) are left out, and a response that varies on one stays in
/// memory. Files are written atomically behind a version marker; one that does not read back is a
/// miss and is removed.
public final class HTTPCache: Sendable {
  /// The most bytes the cache keeps in memory: the answers' bodies and headers, and what each
  /// entry keeps of the request it answers (URL, headers, the values `Vary` names).
  public let memoryBudget: Int
  /// The fraction of the time since `Last-Modified` a response without `max-age` or `Expires`
  /// stays fresh (RFC 9111 §4.2.2; 0.1 is usual), or `nil` (the default) for none.
  public let heuristicFreshness: Double?
  /// The folder of the disk store, or `nil` for memory only.
  public var directory: URL? { disk?.directory }
  private let store = Locked(CacheStore())
  private let disk: DiskCacheStore?

  /// Create a cache.
  /// - Parameters:
  ///   - memoryBudget: The most bytes to keep in memory; 10 MB by default. A response larger than
  ///     the whole budget is not stored.
  ///   - directory: A folder of its own for the disk store (created if missing; what is in it from
  ///     another version of the store is removed), or `nil` (the default) for memory only.
  ///   - diskBudget: The most bytes of files on disk; 50 MB by default.
  ///   - storesAuthenticatedResponsesOnDisk: Whether answers to requests that carry credentials
  ///     (a header the request's redaction hides) may be written to disk, without those headers;
  ///     `false` by default.
  ///   - heuristicFreshness: The fraction of the time since `Last-Modified` that a response
  ///     without explicit freshness stays fresh, at most a day; `nil` (the default) for none.
  public init(
    memoryBudget: Int = 10 * 1024 * 1024, directory: URL? = nil, diskBudget: Int = 50 * 1024 * 1024,
    storesAuthenticatedResponsesOnDisk: Bool = false, heuristicFreshness: Double? = nil
  ) {
    self.memoryBudget = max(0, memoryBudget)
    self.heuristicFreshness = heuristicFreshness.map { min(max($0, 0), 1) }
    disk = directory.map {
      DiskCacheStore(
        directory: $0, budget: diskBudget,
        storesAuthenticatedResponses: storesAuthenticatedResponsesOnDisk)
    }
  }

  /// How many responses are stored in memory.
  public var count: Int {
    store.withLock { $0.entries.values.reduce(0) { $0 + $1.count } }
  }

  /// How many bytes the responses stored in memory take, with the requests they answer.
  public var storedBytes: Int {
    store.withLock { $0.bytes }
  }

  /// Drop every stored response, in memory and on disk.
  public func removeAll() {
    store.withLock { $0 = CacheStore() }
    disk?.removeAll()
  }

  /// The stored response that answers `request` (from memory, else from disk, then kept in
  /// memory), marked as used.
  func lookup(_ request: HTTPRequest, clock: any Clock<Duration>) -> CacheEntry? {
    if let entry = store.withLock({ $0.lookup(request) }) {
      return entry
    }
    guard let entry = disk?.lookup(request, clock: clock) else { return nil }
    if entry.cost <= memoryBudget {
      store.withLock { $0.insert(entry, budget: memoryBudget) }
    }
    return entry
  }

  /// Store `entry`, replacing the variant it matches, in memory and on disk.
  func insert(_ entry: CacheEntry) {
    if entry.cost <= memoryBudget {
      store.withLock { $0.insert(entry, budget: memoryBudget) }
    }
    disk?.insert(entry, redaction: .default)
  }

  /// Drop every response stored for `url`.
  func invalidate(_ url: URL) {
    store.withLock { $0.remove(CacheEntry.key(for: url)) }
    disk?.invalidate(url)
  }
}

/// The cache's state: variants by URL, bytes used, and a use counter for least-recent eviction.
struct CacheStore {
  var entries: [String: [CacheEntry]] = [:]
  var bytes = 0
  private var uses = 0

  mutating func lookup(_ request: HTTPRequest) -> CacheEntry? {
    let key = CacheEntry.key(for: request.url)
    // Variants are kept oldest first: of several that match, the most recent answers (RFC 9111
    // §4.1), such as one stored after the server began to send `Vary`.
    guard let index = entries[key]?.lastIndex(where: { $0.matches(request) }) else { return nil }
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
