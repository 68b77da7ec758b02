import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// README's "Recording and replaying" lines, run against a stub upstream into a temporary file.
@Suite(.timeLimit(.minutes(3))) struct ReadmeCassetteExampleTests {
  @Test func recordsThenReplays() async throws {
    let file = temporaryCassette("dogpatch")
    let upstream = StubTransport { _ in .json([Dog(name: "Rex")]) }
    for run in 1...2 {
      let cassette = CassetteTransport(url: file, mode: .once, upstream: upstream)
      let client = APIClient(
        baseURL: URL(string: "https://api.dogpatch.example/v1")!, transport: cassette)
      let dogs = try await client.send(Endpoint<[Dog]>(path: "dogs"))
      #expect(dogs == [Dog(name: "Rex")], "run \(run)")
      #expect(await cassette.verifyAllPlayed().isEmpty)
    }
    #expect(await upstream.requests.count == 1)
  }
}
