import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

/// Hostile probes of the disk cache: odd things where its files belong (a folder, a named pipe, a
/// 1 GB file, a hard link, leftovers of a crash, a lock or a marker that is not a file), caches
/// sharing a folder at once, and answers that vary without end. Each probe asserts the safe
/// behaviour: no crash, no hang (a pipe must never block a lookup), nothing outside the folder
/// touched, the budgets kept, and nothing stored lost or torn.
@Suite(.timeLimit(.minutes(3))) struct DiskCacheHostileTests {
  static let budget = 10_000

  enum Odd: String, CaseIterable, CustomTestStringConvertible {
    case folderAsEntry = "a folder with files in it, named like the URL's entry"
    case emptyEntry = "an empty entry file"
    case pipeAsEntry = "a named pipe named like the URL's entry"
    case hugeEntry = "a 1 GB (sparse) entry file"
    case paddedRecord = "a valid record padded past the disk budget"
    case hardLinkAsEntry = "a hard link named like the URL's entry, to a file outside"
    case linkToFolderAsEntry = "a symbolic link named like the URL's entry, to a folder outside"
    case fileAsURLFolder = "a file where the URL's folder belongs"
    case pipeAsURLFolder = "a named pipe where the URL's folder belongs"
    case leftovers = "temporary files a crash left"
    case linkAsLock = "LOCK is a symbolic link to a file outside"
    case folderAsLock = "LOCK is a folder"
    case pipeAsLock = "LOCK is a named pipe"
    case pipeAsVersion = "VERSION is a named pipe"
    case folderAsVersion = "VERSION is a folder"

    var testDescription: String { rawValue }

    /// Whether the URL's stored entry is gone once the odd thing is put in place.
    var replacesTheEntry: Bool {
      switch self {
      case .leftovers, .linkAsLock, .folderAsLock, .pipeAsLock, .pipeAsVersion, .folderAsVersion:
        false
      default: true
      }
    }
  }

  enum Operation: String, CaseIterable, CustomTestStringConvertible {
    case lookup = "a lookup"
    case get = "a GET that stores"
    case post = "a POST (invalidation)"
    case removeAll = "removeAll()"
    case reopen = "re-opening the cache"

    var testDescription: String { rawValue }
  }

  /// Put `odd` in place in a cache folder holding one stored answer for `/v1/dogs`.
  static func plant(_ odd: Odd, cacheFolder: URL, outside: URL) throws {
    let files = FileManager.default
    let entry = try #require(DiskCacheFiles.entryFiles(under: cacheFolder).first).path
    let folderName = String(entry.prefix(while: { $0 != "/" }))
    let urlFolder = cacheFolder.appendingPathComponent(folderName)
    let entryFile = cacheFolder.appendingPathComponent(entry)
    let record = try Data(contentsOf: entryFile)
    switch odd {
    case .folderAsEntry, .emptyEntry, .pipeAsEntry, .hugeEntry, .paddedRecord, .hardLinkAsEntry,
      .linkToFolderAsEntry:
      try files.removeItem(at: entryFile)
    case .fileAsURLFolder, .pipeAsURLFolder:
      try files.removeItem(at: urlFolder)
    case .linkAsLock, .folderAsLock, .pipeAsLock:
      try? files.removeItem(at: cacheFolder.appendingPathComponent("LOCK"))
    case .pipeAsVersion, .folderAsVersion:
      try files.removeItem(at: cacheFolder.appendingPathComponent("VERSION"))
    case .leftovers:
      break
    }
    switch odd {
    case .folderAsEntry:
      try files.createDirectory(at: entryFile, withIntermediateDirectories: true)
      try Data("inside".utf8).write(to: entryFile.appendingPathComponent("inside.entry"))
    case .emptyEntry:
      try Data().write(to: entryFile)
    case .pipeAsEntry:
      try DiskCacheFiles.makePipe(at: entryFile)
    case .hugeEntry:
      try #require(files.createFile(atPath: entryFile.path, contents: nil))
      let handle = try FileHandle(forWritingTo: entryFile)
      try handle.truncate(atOffset: 1 << 30)
      try handle.close()
    case .paddedRecord:
      try (record + Data(repeating: UInt8(ascii: " "), count: budget)).write(to: entryFile)
    case .hardLinkAsEntry:
      try files.linkItem(at: outside.appendingPathComponent("keep.txt"), to: entryFile)
    case .linkToFolderAsEntry:
      try files.createSymbolicLink(at: entryFile, withDestinationURL: outside)
    case .fileAsURLFolder:
      try Data("a file".utf8).write(to: urlFolder)
    case .pipeAsURLFolder:
      try DiskCacheFiles.makePipe(at: urlFolder)
    case .leftovers:
      try Data(count: 3_000).write(to: urlFolder.appendingPathComponent(".tmp-0123456789abcdef"))
      try Data(count: 3_000).write(to: cacheFolder.appendingPathComponent(".tmp-fedcba9876543210"))
    case .linkAsLock:
      try files.createSymbolicLink(
        at: cacheFolder.appendingPathComponent("LOCK"),
        withDestinationURL: outside.appendingPathComponent("keep.txt"))
    case .folderAsLock:
      try files.createDirectory(
        at: cacheFolder.appendingPathComponent("LOCK/inside"), withIntermediateDirectories: true)
    case .pipeAsLock:
      try DiskCacheFiles.makePipe(at: cacheFolder.appendingPathComponent("LOCK"))
    case .pipeAsVersion:
      try DiskCacheFiles.makePipe(at: cacheFolder.appendingPathComponent("VERSION"))
    case .folderAsVersion:
      try files.createDirectory(
        at: cacheFolder.appendingPathComponent("VERSION/inside"),
        withIntermediateDirectories: true)
    }
  }

  @Test(arguments: Odd.allCases, Operation.allCases)
  func anOddFileIsNeverFollowedReadWholeOrWaitedOn(_ odd: Odd, _ operation: Operation)
    async throws
  {
    try await DiskCacheFiles.withFolder { root in
      let cacheFolder = root.appendingPathComponent("cache")
      let outside = root.appendingPathComponent("outside")
      try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
      try Data("keep me".utf8).write(to: outside.appendingPathComponent("keep.txt"))
      try Data("not a record".utf8).write(to: outside.appendingPathComponent("x.entry"))
      let before = DiskCacheFiles.snapshot(outside)
      let cache = HTTPCache(memoryBudget: 0, directory: cacheFolder, diskBudget: Self.budget)
      _ = try await DiskCacheFiles.get(cache)
      try Self.plant(odd, cacheFolder: cacheFolder, outside: outside)
      // Every step under a hang guard: a pipe opened for reading would block for ever.
      let answered = Locked<HTTPResponse??>(nil)
      let finished = await returnsInTime(seconds: 60) {
        do {
          switch operation {
          case .lookup:
            let response = try await DiskCacheFiles.cached(cache)
            answered.withLock { $0 = .some(response) }
          case .get:
            _ = try await DiskCacheFiles.get(cache)
            let response = try await DiskCacheFiles.cached(cache)
            answered.withLock { $0 = .some(response) }
          case .post:
            let stub = await DiskCacheFiles.stub()
            _ = try await DiskCacheFiles.client(cache, stub).response(
              for: Endpoint<Data>(method: .post, path: "dogs", decoding: .data))
            let response = try await DiskCacheFiles.cached(cache)
            answered.withLock { $0 = .some(response) }
          case .removeAll:
            cache.removeAll()
            let response = try await DiskCacheFiles.cached(cache)
            answered.withLock { $0 = .some(response) }
          case .reopen:
            let reopened = HTTPCache(
              memoryBudget: 0, directory: cacheFolder, diskBudget: Self.budget)
            let response = try await DiskCacheFiles.cached(reopened)
            answered.withLock { $0 = .some(response) }
          }
          return true
        } catch {
          Issue.record(error)
          return true
        }
      }
      #expect(finished, "\(operation.rawValue) did not return within 30 s")
      guard finished else { return }
      let response = try #require(answered.withLock { $0 })
      // A marker that is not the version's makes a new cache start afresh.
      let markerIsOdd = odd == .pipeAsVersion || odd == .folderAsVersion
      let stays: Bool =
        switch operation {
        case .lookup: !odd.replacesTheEntry
        case .get: true
        case .post, .removeAll: false
        case .reopen: !odd.replacesTheEntry && !markerIsOdd
        }
      #expect(
        (response?.status == 200) == stays,
        "answered \(response.map { "\($0.status)" } ?? "nothing")")
      #expect(DiskCacheFiles.snapshot(outside) == before)
      for item in DiskCacheFiles.items(under: cacheFolder) {
        let depth = item.path.split(separator: "/").count
        if item.path.hasSuffix(".entry") {
          #expect(item.kind == .regular && item.size <= Self.budget, "\(item.path): \(item.kind)")
        } else if depth == 1, item.path.count == 16 {
          #expect(item.kind == .directory, "\(item.path): \(item.kind)")
        } else if item.path == "LOCK" {
          #expect(item.kind == .regular)
        }
        if operation == .reopen {
          #expect(!item.path.contains(".tmp-"), "\(item.path) left")
          #expect(depth > 1 || item.kind != .fifo, "\(item.path) left")
        }
      }
    }
  }

  /// The folder the cache is given is a file or a named pipe: every call is answered by the
  /// network, nothing is stored, nothing crashes or waits, and the file is left alone.
  @Test(arguments: [false, true])
  func aCacheFolderThatIsAFileIsLeftAlone(isAPipe: Bool) async throws {
    try await DiskCacheFiles.withFolder { root in
      let file = root.appendingPathComponent("cache")
      if isAPipe {
        try DiskCacheFiles.makePipe(at: file)
      } else {
        try Data("mine".utf8).write(to: file)
      }
      let finished = await returnsInTime(seconds: 60) {
        let cache = HTTPCache(memoryBudget: 0, directory: file)
        let sent = try? await DiskCacheFiles.get(cache).sent
        let stored = try? await DiskCacheFiles.cached(cache)
        cache.removeAll()
        return sent == true && stored == nil
      }
      #expect(finished)
      #expect(DiskCacheFiles.items(under: root).map(\.kind) == [isAPipe ? .fifo : .regular])
      if !isAPipe {
        #expect(try Data(contentsOf: file) == Data("mine".utf8))
      }
    }
  }

  /// Two caches on one folder, four tasks each, storing and reading 40 URLs at once: every
  /// answer read back is whole and the right one, nobody waits for ever, and the budget holds.
  @Test func twoCachesStoringAtOnceTearNothing() async throws {
    try await DiskCacheFiles.withFolder { folder in
      let budget = 60_000
      let caches = (0..<2).map { _ in
        HTTPCache(memoryBudget: 0, directory: folder, diskBudget: budget)
      }
      let stub = StubTransport()
      await stub.on(
        .method(.get) && .path("/v1/items/{id}"),
        .handler { request, _ in
          .status(
            200,
            body: Data(repeating: UInt8(request.url.lastPathComponent.count), count: 5_000)
              + Data(request.url.lastPathComponent.utf8),
            headers: ["Cache-Control": "max-age=600"])
        })
      let clients = caches.map { DiskCacheFiles.client($0, stub) }
      let finished = await returnsInTime(seconds: 60) {
        await withTaskGroup(of: Void.self) { group in
          for worker in 0..<8 {
            group.addTask {
              for step in 0..<TestSize.count(small: 25, full: 250) {
                let id = (step * 7 + worker * 3) % 40
                let response = try? await clients[worker % 2].response(
                  for: Endpoint<Data>(path: "items/\(id)", decoding: .data)
                ).response
                #expect(response?.body.suffix(String(id).count) == Data(String(id).utf8))
                #expect(response?.body.count == 5_000 + String(id).count)
              }
            }
          }
        }
        return true
      }
      #expect(finished)
      let total = DiskCacheFiles.entryFiles(under: folder).reduce(0) { $0 + $1.size }
      #expect(total <= budget)
      #expect(total > 0)
    }
  }

  /// An answer that varies on a header every request sets anew stores one variant per request:
  /// both budgets hold, on disk and in memory.
  @Test(.ownThread) func answersThatVaryWithoutEndStayWithinTheBudgets() async throws {
    try await DiskCacheFiles.withFolder { folder in
      let cache = HTTPCache(memoryBudget: 50_000, directory: folder, diskBudget: 50_000)
      let stub = StubTransport()
      await stub.on(
        .get, "/v1/dogs",
        .status(
          200, body: Data(count: 1_000),
          headers: ["Cache-Control": "max-age=600", "Vary": "X-Request-ID"]))
      let client = DiskCacheFiles.client(cache, stub)
      for id in 0..<300 {
        var endpoint = Endpoint<Data>(path: "dogs", decoding: .data)
        endpoint.headers["X-Request-ID"] = "\(id)"
        _ = try await client.response(for: endpoint)
        #expect(cache.storedBytes <= 50_000)
      }
      let total = DiskCacheFiles.entryFiles(under: folder).reduce(0) { $0 + $1.size }
      #expect(total <= 50_000)
      #expect(cache.count > 10)
    }
  }
}

/// Hostile probes of what the disk cache's work grows with: listing every file (only to evict,
/// and then for a tenth of the budget at a time), and the variants of one URL a lookup reads.
@Suite(.timeLimit(.minutes(3))) struct DiskCacheWorkHostileTests {
  /// A full cache stores 100 answers more: the folder is listed far fewer than 100 times (a
  /// tenth of the budget freed at a time is about six of these answers).
  @Test(.ownThread) func aFullCacheDoesNotListTheFolderOnEveryWrite() async throws {
    try await DiskCacheFiles.withFolder { folder in
      let cache = HTTPCache(memoryBudget: 0, directory: folder, diskBudget: 100_000)
      for id in 0..<200 {
        _ = try await DiskCacheFiles.get(cache, "items/\(id)", body: Data(count: 1_000))
      }
      let listed = cache.diskListings
      for id in 200..<300 {
        _ = try await DiskCacheFiles.get(cache, "items/\(id)", body: Data(count: 1_000))
      }
      #expect(cache.diskListings - listed <= 25, "\(cache.diskListings - listed) listings")
      let total = DiskCacheFiles.entryFiles(under: folder).reduce(0) { $0 + $1.size }
      #expect(total <= 100_000)
    }
  }

  /// `LOCK` cannot be made (a folder nested deeper than the store removes stands there):
  /// lookups still never list the folder, and the budget still holds.
  @Test func withoutALockFileLookupsDoNotListTheFolder() async throws {
    try await DiskCacheFiles.withFolder { folder in
      let nested = (0..<12).map { "level\($0)" }.joined(separator: "/")
      try FileManager.default.createDirectory(
        at: folder.appendingPathComponent("LOCK/" + nested), withIntermediateDirectories: true)
      let cache = HTTPCache(memoryBudget: 0, directory: folder, diskBudget: 20_000)
      for id in 0..<20 {
        _ = try await DiskCacheFiles.get(cache, "items/\(id)", body: Data(count: 1_000))
      }
      let listed = cache.diskListings
      for id in 0..<50 {
        _ = try await DiskCacheFiles.cached(cache, "items/\(id % 20)")
      }
      #expect(cache.diskListings == listed)
      let total = DiskCacheFiles.entryFiles(under: folder).reduce(0) { $0 + $1.size }
      #expect(total <= 20_000)
    }
  }

  /// A budget with room for one answer: each answer stored evicts the one before, even the
  /// other variant of its own URL (whose folder then goes), and still reads back whole.
  @Test func theAnswerJustStoredIsNeverLost() async throws {
    try await DiskCacheFiles.withFolder { folder in
      let cache = HTTPCache(memoryBudget: 0, directory: folder, diskBudget: 1_800)
      let stub = StubTransport()
      await stub.on(
        .method(.get) && .path("/v1/{name}"),
        .handler { request, _ in
          .status(
            200, body: Data(repeating: 7, count: 1_000),
            headers: ["Cache-Control": "max-age=600", "Vary": "Accept-Language"])
        })
      let client = DiskCacheFiles.client(cache, stub)
      for (path, language) in [("a", "en"), ("a", "fr"), ("b", "en"), ("a", "en"), ("a", "de")] {
        var endpoint = Endpoint<Data>(path: path, decoding: .data)
        endpoint.headers["Accept-Language"] = language
        _ = try await client.response(for: endpoint)
        endpoint.cachePolicy = .onlyIfCached
        let again = try await client.response(for: endpoint).response
        #expect(again.cacheStatus == .hit, "\(path) in \(language)")
        #expect(again.body == Data(repeating: 7, count: 1_000))
        #expect(DiskCacheFiles.entryFiles(under: folder).count == 1)
      }
    }
  }

  /// An answer that varies on a header each request sets anew: one URL's folder keeps a bounded
  /// number of variants, so a lookup reads a bounded number of files.
  @Test(.ownThread) func oneURLKeepsABoundedNumberOfVariantsOnDisk() async throws {
    try await DiskCacheFiles.withFolder { folder in
      let cache = HTTPCache(memoryBudget: 0, directory: folder, diskBudget: 1_000_000)
      let stub = StubTransport()
      await stub.on(
        .get, "/v1/dogs",
        .status(
          200, body: Data("[]".utf8),
          headers: ["Cache-Control": "max-age=600", "Vary": "X-Request-ID"]))
      let client = DiskCacheFiles.client(cache, stub)
      for id in 0..<100 {
        var endpoint = Endpoint<Data>(path: "dogs", decoding: .data)
        endpoint.headers["X-Request-ID"] = "\(id)"
        _ = try await client.response(for: endpoint)
      }
      let files = DiskCacheFiles.entryFiles(under: folder)
      #expect(files.count <= 32)
      var endpoint = Endpoint<Data>(path: "dogs", decoding: .data)
      endpoint.headers["X-Request-ID"] = "99"
      endpoint.cachePolicy = .onlyIfCached
      #expect(try await client.response(for: endpoint).response.cacheStatus == .hit)
    }
  }
}
