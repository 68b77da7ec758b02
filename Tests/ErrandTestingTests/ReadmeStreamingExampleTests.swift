import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// README's "Streaming, downloads and uploads" section, run as written against stubs.
@Suite(.timeLimit(.minutes(3))) struct ReadmeStreamingExampleTests {
  @Test func theStreamingSectionRunsAsWritten() async throws {
    let stub = await streamingStub(clock: .immediate)
    let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, transport: stub)
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "errand-readme-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("video.bin")
    let bundleURL = folder.appendingPathComponent("logs.zip")
    try Data("zip".utf8).write(to: bundleURL)
    let consumed = Locked<[Data]>([])
    func consume(_ chunk: Data) { consumed.withLock { $0.append(chunk) } }
    let shown = Locked<[Dog]>([])
    func show(_ dog: Dog) { shown.withLock { $0.append(dog) } }
    var printed: [String] = []
    func print(_ items: Any...) { printed.append(items.map { "\($0)" }.joined(separator: " ")) }

    // As in README:
    let stream = try await client.stream(Endpoint<Data>(path: "events", decoding: .data))
    print(stream.response.status)
    for try await chunk in stream { consume(chunk) }

    for try await event in try await client.events(Endpoint<Data>(path: "sse", decoding: .data)) {
      print(event.event, event.data, event.id ?? "-")
    }
    for try await dog in try await client.jsonLines(Endpoint<Dog>(path: "dogs.jsonl")) { show(dog) }

    let saved = try await client.download(
      Endpoint<Data>(path: "video", decoding: .data), to: destination
    ) {
      progress in _ = (progress.completedBytes, progress.expectedBytes ?? -1)
    }
    let upload = Endpoint<Dog>(
      method: .post, path: "logs", body: .file(bundleURL, contentType: "application/zip"))
    let receipt = try await client.send(upload) { progress in _ = progress.fractionCompleted ?? 0 }

    #expect(printed == ["200", "message 1 -", "tick 2 -"])
    #expect(consumed.withLock { $0 } == [Data("one\n".utf8), Data("two\n".utf8)])
    #expect(shown.withLock { $0 } == [Dog(name: "Rex")])
    #expect(try Data(contentsOf: saved.value) == Data("ab".utf8))
    #expect(receipt == Dog(name: "Rex"))
    #expect(await stub.requests.last?.body == Data("zip".utf8))
  }
}
