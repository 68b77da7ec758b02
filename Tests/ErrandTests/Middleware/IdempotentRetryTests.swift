import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// One retried call with an idempotency key: what the server answers and how many attempts
/// reach it.
struct IdempotentRetryCase: Sendable, CustomTestStringConvertible {
  var label: String
  var method: HTTPMethod = .post
  var answers: [StubResponse]
  var attempts: Int

  var testDescription: String { label }
}

/// A token provider that hands out `old`, then `new` once asked to refresh; no waiting.
private actor RotatingTokens: TokenProvider {
  private var token = "old"

  func currentToken() async throws -> String? { token }

  func refreshToken() async throws -> String {
    token = "new"
    return token
  }
}

/// `RetryMiddleware` retries an unsafe call that carries an idempotency key, and every attempt of
/// the call sends the same key; no other call sends it.
@Suite(.timeLimit(.minutes(3))) struct IdempotentRetryTests {
  static let cases: [IdempotentRetryCase] = [
    IdempotentRetryCase(
      label: "POST, 503 twice then 200", answers: [.status(503), .status(503), .status(200)],
      attempts: 3),
    IdempotentRetryCase(
      label: "PATCH, connection lost then 200", method: .patch,
      answers: [.connectionLost, .status(200)], attempts: 2),
    IdempotentRetryCase(
      label: "POST, timed out then 200", answers: [.timedOut, .status(200)], attempts: 2),
    IdempotentRetryCase(
      label: "POST, 429 with Retry-After then 200",
      answers: [.status(429, headers: ["Retry-After": "2"]), .status(200)], attempts: 2),
    IdempotentRetryCase(
      label: "DELETE (idempotent anyway), 502 then 200", method: .delete,
      answers: [.status(502), .status(200)], attempts: 2),
  ]

  static let policy = RetryPolicy(maxAttempts: 3, baseDelay: .seconds(1), jitter: .none)

  /// A client whose retries wait on a clock that takes no wall time, without a deadline.
  static func client(
    _ stub: StubTransport, policy: RetryPolicy = policy, more middleware: [any Middleware] = []
  ) -> APIClient {
    APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        timeout: nil,
        middleware: [RetryMiddleware(policy: policy, clock: ImmediateClock())] + middleware))
  }

  static func keys(_ stub: StubTransport) async -> [String?] {
    await stub.requests.map { $0.headers["Idempotency-Key"] }
  }

  @Test(arguments: cases)
  func everyAttemptSendsTheCallsOneKey(_ retry: IdempotentRetryCase) async throws {
    let stub = StubTransport()
    await stub.on(.any, .sequence(retry.answers))
    let endpoint = Endpoint<Void>(method: retry.method, path: "orders").withIdempotencyKey()
    let response = try await Self.client(stub).response(for: endpoint)
    #expect(response.response.attempts == retry.attempts)
    let keys = await Self.keys(stub)
    #expect(keys.count == retry.attempts)
    #expect(Set(keys).count == 1)
    let key = try #require(keys.first ?? nil)
    #expect(IdempotencyKeyTests.uuid(in: key) != nil)
    // The caller can read the key its call sent.
    #expect(response.request.headers["Idempotency-Key"] == key)
  }

  @Test func twoCallsOfOneEndpointSendTwoKeys() async throws {
    let stub = StubTransport()
    await stub.on(.any, .sequence([.status(503), .status(201), .status(503), .status(201)]))
    let client = Self.client(stub)
    let endpoint = Endpoint<Void>(method: .post, path: "orders").withIdempotencyKey()
    try await client.send(endpoint)
    try await client.send(endpoint)
    let keys = await Self.keys(stub)
    #expect(keys.count == 4)
    #expect(keys[0] == keys[1] && keys[2] == keys[3])
    #expect(keys[0] != keys[2])
  }

  /// The endpoint's own field is kept on every attempt, and the option still makes the call
  /// retryable.
  @Test(arguments: [IdempotencyKey.generated, .fixed("from-the-option")])
  func theEndpointsOwnKeyIsSentOnEveryAttempt(option: IdempotencyKey) async throws {
    let stub = StubTransport()
    await stub.on(.any, .sequence([.status(503), .status(200)]))
    let endpoint = Endpoint<Void>(
      method: .post, path: "orders", headers: ["Idempotency-Key": "k-1"]
    ).withIdempotencyKey(option)
    try await Self.client(stub).send(endpoint)
    #expect(await Self.keys(stub) == ["k-1", "k-1"])
  }

  @Test(arguments: [HTTPMethod.post, .patch])
  func withoutTheOptionAnUnsafeCallIsNotRetriedAndSendsNoKey(method: HTTPMethod) async throws {
    let stub = StubTransport()
    await stub.on(.any, .sequence([.status(503), .status(200)]))
    let endpoint = Endpoint<Void>(method: method, path: "orders")
    let error = await #expect(throws: APIError.self) { try await Self.client(stub).send(endpoint) }
    #expect(error?.kind == .unacceptableStatus)
    #expect(error?.response?.status == 503)
    #expect(await Self.keys(stub) == [nil])
  }

  /// `isIdempotent = false` says the call must not be repeated, key or not.
  @Test func anEndpointThatSaysItIsNotIdempotentIsNotRetried() async throws {
    let stub = StubTransport()
    await stub.on(.any, .sequence([.status(503), .status(200)]))
    var endpoint = Endpoint<Void>(method: .post, path: "orders").withIdempotencyKey()
    endpoint.isIdempotent = false
    let error = await #expect(throws: APIError.self) { try await Self.client(stub).send(endpoint) }
    #expect(error?.response?.status == 503)
    let keys = await Self.keys(stub)
    #expect(keys.count == 1)
    #expect(IdempotencyKeyTests.uuid(in: keys.first ?? nil) != nil)
  }

  /// A 401 is replayed with a fresh token, then the retry goes on: one key throughout.
  @Test func theKeySurvivesATokenRefreshReplay() async throws {
    let stub = StubTransport()
    await stub.on(.header("Authorization", "Bearer old"), .status(401))
    await stub.on(.any, .sequence([.status(503), .status(201)]))
    let client = Self.client(
      stub, more: [BearerAuthenticationMiddleware(provider: RotatingTokens())])
    let endpoint = Endpoint<Void>(method: .post, path: "orders", requiresAuthentication: true)
      .withIdempotencyKey()
    try await client.send(endpoint)
    let requests = await stub.requests
    #expect(
      requests.map { $0.headers["Authorization"] } == ["Bearer old", "Bearer new", "Bearer new"])
    #expect(requests.count == 3)
    #expect(Set(requests.map { $0.headers["Idempotency-Key"] }).count == 1)
    #expect(IdempotencyKeyTests.uuid(in: requests.first?.headers["Idempotency-Key"]) != nil)
  }

  /// However the retries end (attempts used up, the budget, the call's deadline), the call sent
  /// one key.
  @Test(
    arguments: [
      // label, policy, timeout, attempts
      (
        "attempts used up", RetryPolicy(maxAttempts: 3, baseDelay: .seconds(1), jitter: .none),
        Duration?.none, 3
      ),
      (
        "past the budget",
        RetryPolicy(
          maxAttempts: 5, baseDelay: .seconds(40), maxDelay: .seconds(40), jitter: .none,
          budget: .seconds(60)),
        nil, 2
      ),
      (
        "past the deadline", RetryPolicy(maxAttempts: 5, baseDelay: .seconds(4), jitter: .none),
        .seconds(13), 3
      ),
    ] as [(String, RetryPolicy, Duration?, Int)])
  func aCallThatRunsOutOfRetriesSentOneKey(
    label: String, policy: RetryPolicy, timeout: Duration?, attempts: Int
  ) async throws {
    let stub = StubTransport()
    await stub.on(.any, .status(503))
    let clock = ImmediateClock()
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        timeout: timeout, middleware: [RetryMiddleware(policy: policy)], clock: clock))
    let endpoint = Endpoint<Void>(method: .post, path: "orders").withIdempotencyKey()
    let error = await #expect(throws: APIError.self, "\(label)") { try await client.send(endpoint) }
    #expect(error?.response?.status == 503, "\(label)")
    #expect(error?.response?.attempts == attempts, "\(label)")
    let keys = await Self.keys(stub)
    #expect(keys.count == attempts, "\(label)")
    #expect(Set(keys).count == 1, "\(label)")
    #expect(IdempotencyKeyTests.uuid(in: keys.first ?? nil) != nil, "\(label)")
  }

  /// A streamed call goes through the same retries with the same key.
  @Test func aStreamedCallIsRetriedWithItsKey() async throws {
    let stub = StubTransport()
    await stub.on(.any, .sequence([.status(503), .chunks([Data("one\n".utf8)])]))
    let endpoint = Endpoint<Data>(method: .post, path: "completions", decoding: .data)
      .withIdempotencyKey()
    let stream = try await Self.client(stub).stream(endpoint)
    var lines: [String] = []
    for try await line in stream.lines {
      lines.append(line)
    }
    #expect(lines == ["one"])
    let keys = await Self.keys(stub)
    #expect(keys.count == 2)
    #expect(Set(keys).count == 1)
    #expect(stream.request.headers["Idempotency-Key"] == keys.first ?? nil)
  }
}
