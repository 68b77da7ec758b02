import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct FileBodyTests {
  @Test func aFileBodyIsAFileInTheRequestAndBytesAtTheStub() async throws {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent(
      "errand-body-\(UUID().uuidString).zip")
    try Data("zip bytes".utf8).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    let endpoint = Endpoint<Void>(
      method: .post, path: "logs", body: .file(file, contentType: "application/zip"))
    let stub = StubTransport()
    await stub.on(.post, "/v1/logs", .status(204))
    let request = try client(stub).makeRequest(for: endpoint)
    #expect(request.bodyFile == file)
    #expect(request.body == nil)
    #expect(request.headers["Content-Type"] == "application/zip")
    let reports = Locked<[TransferProgress]>([])
    try await client(stub).send(endpoint) { progress in reports.withLock { $0.append(progress) } }
    #expect(try await stub.nextRequest().body == Data("zip bytes".utf8))
    #expect(reports.withLock { $0 } == [TransferProgress(completedBytes: 9, expectedBytes: 9)])
  }

  @Test(arguments: [
    ("/no/such/file.zip", "does not exist"), ("/tmp", "is a folder, not a regular file"),
    ("/dev/zero", "is a device, not a regular file"),
  ])
  func aFileThatIsNotARegularFileIsAnInvalidRequest(path: String, problem: String) throws {
    let endpoint = Endpoint<Void>(
      method: .post, path: "logs", body: .file(URL(fileURLWithPath: path)))
    let error = try #require(throws: APIError.self) {
      try makeClient().makeRequest(for: endpoint)
    }
    #expect(error.kind == .invalidRequest)
    #expect(error.invalidRequestReason?.contains("the body file \(path) \(problem)") == true)
  }

  @Test func aDownloadFromAStubStreamRunsOnItsClock() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(
      .get, "/v1/video", .chunks([Data("ab".utf8), Data("cd".utf8)], interval: .seconds(600)))
    let destination = FileManager.default.temporaryDirectory.appendingPathComponent(
      "errand-video-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: destination) }
    let reports = Locked<[TransferProgress]>([])
    let download = Task {
      try await client(stub).download(
        Endpoint<Data>(path: "video", decoding: .data), to: destination
      ) { progress in reports.withLock { $0.append(progress) } }
    }
    try #require(await clock.waitForSleepers(1))
    await clock.advance(by: .seconds(600))
    _ = try await download.cancellableValue
    #expect(try Data(contentsOf: destination) == Data("abcd".utf8))
    #expect(
      reports.withLock { $0 } == [
        TransferProgress(completedBytes: 2, expectedBytes: nil),
        TransferProgress(completedBytes: 4, expectedBytes: nil),
      ])
  }
}
