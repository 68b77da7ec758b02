import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What the disk-cache tests look at: a folder of their own, what is in it (read without following
/// symbolic links) and calls through a client that may only use the cache.
enum DiskCacheFiles {
  /// A fresh folder under the temporary directory, removed afterwards.
  static func withFolder(_ body: (URL) async throws -> Void) async throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("errand-disk-cache-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    try await body(folder)
  }

  /// One thing under a folder, as `lstat` sees it.
  struct Item: Equatable {
    var path: String
    var kind: FileKind
    var size: Int
    var permissions: mode_t
  }

  /// Everything under `folder`, its path relative to it, never following a symbolic link.
  static func items(under folder: URL) -> [Item] {
    var found: [Item] = []
    func visit(_ relative: String) {
      let path = relative.isEmpty ? folder.path : folder.path + "/" + relative
      for name in ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() {
        let child = relative.isEmpty ? name : relative + "/" + name
        var info = stat()
        guard lstat(folder.path + "/" + child, &info) == 0 else { continue }
        let kind = FileKind(mode: info.st_mode)
        found.append(
          Item(
            path: child, kind: kind, size: Int(info.st_size), permissions: info.st_mode & 0o7777))
        if kind == .directory {
          visit(child)
        }
      }
    }
    visit("")
    return found
  }

  /// `body` run with the process's umask set to `mask`, then set back. The umask is the
  /// process's: only one test sets it.
  static func withUmask<T>(_ mask: mode_t, _ body: () async throws -> T) async throws -> T {
    let previous = umask(mask)
    defer { umask(previous) }
    return try await body()
  }

  /// The permission bits of `url` itself (a link's own), or `nil` when it is missing.
  static func permissions(_ url: URL) -> mode_t? {
    var info = stat()
    return lstat(url.path, &info) == 0 ? info.st_mode & 0o7777 : nil
  }

  /// Make a named pipe at `url`.
  static func makePipe(at url: URL) throws {
    try #require(mkfifo(url.path, 0o600) == 0)
  }

  /// The regular `.entry` files under `folder`.
  static func entryFiles(under folder: URL) -> [Item] {
    items(under: folder).filter { $0.kind == .regular && $0.path.hasSuffix(".entry") }
  }

  /// The bytes of every regular file under `folder`, by relative path: what a test compares
  /// before and after to show nothing there was touched.
  static func snapshot(_ folder: URL) -> [String: Data] {
    var files: [String: Data] = [:]
    for item in items(under: folder) where item.kind == .regular {
      files[item.path] = FileManager.default.contents(
        atPath: folder.appendingPathComponent(item.path).path)
    }
    return files
  }

  /// A client on `cache` over `stub`.
  static func client(_ cache: HTTPCache, _ stub: StubTransport) -> APIClient {
    APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(middleware: [CachingMiddleware(cache: cache)]))
  }

  /// A stub that answers `GET /v1/<path>` with `body`, fresh for ten minutes, and `POST` with `201`.
  static func stub(_ paths: [String] = ["dogs"], body: Data = Data("[\"Rex\"]".utf8)) async
    -> StubTransport
  {
    let stub = StubTransport()
    for path in paths {
      await stub.on(
        .get, "/v1/\(path)", .status(200, body: body, headers: ["Cache-Control": "max-age=600"]))
      await stub.on(.post, "/v1/\(path)", .status(201))
    }
    return stub
  }

  /// `GET /v1/<path>` through `cache`; the response and whether it went to the network.
  static func get(_ cache: HTTPCache, _ path: String = "dogs", body: Data = Data("[\"Rex\"]".utf8))
    async throws -> (HTTPResponse, sent: Bool)
  {
    let stub = await stub([path], body: body)
    let response = try await client(cache, stub).response(
      for: Endpoint<Data>(path: path, decoding: .data)
    ).response
    return (response, await stub.requests.count == 1)
  }

  /// `GET /v1/<path>` through `cache` that may only be answered from the cache: the response
  /// (an unacceptable status too), or `nil` for a miss (the `504` of `onlyIfCached`).
  static func cached(_ cache: HTTPCache, _ path: String = "dogs") async throws -> HTTPResponse? {
    var endpoint = Endpoint<Data>(path: path, decoding: .data)
    endpoint.cachePolicy = .onlyIfCached
    let client = APIClient(
      baseURL: base, transport: .unimplemented("a call answered from the cache only"),
      configuration: APIClient.Configuration(middleware: [CachingMiddleware(cache: cache)]))
    do {
      return try await client.response(for: endpoint).response
    } catch let error as APIError where error.response != nil {
      return error.response?.status == 504 ? nil : error.response
    }
  }
}
