import Foundation

/// A private HTTP cache (RFC 9111): the responses a ``CachingMiddleware`` stores, in memory within
/// a byte budget and, when given a folder, on disk within another, the least recently used
/// dropped first. Share one between clients of the same user to share what they store; it is safe
/// to use from any task.
///
/// ```swift
/// let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask)[0]
///   .appendingPathComponent(Bundle.main.bundleIdentifier ?? "com.example.dogs")  // this app's own
/// let cache = HTTPCache(memoryBudget: 20_000_000, directory: caches.appendingPathComponent("api"))
/// let client = APIClient(baseURL: base, transport: URLSessionTransport(),
///                        configuration: .init(middleware: [CachingMiddleware(cache: cache)]))
/// ```
///
/// What is stored (RFC 9111 §3): `GET` answers with a final status (never a `206` part), with
/// explicit freshness (`max-age`, `Expires`), `public` or `private`, or a heuristically
/// cacheable status (RFC 9110 §15.1: `200`, `203`, `204`, `300`, `301`, `308`, `404`, `405`,
/// `410`, `414`, `501`): so a `302` or a `503` with `max-age` is stored, a `403` with
/// `Last-Modified` alone is not. `no-store` (request or response) and `Vary: *` are never stored
/// (`must-understand` lets `no-store` be ignored for a status RFC 9110 defines). The hop-by-hop
/// headers (`Connection`, those it names, `Keep-Alive`, `TE`, `Transfer-Encoding`, `Upgrade`),
/// the proxy's (`Proxy-*`), those a `no-cache="…"` names, and `Set-Cookie` are never stored.
///
/// Freshness comes from `Cache-Control: max-age`, else `Expires` minus `Date` (an `Expires` that
/// is not exactly an HTTP date means already expired), else, only when `heuristicFreshness` is
/// set and the status is heuristically cacheable or the response `public`, that fraction of the
/// time since `Last-Modified` (at most a day); a response with none of these is stored only when
/// it has a validator (`ETag`, `Last-Modified`), and is then revalidated before each use. Its age
/// is RFC 9111 §4.2.3's: the larger of its `Age` (plus the time it took to arrive) and the time
/// since its `Date`, plus the time it has been stored, on the client's clock, so a test's
/// `TestClock` ages entries without waiting (a response read back from disk is first aged by the
/// wall time it spent there); every answer from the cache carries it as `Age`. `Vary` keeps one
/// entry per set of the named request headers (a response to the same URL that names other
/// headers replaces them in memory). As a private cache it stores answers to requests with
/// `Authorization` (RFC 9111 §3.5 limits shared caches only) in memory; on disk only when
/// `storesAuthenticatedResponsesOnDisk` says so.
///
/// On disk, nothing secret is written: files are named by hashes of the URL (which is not
/// written), the headers a request's ``HTTPRequest/redaction`` hides (`Authorization`, `Cookie`,
/// `Set-Cookie`, your API key headers) are left out, and a response that varies on one stays in
/// memory. Files are written atomically behind a version marker; one that does not read back, or
/// holds values that make no sense, is a miss and is removed; one that cannot be read now (a
/// protected file on a locked device) is a miss and is kept. The folder is opened at the first
/// lookup or store, not when the cache is made, and again when it was emptied or removed
/// meanwhile (the system empties an app's caches when the disk runs low). On Apple platforms it
/// gets the data protection class `fileProtection` names and is excluded from backups.
///
/// The memory budget counts what each stored response holds: its body and headers, its URL, the
/// headers of the request it answers and the values its `Vary` names, plus about a kilobyte per
/// response for the rest (measured: the resident memory a stored empty answer takes). A stored
/// response keeps no request body and no transfer metrics. Looking up and storing take the same
/// few steps however many responses are stored.
///
/// The disk store keeps to its folder. The folder you give may be a symbolic link, which is
/// followed (that path is your choice); inside it no link is followed: a link where the store's
/// own folders, files or version marker belong is removed as a link, or ignored, and what it
/// points to is never read or written. Folders are created `0700` and files `0600`, whatever the
/// process's umask; a URL's folder goes with its last file; a file that is not a regular one
/// (a named pipe, a device) is never opened, and one larger than the disk budget never read; one
/// URL keeps at most 32 variants on disk.
/// Several caches on one folder, in one process or several, keep the disk budget together: each
/// operation holds an exclusive `flock(2)` on the folder's `LOCK` file, which holds the bytes the
/// files take, and the count is taken again from the files when a cache opens the folder and
/// whenever files must be evicted.
public final class HTTPCache: Sendable {
  /// The most bytes the cache keeps in memory, counted as ``storedBytes`` says.
  public let memoryBudget: Int
  /// The fraction of the time since `Last-Modified` a response without `max-age` or `Expires`
  /// stays fresh (RFC 9111 §4.2.2; 0.1 is usual), or `nil` (the default) for none.
  public let heuristicFreshness: Double?
  /// The folder of the disk store, or `nil` for memory only.
  public var directory: URL? { disk?.directory }
  /// How many times the disk store listed every file in its folder (``DiskCacheStore/listings``).
  var diskListings: Int { disk?.listings ?? 0 }
  /// The disk store, when there is one (for tests).
  var diskStore: DiskCacheStore? { disk }
  /// The wall clock: when a response arrived, for its age and the freshness `Expires` gives it.
  let now: @Sendable () -> Date
  private let store = Locked(CacheStore())
  private let disk: DiskCacheStore?
  private let revalidations = Locked(Revalidations())

  /// The revalidations running in the background: which stored responses (one at a time each),
  /// and who waits for them to end.
  private struct Revalidations: Sendable {
    var running: Set<String> = []
    var waiters = ConditionWaiters<Revalidations>()
  }

  /// The most revalidations one cache runs in the background at once; a stale response that
  /// would start one more is answered without it (the next use tries again).
  static let mostBackgroundRevalidations = 16

  /// Create a cache.
  /// - Parameters:
  ///   - memoryBudget: The most bytes to keep in memory; 10 MB by default. A response larger than
  ///     the whole budget is not stored.
  ///   - directory: A folder of its own for the disk store (created `0700` if missing, followed if
  ///     it is a symbolic link; what is in it from another version of the store is removed), or
  ///     `nil` (the default) for memory only.
  ///   - diskBudget: The most bytes of files on disk, shared with every cache on the same folder;
  ///     50 MB by default.
  ///   - storesAuthenticatedResponsesOnDisk: Whether answers to requests that carry credentials
  ///     (a header the request's redaction hides) may be written to disk, without those headers;
  ///     `false` by default.
  ///   - heuristicFreshness: The fraction of the time since `Last-Modified` that a response
  ///     without explicit freshness stays fresh, at most a day; `nil` (the default) for none.
  ///   - fileProtection: On Apple platforms, the data protection class of the disk store's folder,
  ///     which its files take: `.completeUntilFirstUserAuthentication` by default, readable from
  ///     the first unlock after a restart, background launches included. With `.complete`, files
  ///     cannot be read while the device is locked: they are then misses, and are kept. Ignored
  ///     elsewhere. (Without it, the default.)
  public convenience init(
    memoryBudget: Int = 10 * 1024 * 1024, directory: URL? = nil, diskBudget: Int = 50 * 1024 * 1024,
    storesAuthenticatedResponsesOnDisk: Bool = false, heuristicFreshness: Double? = nil,
    fileProtection: FileProtectionType
  ) {
    self.init(
      memoryBudget: memoryBudget, directory: directory, diskBudget: diskBudget,
      storesAuthenticatedResponsesOnDisk: storesAuthenticatedResponsesOnDisk,
      heuristicFreshness: heuristicFreshness, fileProtection: fileProtection, now: { Date() })
  }

  /// Create a cache, its disk store's folder (on Apple platforms) with the data protection class
  /// `.completeUntilFirstUserAuthentication`; see ``init(memoryBudget:directory:diskBudget:storesAuthenticatedResponsesOnDisk:heuristicFreshness:fileProtection:)``.
  /// - Parameters:
  ///   - memoryBudget: The most bytes to keep in memory; 10 MB by default. A response larger than
  ///     the whole budget is not stored.
  ///   - directory: A folder of its own for the disk store, or `nil` (the default) for memory
  ///     only.
  ///   - diskBudget: The most bytes of files on disk, shared with every cache on the same folder;
  ///     50 MB by default.
  ///   - storesAuthenticatedResponsesOnDisk: Whether answers to requests that carry credentials
  ///     may be written to disk, without those headers; `false` by default.
  ///   - heuristicFreshness: The fraction of the time since `Last-Modified` that a response
  ///     without explicit freshness stays fresh, at most a day; `nil` (the default) for none.
  public convenience init(
    memoryBudget: Int = 10 * 1024 * 1024, directory: URL? = nil, diskBudget: Int = 50 * 1024 * 1024,
    storesAuthenticatedResponsesOnDisk: Bool = false, heuristicFreshness: Double? = nil
  ) {
    self.init(
      memoryBudget: memoryBudget, directory: directory, diskBudget: diskBudget,
      storesAuthenticatedResponsesOnDisk: storesAuthenticatedResponsesOnDisk,
      heuristicFreshness: heuristicFreshness, now: { Date() })
  }

  /// Create a cache that reads the time of day from `now`: the wall clock a response's `Date`
  /// and `Expires` are compared with (a test gives one that follows its `TestClock`). Stored
  /// responses age on the client's clock either way.
  /// - Parameters:
  ///   - memoryBudget: The most bytes to keep in memory; 10 MB by default.
  ///   - directory: A folder of its own for the disk store, or `nil` (the default) for memory
  ///     only.
  ///   - diskBudget: The most bytes of files on disk, shared with every cache on the same folder;
  ///     50 MB by default.
  ///   - storesAuthenticatedResponsesOnDisk: Whether answers to requests that carry credentials
  ///     may be written to disk, without those headers; `false` by default.
  ///   - heuristicFreshness: The fraction of the time since `Last-Modified` that a response
  ///     without explicit freshness stays fresh, at most a day; `nil` (the default) for none.
  ///   - fileProtection: On Apple platforms, the data protection class of the disk store's
  ///     folder; `.completeUntilFirstUserAuthentication` by default.
  ///   - now: The current date.
  public init(
    memoryBudget: Int = 10 * 1024 * 1024, directory: URL? = nil, diskBudget: Int = 50 * 1024 * 1024,
    storesAuthenticatedResponsesOnDisk: Bool = false, heuristicFreshness: Double? = nil,
    fileProtection: FileProtectionType = .completeUntilFirstUserAuthentication,
    now: @escaping @Sendable () -> Date
  ) {
    self.memoryBudget = max(0, memoryBudget)
    self.heuristicFreshness = heuristicFreshness.map { min(max($0, 0), 1) }
    self.now = now
    disk = directory.map {
      DiskCacheStore(
        directory: $0, budget: diskBudget,
        storesAuthenticatedResponses: storesAuthenticatedResponsesOnDisk,
        fileProtection: fileProtection)
    }
  }

  /// How many responses are stored in memory.
  public var count: Int {
    store.withLock { $0.count }
  }

  /// How many bytes the responses stored in memory count for against ``memoryBudget``: each
  /// response's body and headers, its URL, the headers of the request it answers, the values its
  /// `Vary` names, and a fixed cost per response (about a kilobyte) for what holding it takes.
  public var storedBytes: Int {
    store.withLock { $0.bytes }
  }

  /// Drop every stored response, in memory and on disk. The files are removed on the calling
  /// thread, before this returns, so that nothing of them is left when it has (a user who signs
  /// out, say), even while the folder's files cannot be read (a locked device); a store still
  /// waiting to be written then is dropped, and a response read from disk before is not kept in
  /// memory. Every other disk operation runs off the caller's thread.
  public func removeAll() {
    // The disk first: from its start, what a lookup read before is not kept in memory, and
    // anything kept meanwhile goes with the memory next.
    disk?.removeAll()
    store.withLock { $0 = CacheStore() }
  }

  /// The stored response that answers `request` (from memory, else from disk, then kept in
  /// memory), marked as used. The disk is read off the caller's thread.
  func lookup(_ request: HTTPRequest, clock: any Clock<Duration>) async -> CacheEntry? {
    if let entry = store.withLock({ $0.lookup(request) }) {
      return entry
    }
    let removals = disk?.removals
    guard let entry = await disk?.lookup(request, clock: clock)?.trimmed else { return nil }
    store.withLock { store in
      // Read before a removeAll that began meanwhile: answered, not kept.
      if disk?.removals == removals {
        store.insert(entry, budget: memoryBudget)
      }
    }
    return entry
  }

  /// Store `entry` (``CacheEntry/trimmed``), replacing the variant it matches, in memory and on
  /// disk (written off the caller's thread).
  func insert(_ entry: CacheEntry) async {
    let entry = entry.trimmed
    store.withLock { $0.insert(entry, budget: memoryBudget) }
    await disk?.insert(entry, redaction: .default)
  }

  /// Drop every response stored for `url`, in memory and on disk (off the caller's thread).
  func invalidate(_ url: URL) async {
    store.withLock { $0.remove(CacheEntry.key(for: url)) }
    await disk?.invalidate(url)
  }

  /// How many revalidations the cache is running in the background
  /// (`stale-while-revalidate`).
  public var revalidationsInFlight: Int {
    revalidations.withLock { $0.running.count }
  }

  /// Wait until the revalidations the cache runs in the background have ended (each ends by its
  /// own deadline, or when its client goes away): for a test, before it looks at what is stored.
  /// - Parameter timeout: The longest to wait, in real time: 60 seconds by default.
  /// - Returns: `true` once none is running; `false` when the timeout ran out or the waiting task
  ///   was cancelled first.
  @discardableResult
  public func waitForRevalidations(timeout: Duration = .seconds(60)) async -> Bool {
    await revalidations.wait(on: \.waiters, timeout: timeout) { $0.running.isEmpty }
  }

  /// Run `operation` in the background as `work`'s, unless the stored response `key` names is
  /// being revalidated already or ``mostBackgroundRevalidations`` are running.
  /// - Returns: Whether it started.
  @discardableResult
  func revalidateInBackground(
    _ key: String, as work: BackgroundWork, _ operation: @escaping @Sendable () async -> Void
  ) -> Bool {
    let admitted = revalidations.withLock { state in
      guard !state.running.contains(key),
        state.running.count < Self.mostBackgroundRevalidations
      else { return false }
      state.running.insert(key)
      return true
    }
    guard admitted else { return false }
    let started = work.start { [self] in
      await operation()
      revalidations.change(\.waiters) { _ = $0.running.remove(key) }
    }
    if !started {
      revalidations.change(\.waiters) { _ = $0.running.remove(key) }
    }
    return started
  }
}
