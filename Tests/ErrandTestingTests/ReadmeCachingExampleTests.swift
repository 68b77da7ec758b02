import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// README's "Caching" test example, compiled and run as written.
@Suite(.timeLimit(.minutes(3))) struct ReadmeCachingExampleTests {
  @Test func dogsStayCachedForAMinute() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    let dogs = try JSONEncoder().encode([Dog(name: "Rex")])
    await stub.on(
      .get, "/v1/dogs", .status(200, body: dogs, headers: ["Cache-Control": "max-age=60"]))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: .init(middleware: [CachingMiddleware(cache: HTTPCache())], clock: clock))
    _ = try await client.send(Endpoint<[Dog]>(path: "dogs"))
    await clock.advance(by: .seconds(59))  // no waiting: the cache ages on the client's clock
    let again = try await client.response(for: Endpoint<[Dog]>(path: "dogs"))
    #expect(again.response.cacheStatus == .hit && again.value == [Dog(name: "Rex")])
    #expect(await stub.requests.count == 1)
  }
}
