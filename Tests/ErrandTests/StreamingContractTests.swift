import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// The streaming names that tests outside this repository use, compiled as they write them.
@Suite(.timeLimit(.minutes(3))) struct StreamingContractTests {
  @Test func theStreamingNamesCompileAndWork() async throws {
    let stub = await streamingStub(clock: .immediate)
    let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, transport: stub)
    let destination = FileManager.default.temporaryDirectory.appendingPathComponent(
      "errand-contract-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: destination) }
    let bundleURL = FileManager.default.temporaryDirectory.appendingPathComponent(
      "errand-contract-\(UUID().uuidString).zip")
    try Data("zip".utf8).write(to: bundleURL)
    defer { try? FileManager.default.removeItem(at: bundleURL) }

    let stream = try await client.stream(Endpoint<Data>(path: "events", decoding: .data))
    #expect(stream.response.status == 200)
    var chunks: [Data] = []
    for try await chunk in stream { chunks.append(chunk as Data) }
    #expect(chunks == [Data("one\n".utf8), Data("two\n".utf8)])
    var lines: [String] = []
    for try await line in try await client.stream(Endpoint<Data>(path: "events", decoding: .data))
      .lines
    {
      lines.append(line as String)
    }
    #expect(lines == ["one", "two"])
    var events: [(String, String, String?, Duration?)] = []
    for try await event in try await client.events(Endpoint<Data>(path: "sse", decoding: .data)) {
      events.append((event.event, event.data, event.id, event.retry))
    }
    #expect(events.map(\.1) == ["1", "2"])
    var dogs: [Dog] = []
    for try await dog in try await client.jsonLines(Endpoint<Dog>(path: "dogs.jsonl")) {
      dogs.append(dog)
    }
    #expect(dogs == [Dog(name: "Rex")])
    let saved: Response<URL> = try await client.download(
      Endpoint<Data>(path: "video", decoding: .data), to: destination)
    #expect(try Data(contentsOf: saved.value) == Data("ab".utf8))
    let upload = Endpoint<Dog>(
      method: .post, path: "logs", body: .file(bundleURL, contentType: "application/zip"))
    #expect(try await client.send(upload) == Dog(name: "Rex"))
    let limited = APIClient.Configuration(maximumResponseSize: 10_000_000)
    #expect(limited.maximumResponseSize == 10_000_000)
    var endpoint = Endpoint<Data>(path: "video", decoding: .data)
    endpoint.maximumResponseSize = 1
    let error = await #expect(throws: APIError.self) { try await client.send(endpoint) }
    guard case .transport(let underlying) = error else {
      Issue.record("expected .transport, got \(String(describing: error))")
      return
    }
    #expect((underlying as? URLError)?.code == .dataLengthExceedsMaximum)
  }
}
