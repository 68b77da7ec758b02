import Errand
import ErrandTesting
import Foundation

/// The dog the examples and the stub kit's tests use.
package struct Dog: Codable, Equatable, Sendable {
  package var name: String

  package init(name: String) {
    self.name = name
  }
}

/// A dog as `Fixtures/dogs.json` describes it.
package struct FixtureDog: Codable, Equatable, Sendable {
  package var id: Int
  package var name: String
  package var breed: String
  package var age: Int

  package init(id: Int, name: String, breed: String, age: Int) {
    self.id = id
    self.name = name
    self.breed = breed
    self.age = age
  }
}

/// The example API's base URL.
package let base = url("https://api.example.com/v1")

/// A URL from a literal that the test table guarantees is valid.
package func url(_ string: String) -> URL {
  guard let url = URL(string: string) else {
    preconditionFailure("test table holds an invalid URL: \(string)")
  }
  return url
}

/// A request to a path under the example API's host.
package func request(
  _ method: HTTPMethod = .get, _ path: String, headers: HTTPHeaders = [:], body: Data? = nil
) -> HTTPRequest {
  HTTPRequest(
    method: method, url: url("https://api.example.com" + path), headers: headers, body: body)
}

/// A client for the example API over a transport.
package func client(_ transport: any Transport) -> APIClient {
  APIClient(baseURL: base, transport: transport)
}

/// A client for tests that only build requests: sending anything fails the test.
package func makeClient(
  _ base: String = "https://api.example.com/v1",
  configuration: APIClient.Configuration = APIClient.Configuration(),
  fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
) -> APIClient {
  APIClient(
    baseURL: url(base),
    transport: .unimplemented(
      "request building", fileID: fileID, filePath: filePath, line: line, column: column),
    configuration: configuration)
}

/// A client over a real `URLSessionTransport`.
package func liveClient(
  _ baseURL: URL, configuration: APIClient.Configuration = APIClient.Configuration()
) -> APIClient {
  APIClient(baseURL: baseURL, transport: URLSessionTransport(), configuration: configuration)
}

/// `count` bytes of a non-text pattern whose period (251, a prime) does not divide buffer sizes,
/// so that any shifted, lost or repeated block shows. Built by blocks: cheap even at 10 MB.
package func patternBytes(_ count: Int) -> Data {
  let block = Data((0..<251).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
  var data = Data(capacity: count + block.count)
  while data.count < count {
    data.append(block)
  }
  return data.prefix(count)
}

/// A stub for the streaming examples: two lines at `/v1/events`, two events at `/v1/sse` a
/// second apart, one dog at `/v1/dogs.jsonl`, two chunks at `/v1/video`, and a dog for a `POST`
/// to `/v1/logs`.
package func streamingStub(clock: any Clock<Duration> = ContinuousClock()) async -> StubTransport {
  let stub = StubTransport(clock: clock)
  await stub.on(.get, "/v1/events", .chunks([Data("one\n".utf8), Data("two\n".utf8)]))
  await stub.on(
    .get, "/v1/sse",
    .events(
      [ServerSentEvent(data: "1"), ServerSentEvent(event: "tick", data: "2")],
      interval: .seconds(1)))
  await stub.on(.get, "/v1/dogs.jsonl", .chunks([Data("{\"name\":\"Rex\"}\n".utf8)]))
  await stub.on(
    .get, "/v1/video", .chunks([Data("a".utf8), Data("b".utf8)], interval: .milliseconds(10)))
  await stub.on(.post, "/v1/logs", .json(Dog(name: "Rex"), status: 201))
  return stub
}

/// A seeded random number generator (SplitMix64), so that a fuzz run can be repeated exactly.
package struct SeededGenerator: RandomNumberGenerator {
  var state: UInt64

  package init(seed: UInt64) {
    state = seed
  }

  package mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// How large the CPU-bound suites (the fuzz suites) run. Small by default, so that `swift test`
/// leaves the two threads of a 2-core machine's cooperative pool to the suites that wait for
/// events; full size with `ERRAND_FULL_SIZE=1`, which CI sets in a step of its own.
package enum TestSize {
  /// Whether `ERRAND_FULL_SIZE` is set.
  package static let isFull = ProcessInfo.processInfo.environment["ERRAND_FULL_SIZE"] != nil

  /// `full` when running at full size, else `small`.
  package static func count(small: Int, full: Int) -> Int {
    isFull ? full : small
  }
}

extension Task where Failure == any Error {
  /// The task's value, cancelling the task if the waiting one is cancelled first, as Swift
  /// Testing cancels a test that runs past its time limit: a test that would wait for ever on a
  /// task (say one sleeping on a `TestClock` that is never advanced) ends as a failure instead of
  /// stalling the whole run.
  package var cancellableValue: Success {
    get async throws {
      try await withTaskCancellationHandler {
        try await value
      } onCancel: {
        cancel()
      }
    }
  }
}

extension Task where Failure == Never {
  /// The task's value, cancelling the task if the waiting one is cancelled first (see the
  /// throwing variant).
  package var cancellableValue: Success {
    get async {
      await withTaskCancellationHandler {
        await value
      } onCancel: {
        cancel()
      }
    }
  }
}

/// A fresh folder for one test, removed with everything in it when the test lets go of it.
package final class TemporaryFolder {
  package let url = FileManager.default.temporaryDirectory.appendingPathComponent(
    "errand-test-\(UUID().uuidString)")
  package init() throws {
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }
  deinit { try? FileManager.default.removeItem(at: url) }
  /// The names in the folder, sorted.
  package var names: [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted()
  }
  /// A path inside the folder.
  package func appending(_ path: String) -> URL { url.appendingPathComponent(path) }
}
