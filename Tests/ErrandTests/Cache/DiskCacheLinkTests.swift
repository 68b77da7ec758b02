import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Symbolic links inside the cache's folder are never followed: a link at any level (a URL's
/// folder, an entry file, the version marker) is foreign, never read or written through, and what
/// it points to stays as it was, whatever the cache does. Each test keeps the "outside" target in
/// its own temporary folder, so even a regression deletes nothing else.
@Suite(.timeLimit(.minutes(3))) struct DiskCacheLinkTests {
  enum Link: String, CaseIterable, CustomTestStringConvertible {
    case urlFolder = "the URL's folder is a link to a folder outside"
    case otherURLFolder = "a folder named like another URL's is a link to a folder outside"
    case entryFile = "the URL's entry file is a link to a record outside"
    case extraEntry = "a link named like an entry points to a file outside"
    case version = "the version marker is a link to a file outside"

    var testDescription: String { rawValue }

    /// Whether reading through the link would answer the request (it points to a real record).
    var leadsToARecord: Bool { self == .urlFolder || self == .entryFile }
  }

  enum Operation: String, CaseIterable, CustomTestStringConvertible {
    case get = "GET"
    case post = "POST (invalidation)"
    case removeAll = "removeAll()"
    case evict = "eviction by budget"
    case reopen = "re-opening the cache"

    var testDescription: String { rawValue }
  }

  /// A cache folder holding one record for `/v1/dogs`, and beside it a folder "outside" holding a
  /// copy of that record, a file named like an entry and a sentinel, all old enough to be the
  /// first evicted; then `link` put in place.
  static func setUp(_ link: Link, cacheFolder: URL, outside: URL) async throws -> HTTPCache {
    let files = FileManager.default
    let cache = HTTPCache(memoryBudget: 0, directory: cacheFolder, diskBudget: 20_000)
    _ = try await DiskCacheFiles.get(cache)
    let entry = try #require(DiskCacheFiles.entryFiles(under: cacheFolder).first).path
    let urlFolder = cacheFolder.appendingPathComponent(
      String(entry.prefix(while: { $0 != "/" })))
    let entryName = String(entry.split(separator: "/").last ?? "")
    try files.createDirectory(at: outside, withIntermediateDirectories: true)
    try files.copyItem(
      at: cacheFolder.appendingPathComponent(entry), to: outside.appendingPathComponent(entryName))
    try Data("keep me".utf8).write(to: outside.appendingPathComponent("sentinel.txt"))
    try Data("not a record".utf8).write(
      to: outside.appendingPathComponent("0123456789abcdef.entry"))
    try files.copyItem(
      at: cacheFolder.appendingPathComponent("VERSION"),
      to: outside.appendingPathComponent("VERSION"))
    for name in try files.contentsOfDirectory(atPath: outside.path) {
      try files.setAttributes(
        [.modificationDate: Date(timeIntervalSinceReferenceDate: 0)],
        ofItemAtPath: outside.appendingPathComponent(name).path)
    }
    switch link {
    case .urlFolder:
      try files.removeItem(at: urlFolder)
      try files.createSymbolicLink(at: urlFolder, withDestinationURL: outside)
    case .otherURLFolder:
      try files.createSymbolicLink(
        at: cacheFolder.appendingPathComponent("00000000000000ff"), withDestinationURL: outside)
    case .entryFile:
      try files.removeItem(at: urlFolder.appendingPathComponent(entryName))
      try files.createSymbolicLink(
        at: urlFolder.appendingPathComponent(entryName),
        withDestinationURL: outside.appendingPathComponent(entryName))
    case .extraEntry:
      try files.createSymbolicLink(
        at: urlFolder.appendingPathComponent("fedcba9876543210.entry"),
        withDestinationURL: outside.appendingPathComponent("sentinel.txt"))
    case .version:
      try files.removeItem(at: cacheFolder.appendingPathComponent("VERSION"))
      try files.createSymbolicLink(
        at: cacheFolder.appendingPathComponent("VERSION"),
        withDestinationURL: outside.appendingPathComponent("VERSION"))
    }
    return cache
  }

  @Test(arguments: Link.allCases, Operation.allCases)
  func nothingOutsideTheFolderIsTouched(_ link: Link, _ operation: Operation) async throws {
    try await DiskCacheFiles.withFolder { root in
      let cacheFolder = root.appendingPathComponent("cache")
      let outside = root.appendingPathComponent("outside")
      let cache = try await Self.setUp(link, cacheFolder: cacheFolder, outside: outside)
      let before = DiskCacheFiles.snapshot(outside)
      let beforeItems = DiskCacheFiles.items(under: outside)
      #expect(before.count == 4)
      switch operation {
      case .get:
        let (response, sent) = try await DiskCacheFiles.get(cache)
        #expect(response.body == Data("[\"Rex\"]".utf8))
        if link.leadsToARecord {
          #expect(sent, "the record was read through the link")
        }
        // Stored again, in a folder of the cache's own.
        #expect(try await DiskCacheFiles.cached(cache)?.status == 200)
      case .post:
        let stub = await DiskCacheFiles.stub()
        _ = try await DiskCacheFiles.client(cache, stub).response(
          for: Endpoint<Data>(method: .post, path: "dogs", decoding: .data))
        #expect(try await DiskCacheFiles.cached(cache) == nil)
      case .removeAll:
        cache.removeAll()
        #expect(try await DiskCacheFiles.cached(cache) == nil)
      case .evict:
        for path in ["a", "b", "c", "d", "e"] {
          _ = try await DiskCacheFiles.get(cache, path, body: Data(count: 6_000))
        }
        #expect(try await DiskCacheFiles.cached(cache) == nil)
      case .reopen:
        let reopened = HTTPCache(memoryBudget: 0, directory: cacheFolder, diskBudget: 20_000)
        _ = try await DiskCacheFiles.cached(reopened)
        // A cache opens its folder at its first operation, and evicts down to its budget then.
        _ = try await DiskCacheFiles.cached(
          HTTPCache(memoryBudget: 0, directory: cacheFolder, diskBudget: 1))
        #expect(try await DiskCacheFiles.cached(reopened) == nil)
      }
      #expect(DiskCacheFiles.snapshot(outside) == before)
      #expect(DiskCacheFiles.items(under: outside) == beforeItems)
    }
  }

  /// The folder the cache is given may itself be a link: that is the app's choice, and it is
  /// followed.
  @Test func theCachesOwnFolderMayBeALink() async throws {
    try await DiskCacheFiles.withFolder { root in
      let real = root.appendingPathComponent("real")
      let link = root.appendingPathComponent("link")
      try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
      try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
      _ = try await DiskCacheFiles.get(HTTPCache(memoryBudget: 0, directory: link))
      #expect(DiskCacheFiles.entryFiles(under: real).count == 1)
      let reopened = HTTPCache(memoryBudget: 0, directory: link)
      #expect(try await DiskCacheFiles.cached(reopened)?.status == 200)
    }
  }
}
