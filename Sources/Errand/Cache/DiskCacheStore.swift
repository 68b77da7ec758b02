import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The on-disk half of an ``HTTPCache``: one file per stored response, under a folder per URL,
/// written atomically, within a byte budget (least recently used out first, by modification
/// time), behind a version marker. A file that does not read back (corrupted, truncated, from
/// another version) is a miss and is removed. What is written never holds a secret: no URL (files
/// are named and checked by hashes of it), no header the request's ``Redaction`` hides, and no
/// body of an answer to a request that carried one unless the cache was told it may.
///
/// `bytes`, the only mutable state, is in a `Locked`, whose lock also serializes every file
/// operation.
final class DiskCacheStore: Sendable {
  static let version = "errand-http-cache 1"
  let directory: URL
  let budget: Int
  let storesAuthenticatedResponses: Bool
  /// How many bytes the entry files hold.
  private let bytes = Locked(0)
  private let files = FileManager.default

  init(directory: URL, budget: Int, storesAuthenticatedResponses: Bool) {
    self.directory = directory
    self.budget = max(0, budget)
    self.storesAuthenticatedResponses = storesAuthenticatedResponses
    bytes.withLock { bytes in
      let marker = directory.appendingPathComponent("VERSION")
      let current = (try? String(contentsOf: marker, encoding: .utf8)) ?? ""
      if current != Self.version {
        for folder in entryFolders() {
          try? files.removeItem(at: folder)
        }
        try? files.createDirectory(
          at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try? Data(Self.version.utf8).write(to: marker, options: .atomic)
      }
      bytes = entryFiles().reduce(0) { $0 + $1.size }
    }
  }

  /// The folders that hold entries: named by a hash, so nothing else in the directory is touched.
  private func entryFolders() -> [URL] {
    let names = (try? files.contentsOfDirectory(atPath: directory.path)) ?? []
    return names.filter { $0.count == 16 && $0.allSatisfy(\.isHexDigit) }.map {
      directory.appendingPathComponent($0, isDirectory: true)
    }
  }

  private func entryFiles() -> [(url: URL, size: Int, modified: Date)] {
    entryFolders().flatMap { folder -> [(url: URL, size: Int, modified: Date)] in
      let names = (try? files.contentsOfDirectory(atPath: folder.path)) ?? []
      return names.filter { $0.hasSuffix(".entry") }.map { name in
        let url = folder.appendingPathComponent(name)
        let attributes = try? files.attributesOfItem(atPath: url.path)
        return (
          url, (attributes?[.size] as? NSNumber)?.intValue ?? 0,
          attributes?[.modificationDate] as? Date ?? .distantPast
        )
      }
    }
  }

  private func folder(for key: String) -> URL {
    directory.appendingPathComponent(Self.hash(key), isDirectory: true)
  }

  /// The stored response that answers `request`, if a readable file holds one.
  func lookup(_ request: HTTPRequest, clock: any Clock<Duration>) -> CacheEntry? {
    bytes.withLock { bytes in
      let key = CacheEntry.key(for: request.url)
      let folder = folder(for: key)
      let names = (try? files.contentsOfDirectory(atPath: folder.path)) ?? []
      var found: (entry: CacheEntry, file: URL, storedAt: Date)?
      for name in names where name.hasSuffix(".entry") {
        let file = folder.appendingPathComponent(name)
        guard let data = try? Data(contentsOf: file),
          let record = try? JSONDecoder().decode(DiskCacheRecord.self, from: data),
          record.format == DiskCacheRecord.format, record.check == Self.hash(key, seed: 1)
        else {
          remove(file, counting: &bytes)
          continue
        }
        guard let entry = record.entry(for: request, clock: clock) else {
          remove(file, counting: &bytes)
          continue
        }
        // RFC 9111 §4.1: of several stored responses that match, the most recent answers.
        if entry.matches(request), found.map({ record.storedAt > $0.storedAt }) ?? true {
          found = (entry, file, record.storedAt)
        }
      }
      removeIfEmpty(folder)
      guard let found else { return nil }
      try? files.setAttributes([.modificationDate: Date()], ofItemAtPath: found.file.path)
      return found.entry
    }
  }

  /// Write `entry`, unless it would put a secret on disk; then drop the least recently used
  /// files until the budget holds.
  func insert(_ entry: CacheEntry, redaction: Redaction) {
    guard let request = entry.response.request,
      let record = DiskCacheRecord(
        entry, redaction: redaction, storesAuthenticatedResponses: storesAuthenticatedResponses),
      let data = try? JSONEncoder().encode(record), data.count <= budget
    else { return }
    bytes.withLock { bytes in
      let key = CacheEntry.key(for: request.url)
      let folder = folder(for: key)
      let file = folder.appendingPathComponent(
        Self.hash(entry.varying.sorted { $0.key < $1.key }.description) + ".entry")
      // Readable by the owner only: an answer the app allowed to be stored with credentials is
      // as private as they are.
      try? files.createDirectory(
        at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
      remove(file, counting: &bytes)
      guard (try? data.write(to: file, options: .atomic)) != nil else { return }
      bytes += data.count
      if bytes > budget {
        for old in entryFiles().sorted(by: { $0.modified < $1.modified }) where bytes > budget {
          remove(old.url, counting: &bytes)
          // An evicted entry's folder goes with it: a cache that sees many URLs must not leave
          // one empty folder behind for each.
          removeIfEmpty(old.url.deletingLastPathComponent())
        }
      }
    }
  }

  /// Drop every file stored for `url`.
  func invalidate(_ url: URL) {
    bytes.withLock { bytes in
      let folder = folder(for: CacheEntry.key(for: url))
      for name in (try? files.contentsOfDirectory(atPath: folder.path)) ?? [] {
        remove(folder.appendingPathComponent(name), counting: &bytes)
      }
      try? files.removeItem(at: folder)
    }
  }

  /// Drop every file.
  func removeAll() {
    bytes.withLock { bytes in
      for folder in entryFolders() {
        try? files.removeItem(at: folder)
      }
      bytes = 0
    }
  }

  /// Remove an entry folder if nothing is left in it (`rmdir(2)` removes only an empty one).
  /// Called under the lock of `bytes`.
  private func removeIfEmpty(_ folder: URL) {
    _ = rmdir(folder.path)
  }

  /// Remove one file, keeping the byte count. Called under the lock of `bytes`.
  private func remove(_ file: URL, counting bytes: inout Int) {
    guard let size = (try? files.attributesOfItem(atPath: file.path))?[.size] as? NSNumber
    else { return }
    if (try? files.removeItem(at: file)) != nil {
      bytes -= size.intValue
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
