import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// What the disk store leaves in its folder: private modes whatever the umask, no empty folders,
/// and one budget for every cache on the folder.
@Suite(.timeLimit(.minutes(3))) struct DiskCacheFolderTests {
  /// Folders 0700 and files 0600 with the usual umask of 022, which leaves what is created
  /// without an explicit mode readable by all (0755, 0644): the store sets its modes itself. (A
  /// umask of 0 would prove no more, and the umask is the process's: while it was 0, other
  /// tests running beside this one made folders every user could write to.)
  @Test func foldersAndFilesArePrivateWhateverTheUmask() async throws {
    try await DiskCacheFiles.withFolder { root in
      let folder = root.appendingPathComponent("cache")
      _ = try await DiskCacheFiles.withUmask(0o022) {
        try await DiskCacheFiles.get(HTTPCache(memoryBudget: 0, directory: folder))
      }
      #expect(DiskCacheFiles.permissions(folder) == 0o700)
      let items = DiskCacheFiles.items(under: folder)
      #expect(items.contains { $0.kind == .directory })
      #expect(items.contains { $0.path.hasSuffix(".entry") })
      for item in items {
        #expect(
          item.permissions == (item.kind == .directory ? 0o700 : 0o600),
          "\(item.path) has mode \(String(item.permissions, radix: 8))")
      }
    }
  }

  enum Emptying: String, CaseIterable, CustomTestStringConvertible {
    case invalidation = "a POST to each URL"
    case eviction = "eviction by budget"
    case damage = "a lookup of a damaged file"
    case removeAll = "removeAll()"

    var testDescription: String { rawValue }
  }

  /// A URL's folder goes with its last file.
  @Test(arguments: Emptying.allCases)
  func noEmptyFolderIsLeft(_ emptying: Emptying) async throws {
    try await DiskCacheFiles.withFolder { folder in
      let cache = HTTPCache(memoryBudget: 0, directory: folder, diskBudget: 10_000)
      let paths = ["a", "b", "c"]
      for path in paths {
        _ = try await DiskCacheFiles.get(cache, path, body: Data(count: 2_000))
      }
      #expect(DiskCacheFiles.entryFiles(under: folder).count == 3)
      switch emptying {
      case .invalidation:
        let stub = await DiskCacheFiles.stub(paths)
        for path in paths {
          _ = try await DiskCacheFiles.client(cache, stub).response(
            for: Endpoint<Data>(method: .post, path: path, decoding: .data))
        }
      case .eviction:
        _ = try await DiskCacheFiles.get(cache, "big", body: Data(count: 7_000))
      case .damage:
        for item in DiskCacheFiles.entryFiles(under: folder) {
          try Data("garbage".utf8).write(to: folder.appendingPathComponent(item.path))
        }
        for path in paths {
          #expect(try await DiskCacheFiles.cached(cache, path) == nil)
        }
      case .removeAll:
        cache.removeAll()
      }
      let folders = DiskCacheFiles.items(under: folder).filter { $0.kind == .directory }
      let expected = emptying == .eviction ? 1 : 0
      #expect(folders.count == expected, "\(folders.map(\.path))")
      #expect(DiskCacheFiles.entryFiles(under: folder).count == expected)
    }
  }

  /// Two caches on one folder (two processes, or two instances in one) keep one budget between
  /// them: the budget is what is on disk, not what each wrote.
  @Test func twoCachesOnOneFolderKeepOneBudget() async throws {
    try await DiskCacheFiles.withFolder { folder in
      let budget = 300_000
      let caches = (0..<2).map { _ in
        HTTPCache(memoryBudget: 0, directory: folder, diskBudget: budget)
      }
      for index in 0..<60 {
        _ = try await DiskCacheFiles.get(
          caches[index % 2], "items/\(index)", body: Data(count: 10_000))
        let total = DiskCacheFiles.entryFiles(under: folder).reduce(0) { $0 + $1.size }
        #expect(total <= budget, "\(total) bytes on disk after \(index + 1) answers")
      }
      #expect(DiskCacheFiles.entryFiles(under: folder).count > 10)
      // What one wrote, the other answers.
      #expect(try await DiskCacheFiles.cached(caches[0], "items/59")?.status == 200)
    }
  }
}
