import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

/// The memory store: least-recently-used eviction in a few steps per call however many entries
/// are stored, variants per URL, and a byte budget that counts what an entry holds.
@Suite(.timeLimit(.minutes(3))) struct CacheMemoryStoreTests {
  /// An entry for `GET /v1/items/<id>` (ids padded, so that every entry costs the same).
  static func entry(
    _ id: Int, body: Data = Data(), requestHeaders: HTTPHeaders = [:], requestBody: Data? = nil,
    query: String = "", responseHeaders: HTTPHeaders = ["Cache-Control": "max-age=60"]
  ) -> CacheEntry? {
    let path =
      "/v1/items/"
      + String(String(id).reversed()).padding(
        toLength: 6, withPad: "0", startingAt: 0)
    return CacheEntry(
      HTTPResponse(status: 200, headers: responseHeaders, body: body),
      for: request(.get, path + query, headers: requestHeaders, body: requestBody),
      clock: ContinuousClock())
  }

  /// A full store of `count` entries, then calls that each look up a new URL (a miss) and store
  /// it (evicting the oldest): each call examines a few entries, not all of them.
  @Test(.ownThread, arguments: [10, 1_000, 20_000])
  func eachCallExaminesAFewEntriesHoweverManyAreStored(count: Int) throws {
    let cost = try #require(Self.entry(0)).cost
    var store = CacheStore()
    for id in 0..<count {
      store.insert(try #require(Self.entry(id)), budget: count * cost)
    }
    #expect(store.count == count)
    let examined = store.examined
    let calls = 100
    for id in count..<count + calls {
      let entry = try #require(Self.entry(id))
      #expect(store.lookup(try #require(entry.response.request)) == nil)
      store.insert(entry, budget: count * cost)
    }
    #expect(store.count == count)
    #expect(store.bytes == count * cost)
    #expect((store.examined - examined) / calls <= 4, "examined \(store.examined - examined)")
  }

  /// Variants of one URL (`Vary`) leave one at a time, the least recently used first.
  @Test func variantsLeaveInLeastRecentlyUsedOrder() throws {
    func variant(_ id: Int, _ language: String) throws -> CacheEntry {
      try #require(
        Self.entry(
          id, requestHeaders: ["Accept-Language": language],
          responseHeaders: ["Cache-Control": "max-age=60", "Vary": "Accept-Language"]))
    }
    let cost = try variant(1, "en").cost
    var store = CacheStore()
    for entry in [try variant(1, "en"), try variant(1, "fr"), try variant(2, "en")] {
      store.insert(entry, budget: 3 * cost)
    }
    #expect(store.lookup(try #require(try variant(1, "en").response.request)) != nil)
    store.insert(try variant(3, "en"), budget: 3 * cost)  // out: 1 in French
    #expect(store.lookup(try #require(try variant(1, "fr").response.request)) == nil)
    store.insert(try variant(4, "en"), budget: 3 * cost)  // out: 2
    let stored = try [(1, "en"), (1, "fr"), (2, "en"), (3, "en"), (4, "en")].map {
      store.lookup(try #require(try variant($0, $1).response.request)) != nil
    }
    #expect(stored == [true, false, false, true, true])
    #expect(store.count == 3)
    #expect(store.bytes == 3 * cost)
  }

  enum Where: String, CaseIterable, CustomTestStringConvertible {
    case memory = "stored in memory"
    case disk = "read back from disk"
    var testDescription: String { rawValue }
  }

  /// A cached `GET` answer never needs its request's body: a stored entry does not keep it,
  /// whether stored from the network or read back from disk.
  @Test(arguments: Where.allCases)
  func aStoredAnswerKeepsNoRequestBody(_ source: Where) async throws {
    try await DiskCacheFiles.withFolder { folder in
      let budget = 1_000_000
      let requestBody = Data(count: 1_000_000)
      let cache = HTTPCache(memoryBudget: budget, directory: source == .disk ? folder : nil)
      for id in 0..<20 {
        let entry = try #require(Self.entry(id, body: Data(count: 100), requestBody: requestBody))
        if source == .disk {
          await HTTPCache(memoryBudget: 0, directory: folder).insert(entry)
          _ = await cache.lookup(try #require(entry.response.request), clock: ContinuousClock())
        } else {
          await cache.insert(entry)
        }
        #expect(cache.storedBytes <= budget)
      }
      #expect(cache.count == 20)
      for id in 0..<20 {
        let request = try #require(Self.entry(id, requestBody: requestBody)?.response.request)
        let stored = try #require(await cache.lookup(request, clock: ContinuousClock()))
        #expect(stored.response.request?.body == nil)
        #expect(stored.response.request?.headers == request.headers)
      }
    }
  }

  enum Holding: String, CaseIterable, CustomTestStringConvertible {
    case emptyAnswers = "empty answers"
    case bigRequestHeaders = "requests with 10 KB of headers"
    case longURLs = "4 KB URLs"
    var testDescription: String { rawValue }
  }

  /// The budget counts what an entry holds (its URL, the stored request's headers, a fixed cost
  /// per entry), not only the answer's body and headers: `storedBytes` stays within the budget
  /// after every insert and never says less than the entries hold.
  @Test(.ownThread, arguments: Holding.allCases)
  func theBudgetCountsWhatAnEntryHolds(_ holding: Holding) async throws {
    let budget = 1_000_000
    let cache = HTTPCache(memoryBudget: budget)
    var held = 0
    for id in 0..<2_000 {
      let entry: CacheEntry? =
        switch holding {
        case .emptyAnswers: Self.entry(id)
        case .bigRequestHeaders:
          Self.entry(id, requestHeaders: ["X-Big": String(repeating: "b", count: 10_000)])
        case .longURLs: Self.entry(id, query: "?q=" + String(repeating: "u", count: 4_000))
        }
      let stored = try #require(entry)
      held =
        stored.response.body.count + (stored.response.request?.url.absoluteString.utf8.count ?? 0)
        + (stored.response.request?.headers.fields.reduce(0) {
          $0 + $1.name.utf8.count + $1.value.utf8.count
        } ?? 0)
        + stored.response.headers.fields.reduce(0) {
          $0 + $1.name.utf8.count + $1.value.utf8.count
        }
      await cache.insert(stored)
      #expect(cache.storedBytes <= budget)
    }
    #expect(cache.count > 0)
    #expect(cache.storedBytes >= cache.count * (held + CacheEntry.fixedCost))
  }
}
