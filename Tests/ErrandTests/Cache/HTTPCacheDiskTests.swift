import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// The disk store: what survives a new cache on the same folder, what never reaches the disk,
/// and files that do not read back.
@Suite(.timeLimit(.minutes(3))) struct HTTPCacheDiskTests {
  static let body = Data("[\"Rex\"]".utf8)

  /// A fresh folder of its own, removed afterwards.
  static func withFolder(_ body: (URL) async throws -> Void) async throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("errand-cache-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    try await body(folder)
  }

  /// One call through a new client on `cache`, the stub answering `headers`; the stub's requests.
  static func call(
    _ cache: HTTPCache, headers: HTTPHeaders = ["Cache-Control": "max-age=600"],
    request: HTTPHeaders = [:]
  ) async throws -> (HTTPResponse, sent: Int) {
    let stub = StubTransport()
    var headers = headers
    headers["Set-Cookie"] = "session=s3cr3t"
    await stub.on(.get, "/v1/dogs", .status(200, body: body, headers: headers))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(middleware: [CachingMiddleware(cache: cache)]))
    var endpoint = Endpoint<Data>(path: "dogs", decoding: .data)
    endpoint.headers = request
    let response = try await client.response(for: endpoint).response
    return (response, await stub.requests.count)
  }

  /// Everything written under the folder, as text.
  static func written(_ folder: URL) -> String {
    let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
    return (files?.allObjects as? [URL] ?? []).compactMap { try? Data(contentsOf: $0) }
      .map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n")
  }

  @Test func aNewCacheOnTheSameFolderAnswersFromDisk() async throws {
    try await Self.withFolder { folder in
      _ = try await Self.call(HTTPCache(directory: folder))
      let (response, sent) = try await Self.call(HTTPCache(directory: folder))
      #expect(sent == 0)
      #expect(response.cacheStatus == .hit)
      #expect(response.body == Self.body)
      #expect(response.headers["Cache-Control"] == "max-age=600")
    }
  }

  /// No URL, no secret header and, unless allowed, no answer to a request with credentials is
  /// written; allowed, the answer is written without the secrets.
  @Test(arguments: [false, true])
  func noSecretIsWrittenToDisk(allowingAuthenticated: Bool) async throws {
    try await Self.withFolder { folder in
      let cache = HTTPCache(
        directory: folder, storesAuthenticatedResponsesOnDisk: allowingAuthenticated)
      _ = try await Self.call(cache, request: ["Authorization": "Bearer t0k3n"])
      let text = Self.written(folder)
      for secret in ["t0k3n", "s3cr3t", "api.example.com", "Set-Cookie"] {
        #expect(!text.contains(secret), "\(secret) reached the disk")
      }
      #expect(text.contains("max-age=600") == allowingAuthenticated)
      let fromDisk = try await Self.call(
        HTTPCache(directory: folder), request: ["Authorization": "Bearer t0k3n"])
      #expect(fromDisk.sent == (allowingAuthenticated ? 0 : 1))
    }
  }

  /// A file that does not read back is a miss, removed, never a crash; so is a folder from
  /// another version of the store.
  @Test(arguments: ["garbage", "truncated", "another version"])
  func aDamagedStoreIsAMiss(damage: String) async throws {
    try await Self.withFolder { folder in
      _ = try await Self.call(HTTPCache(directory: folder))
      let entries =
        (FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?
        .allObjects as? [URL] ?? []).filter { $0.pathExtension == "entry" }
      let entry = try #require(entries.first)
      switch damage {
      case "garbage":
        try Data("not a cache entry".utf8).write(to: entry)
      case "truncated":
        let data = try Data(contentsOf: entry)
        try data.prefix(data.count / 2).write(to: entry)
      default:
        try Data("errand-http-cache 0".utf8).write(to: folder.appendingPathComponent("VERSION"))
      }
      let (response, sent) = try await Self.call(HTTPCache(directory: folder))
      #expect(sent == 1)
      #expect(response.cacheStatus == .miss)
      #expect(response.body == Self.body)
      let (again, sentAgain) = try await Self.call(HTTPCache(directory: folder))
      #expect(sentAgain == 0)
      #expect(again.cacheStatus == .hit)
    }
  }

  /// Past its disk budget, the store drops the least recently used files.
  @Test func theDiskBudgetHolds() async throws {
    try await Self.withFolder { folder in
      let stub = StubTransport()
      for path in ["a", "b", "c", "d"] {
        await stub.on(
          .get, "/v1/\(path)",
          .status(200, body: Data(count: 3_000), headers: ["Cache-Control": "max-age=600"]))
      }
      let cache = HTTPCache(memoryBudget: 0, directory: folder, diskBudget: 10_000)
      let client = APIClient(
        baseURL: base, transport: stub,
        configuration: APIClient.Configuration(middleware: [CachingMiddleware(cache: cache)]))
      for path in ["a", "b", "c", "d"] {
        _ = try await client.response(for: Endpoint<Data>(path: path, decoding: .data))
      }
      let sizes =
        (FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.fileSizeKey])?
        .allObjects as? [URL] ?? []).filter { $0.pathExtension == "entry" }
        .compactMap { try? $0.resourceValues(forKeys: [.fileSizeKey]).fileSize }
      #expect(sizes.reduce(0, +) <= 10_000)
      #expect(sizes.count < 4)
      #expect(!sizes.isEmpty)
    }
  }
}
