import Errand
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// The cache against a real server, through every transport: a stale response revalidated with
/// `If-None-Match`, and a `304` that arrives over the wire.
@Suite(.timeLimit(.minutes(3))) struct CacheOverSocketTests {
  @Test(arguments: TransportKind.allCases)
  func aMatchingIfNoneMatchGetsA304AndTheStoredBody(_ transport: TransportKind) async throws {
    let server = try LoopbackServer { request in
      guard request.headers["If-None-Match"] == "\"v1\"" else {
        return ScriptedResponse(
          headers: [
            ("Cache-Control", "no-cache"), ("ETag", "\"v1\""), ("Content-Type", "application/json"),
          ],
          body: Data("[\"Rex\"]".utf8))
      }
      return ScriptedResponse(status: 304, headers: [("ETag", "\"v1\"")])
    }
    defer { server.stop() }
    let client = transport.client(
      server.baseURL,
      configuration: APIClient.Configuration(middleware: [CachingMiddleware(cache: HTTPCache())]))
    let endpoint = Endpoint<[String]>(path: "dogs")
    let first = try await client.response(for: endpoint)
    #expect(first.response.cacheStatus == .miss)
    let second = try await client.response(for: endpoint)
    #expect(second.value == ["Rex"])
    #expect(second.response.cacheStatus == .revalidated)
    #expect(second.response.status == 200)
    #expect(server.requests.count == 2)
    #expect(server.requests.last?.headers["If-None-Match"] == "\"v1\"")
  }
}
