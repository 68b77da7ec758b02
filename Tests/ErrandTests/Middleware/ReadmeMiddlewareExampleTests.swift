import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// README's "Authentication, retries and logging" client, built as written and exercised.
@Suite(.timeLimit(.minutes(3))) struct ReadmeMiddlewareExampleTests {
  struct SessionTokens: TokenProvider {
    func currentToken() async throws -> String? { "expired" }
    func refreshToken() async throws -> String { "fresh" }
  }

  @Test func clientWithAuthRetriesAndLogging() async throws {
    let lines = Locked<[String]>([])
    let stub = StubTransport()
    await stub.on(.header("Authorization", "Bearer expired"), .status(401))
    await stub.on(.get, "/v1/me", .sequence([.status(503), .json(Dog(name: "Rex"))]))
    let client = APIClient(
      baseURL: url("https://api.example.com/v1"), transport: stub,
      configuration: .init(middleware: [
        LoggingMiddleware { event in lines.withLock { $0.append(event.message) } },
        RetryMiddleware(policy: RetryPolicy(maxAttempts: 4, jitter: .none), clock: .immediate),
        BearerAuthenticationMiddleware(provider: SessionTokens()),
      ]))
    #expect(
      try await client.send(Endpoint<Dog>(path: "me", requiresAuthentication: true))
        == Dog(name: "Rex"))
    #expect(
      await stub.requests.compactMap { $0.headers["Authorization"] } == [
        "Bearer expired", "Bearer fresh", "Bearer fresh",
      ])
    #expect(lines.withLock { $0 }.count == 2)
    #expect(lines.withLock { $0 }.first == "→ GET https://api.example.com/v1/me")
  }

  struct Receipt: Codable, Equatable, Sendable { var id: Int }
  struct Order: Codable, Sendable { var sku: String }

  /// README's idempotency key example, as written: the retried POST sends one key.
  @Test func postRetriedWithAnIdempotencyKey() async throws {
    let stub = StubTransport()
    await stub.on(.post, "/v1/payments", .sequence([.status(503), .json(Receipt(id: 7))]))
    let client = APIClient(
      baseURL: url("https://api.example.com/v1"), transport: stub,
      configuration: .init(middleware: [RetryMiddleware(clock: .immediate)]))
    let order = Order(sku: "A1")
    let pay = Endpoint<Receipt>(method: .post, path: "payments", body: .json(order))
      .withIdempotencyKey()  // or .withIdempotencyKey(.fixed(storedKey))
    let receipt = try await client.send(pay)
    #expect(receipt == Receipt(id: 7))
    let keys = await stub.requests.map { $0.headers["Idempotency-Key"] }
    #expect(keys.count == 2 && keys[0] != nil && keys[0] == keys[1])
  }
}
