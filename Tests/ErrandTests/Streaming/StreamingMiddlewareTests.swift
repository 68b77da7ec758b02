import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Streamed calls go through the same middleware as `send`, which act on the head.
@Suite(.timeLimit(.minutes(3))) struct StreamingMiddlewareTests {
  struct SessionTokens: TokenProvider {
    func currentToken() async throws -> String? { "expired" }
    func refreshToken() async throws -> String { "fresh" }
  }

  @Test func retriesAndTokenRefreshActOnTheHead() async throws {
    let stub = StubTransport()
    await stub.on(.header("Authorization", "Bearer expired"), .status(401))
    await stub.on(
      .get, "/v1/feed",
      .sequence([
        .chunks([Data("busy".utf8)], status: 503),
        .chunks([Data("a".utf8), Data("b".utf8)]),
      ]))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: .init(middleware: [
        RetryMiddleware(policy: RetryPolicy(maxAttempts: 3, jitter: .none), clock: .immediate),
        BearerAuthenticationMiddleware(provider: SessionTokens()),
      ]))
    let stream = try await client.stream(
      Endpoint<Data>(path: "feed", requiresAuthentication: true, decoding: .data))
    #expect(stream.response.status == 200)
    #expect(stream.response.attempts == 2)
    #expect(try await stream.collect() == Data("ab".utf8))
    #expect(
      await stub.requests.compactMap { $0.headers["Authorization"] } == [
        "Bearer expired", "Bearer fresh", "Bearer fresh",
      ])
  }
}
