import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// Downloads to disk and uploads from disk or memory through the production transports, with
/// progress.
@Suite(.timeLimit(.minutes(3))) struct TransferTests {
  @Test(arguments: TransportKind.allCases, [0, 1, 10 * 1024 * 1024])
  func aDownloadLandsByteForByteWithProgress(kind: TransportKind, size: Int) async throws {
    let bytes = patternBytes(size)
    let server = try LoopbackServer { _ in ScriptedResponse(body: bytes) }
    defer { server.stop() }
    let folder = try TemporaryFolder()
    let destination = folder.url.appendingPathComponent("video.bin")
    let reports = Locked<[TransferProgress]>([])
    let saved = try await kind.client(server.baseURL).download(
      Endpoint<Data>(path: "video", decoding: .data), to: destination
    ) { progress in reports.withLock { $0.append(progress) } }
    #expect(saved.value == destination)
    #expect(saved.response.status == 200)
    #expect(try Data(contentsOf: destination) == bytes)
    #expect(folder.names == ["video.bin"])
    let progress = reports.withLock { $0 }
    #expect(progress.last == TransferProgress(completedBytes: size, expectedBytes: size))
    #expect(
      zip(progress, progress.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
  }

  @Test func aDownloadCutShortLeavesNoPartialFileAndKeepsTheOldOne() async throws {
    let server = try LoopbackServer { _ in
      ScriptedResponse(body: patternBytes(1_000_000), ending: .closeAfterBodyBytes(400_000))
    }
    defer { server.stop() }
    let folder = try TemporaryFolder()
    let destination = folder.url.appendingPathComponent("video.bin")
    try Data("old".utf8).write(to: destination)
    let error = await #expect(throws: APIError.self) {
      _ = try await liveClient(server.baseURL).download(
        Endpoint<Data>(path: "video", decoding: .data), to: destination)
    }
    #expect(error?.kind == .transport)
    #expect(folder.names == ["video.bin"])
    #expect(try Data(contentsOf: destination) == Data("old".utf8))
  }

  @Test func cancellingADownloadRemovesThePartialFile() async throws {
    let server = try LoopbackServer { _ in
      // A minute in all: the download is cancelled long before the end.
      .chunks(Array(repeating: patternBytes(50_000), count: 100), interval: .milliseconds(600))
    }
    defer { server.stop() }
    let folder = try TemporaryFolder()
    let destination = folder.url.appendingPathComponent("video.bin")
    let started = AsyncStream<Void>.makeStream()
    let download = Task {
      try await liveClient(server.baseURL).download(
        Endpoint<Data>(path: "video", decoding: .data), to: destination
      ) { _ in started.continuation.yield() }
    }
    var reports = started.stream.makeAsyncIterator()
    _ = await reports.next()
    #expect(folder.names.count == 1)  // the partial file, while it downloads
    download.cancel()
    let error = await #expect(throws: APIError.self) { _ = try await download.value }
    #expect(error?.kind == .cancelled)
    #expect(folder.names.isEmpty)
    #expect(await server.waitForEarlyDisconnect())
  }

  @Test(arguments: TransportKind.allCases, [true, false])
  func anUploadSendsItsBodyWithProgress(kind: TransportKind, fromFile: Bool) async throws {
    let bytes = patternBytes(3 * 1024 * 1024)
    let folder = try TemporaryFolder()
    let file = folder.url.appendingPathComponent("logs.zip")
    try bytes.write(to: file)
    let server = try LoopbackServer { _ in .json(#"{"name":"Rex"}"#, status: 201) }
    defer { server.stop() }
    let reports = Locked<[TransferProgress]>([])
    let body: RequestBody =
      fromFile
      ? .file(file, contentType: "application/zip") : .data(bytes, contentType: "application/zip")
    let dog = try await kind.client(server.baseURL).send(
      Endpoint<Dog>(method: .post, path: "logs", body: body)
    ) { progress in reports.withLock { $0.append(progress) } }
    #expect(dog == Dog(name: "Rex"))
    let received = try #require(server.requests.first)
    #expect(received.body == bytes)
    #expect(received.headers["content-type"] == "application/zip")
    let progress = reports.withLock { $0 }
    #expect(
      progress.last == TransferProgress(completedBytes: bytes.count, expectedBytes: bytes.count))
    #expect(
      zip(progress, progress.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
  }
}
