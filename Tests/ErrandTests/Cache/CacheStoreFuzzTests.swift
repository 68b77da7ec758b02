import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Many tasks storing and reading at once, in memory and on disk: every answer is the right one,
/// and both byte budgets hold. 10,000 inserts at full size (`ERRAND_FULL_SIZE=1`), fewer by
/// default.
@Suite(.timeLimit(.minutes(5))) struct CacheStoreFuzzTests {
  @Test func concurrentReadersAndWritersKeepTheBudgets() async throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("errand-cache-fuzz-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let inserts = TestSize.count(small: 200, full: 10_000)
    let paths = 200
    let stub = StubTransport()
    await stub.on(
      .method(.get) && .path("/v1/items/{id}"),
      .handler { request, _ in
        .status(
          200, body: Data(request.url.lastPathComponent.utf8) + Data(count: 500),
          headers: ["Cache-Control": "max-age=0", "ETag": "\"\(request.url.lastPathComponent)\""])
      })
    let cache = HTTPCache(memoryBudget: 20_000, directory: folder, diskBudget: 40_000)
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(middleware: [CachingMiddleware(cache: cache)]))
    var random = SeededGenerator(seed: 0xC0FFEE)
    let ids = (0..<inserts).map { _ in Int(random.next() % UInt64(paths)) }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for worker in 0..<8 {
        group.addTask {
          for index in stride(from: worker, to: ids.count, by: 8) {
            let id = ids[index]
            let response = try await client.response(
              for: Endpoint<Data>(path: "items/\(id)", decoding: .data)
            ).response
            #expect(response.body.prefix(while: { $0 != 0 }) == Data("\(id)".utf8))
          }
        }
      }
      try await group.waitForAll()
    }
    #expect(cache.storedBytes <= 20_000)
    let onDisk =
      (FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?
      .allObjects as? [URL] ?? []).filter { $0.pathExtension == "entry" }
      .compactMap { try? $0.resourceValues(forKeys: [.fileSizeKey]).fileSize }
    #expect(onDisk.reduce(0, +) <= 40_000)
    #expect(!onDisk.isEmpty)
  }
}
