import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// 200 tests' worth of clients at once, each with its own stub: no answer or journal entry crosses.
@Suite(.timeLimit(.minutes(3))) struct ParallelSafetyTests {
  @Test func twoHundredStubsNeverCrossTalk() async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
      for index in 0..<200 {
        group.addTask {
          let stub = StubTransport()
          await stub.on(
            .get, "/v1/dogs/{id}",
            .handler { request, _ in .json(Dog(name: request.url.lastPathComponent)) })
          let client = client(stub)
          for call in 0..<5 {
            let dog = try await client.send(Endpoint<Dog>(path: "dogs/\(index)-\(call)"))
            #expect(dog == Dog(name: "\(index)-\(call)"))
          }
          let paths = await stub.requests.map(\.url.lastPathComponent)
          #expect(paths == (0..<5).map { "\(index)-\($0)" })
        }
      }
      try await group.waitForAll()
    }
  }
}
