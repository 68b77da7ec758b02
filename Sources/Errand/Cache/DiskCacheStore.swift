import Foundation

/// The on-disk half of an ``HTTPCache``: one file per stored response, under a folder per URL,
/// written atomically, within a byte budget (least recently used out first, by modification
/// time), behind a version marker. A file that does not read back (corrupted, truncated, from
/// another version, holding values that make no sense) is a miss and is removed; one that cannot
/// be read now (no permission; on Apple platforms, a protected file while the device is locked)
/// is a miss and is left alone, and while the marker cannot be read nothing is read or written
/// (``removeAll()`` and invalidations still remove files). The folder is opened (the marker
/// checked, the files counted) at the first operation, not when the store is made, and again when
/// its marker is gone (the folder emptied or removed from outside). What is written
/// never holds a secret: no URL (files are named and checked by hashes of it), no header the
/// request's ``Redaction`` hides, and no body of an answer to a request that carried one unless
/// the cache was told it may.
///
/// The folder holds `VERSION` (the store's format), `LOCK` and one folder per URL, named by 16
/// hex digits, with one `.entry` file per variant; nothing else in it is touched. Inside the
/// folder no symbolic link is followed (``DirectoryHandle``): a link where a URL's folder, an
/// entry or the marker belongs is foreign, and is removed as a link or ignored. The folder itself
/// may be a link: the app chose that path, and it is followed.
///
/// One budget for every cache on the folder, in one process or several: each operation holds an
/// exclusive `flock(2)` on `LOCK`, which holds the bytes the entry files take as decimal text;
/// the operation reads that count, keeps it as it writes and removes files, and writes it back.
/// The count is set from what is on disk when a cache opens the folder, and again whenever files
/// must be evicted (the oldest are found by listing them; eviction then frees a tenth of the
/// budget, so that a full cache lists its files once per tenth written), so a process that died
/// between writing a file and the count leaves it short by that file until then. Where `LOCK`
/// cannot be made, writes count the files first, and lookups go on without the count.
///
/// One URL keeps at most ``mostVariants`` variants on disk (the least recently used go first):
/// a lookup reads each until one matches.
///
/// This instance's operations are also serialized by its own lock. The async ones
/// (``lookup(_:clock:)``, ``insert(_:redaction:)``, ``invalidate(_:)``) run on a serial dispatch
/// queue of the store's, so that a caller on Swift's cooperative thread pool never blocks one of
/// its few threads on the disk; ``removeAll()`` runs on its caller's thread, and a write still
/// queued when it begins is dropped.
final class DiskCacheStore: Sendable {
  static let version = "errand-http-cache 1"
  /// The version marker's name in the folder.
  static let versionName = "VERSION"
  /// The name of the file every cache on the folder locks, which holds the byte count.
  static let lockName = "LOCK"
  let directory: URL
  let budget: Int
  let storesAuthenticatedResponses: Bool
  /// The data protection class of the folder, which the files made in it take (Apple platforms).
  let fileProtection: FileProtectionType
  /// Serializes this cache's file operations, and holds whether the folder was opened: its marker
  /// checked (the folder emptied when it is another version's) and its files counted. (Not `()`
  /// when it held nothing: ThreadSanitizer places a zero-size value at the address of the
  /// object's other fields and reports the lock's own read as racing with it.)
  private let lock = Locked(false)
  private let listed = Locked(0)
  /// How many times ``removeAll()`` has begun: a write queued before one is dropped.
  private let removalCount = Locked(0)
  /// Where the async operations do their file I/O: off the cooperative pool, one at a time.
  /// (Internal: tests hold it to order an operation against another.)
  let queue = DispatchQueue(label: "errand.cache.disk", qos: .utility)

  /// Run `work` on the store's queue and return its result.
  private func onQueue<Result: Sendable>(_ work: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { resume in
      queue.async { resume.resume(returning: work()) }
    }
  }

  /// How many times this cache's operations listed every entry file: once when the cache opens
  /// the folder, then only as eviction needs it (which tests check).
  var listings: Int { listed.withLock { $0 } }

  /// How many times ``removeAll()`` has begun: what was read before it changed is not kept.
  var removals: Int { removalCount.withLock { $0 } }

  /// A store on `directory`; nothing on disk is touched until its first operation.
  init(
    directory: URL, budget: Int, storesAuthenticatedResponses: Bool,
    fileProtection: FileProtectionType = .completeUntilFirstUserAuthentication
  ) {
    self.directory = directory
    self.budget = max(0, budget)
    self.storesAuthenticatedResponses = storesAuthenticatedResponses
    self.fileProtection = fileProtection
  }

  /// On Apple platforms, give the folder its data protection class (files made in it take the
  /// folder's) and keep it out of backups: a cache is made again from the network.
  private func protectFolder() {
    #if canImport(Darwin)
      try? FileManager.default.setAttributes(
        [.protectionKey: fileProtection], ofItemAtPath: directory.path)
      var folder = directory
      var values = URLResourceValues()
      values.isExcludedFromBackup = true
      try? folder.setResourceValues(values)
    #endif
  }

  /// Check the version marker: empty the folder of another version's (or no version's) files, or
  /// count the files of this one. `false` when the marker cannot be read now: nothing is
  /// touched, and the folder is opened again at the next operation.
  private func open(_ session: inout DiskCacheSession) -> Bool {
    let versionName = Self.versionName
    let version = Self.version
    switch session.root.readFile(versionName, limit: 64) {
    case .unreadable:
      return false
    case .data(let marker) where marker == Data(version.utf8):
      _ = session.entryFiles()  // the count again, from what is on disk
    case .data, .missing, .unfit:
      for name in session.root.names() where Self.isFolderName(name) {
        session.root.remove(name)
      }
      session.root.write(Data(version.utf8), to: versionName)
      session.emptied()
    }
    session.makeRoom(for: 0)
    protectFolder()
    return true
  }

  /// The most variants of one URL kept on disk: a lookup may read each of them.
  static let mostVariants = 32

  /// Whether `name` is a URL's folder: 16 hex digits.
  static func isFolderName(_ name: String) -> Bool {
    name.utf8.count == 16 && name.allSatisfy(\.isHexDigit)
  }

  /// Run `body` on the open folder with `LOCK` held and the byte count read from it, then write
  /// the count back. `nil` when the folder cannot be opened or created, or (when `requiringOpen`)
  /// its version marker cannot be read now. A folder whose marker is gone since it was opened
  /// (the system empties an app's caches when the disk runs low; a user may remove them) is
  /// opened again, so that its marker is written anew.
  /// - Parameters:
  ///   - requiringOpen: Whether `body` needs a folder of this version (to read or write what is
  ///     stored); removing files does not, and goes on while the marker cannot be read.
  ///   - body: The operation.
  /// - Returns: What `body` returned, or `nil` when it did not run.
  @discardableResult
  private func session<Result>(
    requiringOpen: Bool = true, _ body: (inout DiskCacheSession) -> Result
  ) -> Result? {
    lock.withLock { opened in
      guard let root = DirectoryHandle(path: directory.path, creating: true) else { return nil }
      let lockFile = root.lock(Self.lockName)
      let stored = lockFile?.number
      var session = DiskCacheSession(root: root, budget: budget, bytes: stored)
      if opened, root.kind(Self.versionName) == .missing {
        opened = false
      }
      if !opened {
        opened = open(&session)
      }
      guard opened || !requiringOpen else { return nil }
      let result = body(&session)
      listed.withLock { $0 += session.listings }
      if session.isCounted, session.bytes != stored {
        lockFile?.write(session.bytes)
      }
      return withExtendedLifetime(lockFile) { result }
    }
  }

  /// The stored response that answers `request`, if a readable file holds one; read on the
  /// store's queue.
  func lookup(_ request: HTTPRequest, clock: any Clock<Duration>) async -> CacheEntry? {
    await onQueue { self.lookupNow(request, clock: clock) }
  }

  /// ``lookup(_:clock:)``, on the caller's thread.
  func lookupNow(_ request: HTTPRequest, clock: any Clock<Duration>) -> CacheEntry? {
    let found = session { session -> CacheEntry? in
      let key = CacheEntry.key(for: request.url)
      let folderName = Self.hash(key)
      guard let folder = session.root.folder(folderName, creating: false) else {
        if ![.missing, .directory].contains(session.root.kind(folderName)) {
          session.removeFolder(folderName)
        }
        return nil
      }
      let check = Self.hash(key, seed: 1)
      var found: (entry: CacheEntry, name: String, storedAt: Date)?
      for name in folder.names() where name.hasSuffix(".entry") {
        let read = folder.readFile(name, limit: budget)
        // Not damaged, only not readable now (a protected file on a locked device): left alone.
        if read == .unreadable { continue }
        guard case .data(let data) = read,
          let record = try? JSONDecoder().decode(DiskCacheRecord.self, from: data),
          record.check == check, let entry = record.entry(for: request, clock: clock)
        else {
          session.removeFile(name, in: folder)
          continue
        }
        // RFC 9111 §4.1: of several stored responses that match, the most recent answers.
        if entry.matches(request), found.map({ record.storedAt > $0.storedAt }) ?? true {
          found = (entry, name, record.storedAt)
        }
      }
      guard let found else {
        session.root.removeIfEmpty(folderName)
        return nil
      }
      folder.touch(found.name)
      return found.entry
    }
    return found ?? nil
  }

  /// Write `entry`, unless it would put a secret on disk, after dropping the least recently
  /// used files until it fits the budget; on the store's queue.
  /// A write still queued when ``removeAll()`` begins is dropped: what a user stored before
  /// signing out never lands after it.
  func insert(_ entry: CacheEntry, redaction: Redaction) async {
    let removals = removals
    await onQueue { self.insertNow(entry, redaction: redaction, unlessRemovedSince: removals) }
  }

  /// ``insert(_:redaction:)``, on the caller's thread; dropped when ``removeAll()`` has begun
  /// since ``removals`` was `removals`.
  func insertNow(_ entry: CacheEntry, redaction: Redaction, unlessRemovedSince removals: Int? = nil)
  {
    guard let request = entry.response.request,
      let record = DiskCacheRecord(
        entry, redaction: redaction, storesAuthenticatedResponses: storesAuthenticatedResponses),
      let data = try? JSONEncoder().encode(record), data.count <= budget
    else { return }
    session { session in
      // Under the lock removeAll's files go under: either it has begun (and this is dropped), or
      // it removes this file after.
      guard removals == nil || removals == self.removals else { return }
      let key = CacheEntry.key(for: request.url)
      let name = Self.hash(entry.varying.sorted { $0.key < $1.key }.description) + ".entry"
      session.makeRoom(for: data.count)
      guard let folder = session.root.folder(Self.hash(key), creating: true) else { return }
      session.keepVariants(in: folder, fewerThan: Self.mostVariants, besides: name)
      let replaced = session.countedSize(of: name, in: folder)
      if folder.write(data, to: name) {
        session.wrote(data.count, replacing: replaced)
      }
    }
  }

  /// Drop every file stored for `url`, on the store's queue; also while the version marker
  /// cannot be read now, so that an answer made stale is not served once it can.
  func invalidate(_ url: URL) async {
    await onQueue { self.invalidateNow(url) }
  }

  /// ``invalidate(_:)``, on the caller's thread.
  func invalidateNow(_ url: URL) {
    session(requiringOpen: false) { $0.removeFolder(Self.hash(CacheEntry.key(for: url))) }
  }

  /// Drop every file, on the caller's thread, also while the version marker cannot be read now;
  /// writes still queued are dropped.
  func removeAll() {
    removalCount.withLock { $0 += 1 }
    session(requiringOpen: false) { session in
      for name in session.root.names() where Self.isFolderName(name) {
        session.removeFolder(name)
      }
    }
  }

  /// FNV-1a, 64 bits, as 16 hex digits: a file name that says nothing of the URL.
  static func hash(_ text: String, seed: UInt64 = 0) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ seed
    for byte in text.utf8 {
      hash ^= UInt64(byte)
      hash = hash &* 0x100_0000_01b3
    }
    let hex = String(hash, radix: 16)
    return String(repeating: "0", count: 16 - hex.count) + hex
  }
}
