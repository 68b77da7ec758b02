import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// One retry scenario: what the server answers, the request, the policy, and what should happen.
struct RetryCase: Sendable, CustomTestStringConvertible {
  var label: String
  var answers: [StubResponse]
  var method: HTTPMethod = .get
  var retryable = false
  var policy = RetryPolicy(maxAttempts: 3, baseDelay: .seconds(1), jitter: .none)
  var attempts: Int
  var outcome: String
  var waited: Duration

  var testDescription: String { label }
}

@Suite(.timeLimit(.minutes(3))) struct RetryTests {
  static let cases: [RetryCase] = [
    RetryCase(
      label: "200 is not retried", answers: [.status(200)], attempts: 1, outcome: "ok 200",
      waited: .zero),
    RetryCase(
      label: "503 then 200", answers: [.status(503), .status(200)], attempts: 2, outcome: "ok 200",
      waited: .seconds(1)),
    RetryCase(
      label: "503 three times gives up after 3", answers: [.status(503)], attempts: 3,
      outcome: "unacceptableStatus 503", waited: .seconds(3)),
    RetryCase(
      label: "408, 429, 500, 502, 504 are retried",
      answers: [
        .status(408), .status(429), .status(500), .status(502), .status(504), .status(200),
      ],
      policy: RetryPolicy(
        maxAttempts: 6, baseDelay: .seconds(1), maxDelay: .seconds(4), jitter: .none),
      attempts: 6, outcome: "ok 200", waited: .seconds(1 + 2 + 4 + 4 + 4)),
    RetryCase(
      label: "404 is not retried", answers: [.status(404)], attempts: 1,
      outcome: "unacceptableStatus 404", waited: .zero),
    RetryCase(
      label: "400 is not retried", answers: [.status(400)], attempts: 1,
      outcome: "unacceptableStatus 400", waited: .zero),
    RetryCase(
      label: "POST is not retried", answers: [.status(503), .status(200)], method: .post,
      attempts: 1,
      outcome: "unacceptableStatus 503", waited: .zero),
    RetryCase(
      label: "PATCH is not retried", answers: [.status(503), .status(200)], method: .patch,
      attempts: 1,
      outcome: "unacceptableStatus 503", waited: .zero),
    RetryCase(
      label: "POST opted in is retried", answers: [.status(503), .status(200)], method: .post,
      retryable: true,
      attempts: 2, outcome: "ok 200", waited: .seconds(1)),
    RetryCase(
      label: "PUT and DELETE are idempotent", answers: [.status(502), .status(200)],
      method: .delete,
      attempts: 2, outcome: "ok 200", waited: .seconds(1)),
    RetryCase(
      label: "connection lost is retried", answers: [.connectionLost, .status(200)], attempts: 2,
      outcome: "ok 200",
      waited: .seconds(1)),
    RetryCase(
      label: "not connected, refused, timed out are retried",
      answers: [.notConnected, .connectionRefused, .timedOut, .status(200)],
      policy: RetryPolicy(maxAttempts: 4, baseDelay: .milliseconds(100), jitter: .none),
      attempts: 4,
      outcome: "ok 200", waited: .milliseconds(100 + 200 + 400)),
    RetryCase(
      label: "timeouts can be left alone", answers: [.timedOut, .status(200)],
      policy: RetryPolicy(
        maxAttempts: 3, baseDelay: .seconds(1), jitter: .none, retriesTimeouts: false), attempts: 1,
      outcome: "timedOut", waited: .zero),
    RetryCase(
      label: "other errors are not retried", answers: [.error(URLError(.badURL)), .status(200)],
      attempts: 1,
      outcome: "transport", waited: .zero),
    RetryCase(
      label: "one attempt means no retry", answers: [.status(503), .status(200)],
      policy: RetryPolicy(maxAttempts: 1, jitter: .none), attempts: 1,
      outcome: "unacceptableStatus 503", waited: .zero),
    RetryCase(
      label: "custom statuses", answers: [.status(409), .status(200)],
      policy: RetryPolicy(
        maxAttempts: 2, baseDelay: .seconds(2), jitter: .none, retryableStatuses: [409]),
      attempts: 2,
      outcome: "ok 200", waited: .seconds(2)),
  ]

  private func client(
    _ stub: StubTransport, policy: RetryPolicy, clock: any Clock<Duration>, now: Date = Date()
  ) -> APIClient {
    // No timeout: the waits here run on a clock of their own, and the call's deadline (see
    // `retriesEndAtTheCallsDeadline`) would cut them short.
    APIClient(
      baseURL: url("https://api.example.com"), transport: stub,
      configuration: APIClient.Configuration(
        timeout: nil,
        middleware: [RetryMiddleware(policy: policy, clock: clock, now: { now })]))
  }

  @Test(arguments: cases)
  func retriesAsThePolicySays(_ retry: RetryCase) async throws {
    let stub = StubTransport()
    await stub.on(.any, .sequence(retry.answers))
    let clock = ImmediateClock()
    let client = client(stub, policy: retry.policy, clock: clock)
    var endpoint = Endpoint<Void>(method: retry.method, path: "dogs")
    if retry.retryable {
      endpoint = endpoint.retryable()
    }
    let outcome: String
    do {
      let response = try await client.response(for: endpoint).response
      outcome = "ok \(response.status)"
      #expect(response.attempts == retry.attempts)
    } catch let error as APIError {
      if case .unacceptableStatus(let response) = error {
        outcome = "unacceptableStatus \(response.status)"
      } else {
        outcome = error.kind.rawValue
      }
    }
    #expect(outcome == retry.outcome)
    #expect(await stub.requests.count == retry.attempts)
    #expect(clock.now == TestClock.Instant(offset: retry.waited))
  }

  @Test(arguments: [
    ("120", Duration.seconds(300), Duration.seconds(120)),
    ("120", .seconds(60), .seconds(60)),
    ("0", .seconds(60), .zero),
    ("Sat, 30 Nov 2030 12:01:30 GMT", .seconds(300), .seconds(90)),
    ("Sat, 30 Nov 2030 13:00:00 GMT", .seconds(60), .seconds(60)),
    ("Sat, 30 Nov 2030 11:00:00 GMT", .seconds(60), .zero),
    ("soon", .seconds(60), .seconds(1)),
  ])
  func honoursRetryAfterUpToTheCap(header: String, cap: Duration, waited: Duration) async throws {
    let now = try #require(RetryPolicyDates.noon)
    let stub = StubTransport()
    await stub.on(.any, .sequence([.status(503, headers: ["Retry-After": header]), .status(200)]))
    let clock = ImmediateClock()
    let policy = RetryPolicy(
      maxAttempts: 2, baseDelay: .seconds(1), jitter: .none, maxRetryAfter: cap, budget: nil)
    try await client(stub, policy: policy, clock: clock, now: now).send(
      Endpoint<Void>(path: "dogs"))
    #expect(clock.now == TestClock.Instant(offset: waited))
  }

  /// The server cannot make a call wait longer than its budget, however it sets `Retry-After`.
  @Test(arguments: [
    (Duration?.some(.seconds(60)), 2, Duration.seconds(50), 503),
    (.some(.seconds(100)), 3, .seconds(100), 200),
    (nil, 3, .seconds(100), 200),
  ])
  func retriesStayWithinTheBudget(
    budget: Duration?, attempts: Int, waited: Duration, status: Int
  ) async throws {
    let stub = StubTransport()
    let busy = StubResponse.status(503, headers: ["Retry-After": "50"])
    await stub.on(.any, .sequence([busy, busy, .status(200)]))
    let clock = ImmediateClock()
    let policy = RetryPolicy(
      maxAttempts: 3, jitter: .none, maxRetryAfter: .seconds(60), budget: budget)
    let client = client(stub, policy: policy, clock: clock)
    let endpoint = Endpoint<Data>(path: "dogs", decoding: .data, acceptableStatusCodes: 200..<600)
    let response = try await client.response(for: endpoint).response
    #expect(response.status == status)
    #expect(response.attempts == attempts)
    #expect(clock.now == TestClock.Instant(offset: waited))
  }

  /// A client whose retries and deadline run on one clock that takes no wall time.
  private func deadlineClient(_ stub: StubTransport, clock: ImmediateClock) -> APIClient {
    let policy = RetryPolicy(maxAttempts: 3, baseDelay: .seconds(4), jitter: .none)
    return APIClient(
      baseURL: url("https://api.example.com"), transport: stub,
      configuration: APIClient.Configuration(
        middleware: [RetryMiddleware(policy: policy, clock: clock)], clock: clock))
  }

  /// The call's timeout is a deadline for the whole call: a retry whose wait would end at or past
  /// it is not made.
  @Test(arguments: [
    // timeout, attempts made, final status, time waited
    (Duration.seconds(1), 1, 503, Duration.zero),
    (.seconds(6), 2, 503, .seconds(4)),
    (.seconds(8), 2, 503, .seconds(4)),
    (.seconds(9), 3, 200, .seconds(8)),
  ])
  func retriesEndAtTheCallsDeadline(
    timeout: Duration, attempts: Int, status: Int, waited: Duration
  ) async throws {
    let stub = StubTransport()
    let busy = StubResponse.status(503, headers: ["Retry-After": "4"])
    await stub.on(.any, .sequence([busy, busy, .status(200)]))
    let clock = ImmediateClock()
    let endpoint = Endpoint<Data>(
      path: "dogs", timeout: timeout, decoding: .data, acceptableStatusCodes: 200..<600)
    let response = try await deadlineClient(stub, clock: clock).response(for: endpoint).response
    #expect(response.status == status)
    #expect(response.attempts == attempts)
    #expect(response.retryPastDeadline == (status == 503 ? .seconds(4) : nil))
    #expect(await stub.requests.count == attempts)
    #expect(clock.now == TestClock.Instant(offset: waited))
  }

  /// The error says why the call stopped before its attempts ran out.
  @Test(arguments: [
    (
      StubResponse.status(503, headers: ["Retry-After": "4"]),
      "The server answered GET https://api.example.com/dogs with HTTP 503 Service Unavailable "
        + "(no further attempt: the retry's wait of 4 s would end after the call's deadline)."
    ),
    (
      StubResponse.error(URLError(.networkConnectionLost)),
      "The request failed for GET https://api.example.com/dogs "
        + "(no further attempt: the retry's wait of 4 s would end after the call's deadline): "
    ),
  ])
  func aRetryTheDeadlineRulesOutIsNamedInTheError(answer: StubResponse, message: String)
    async throws
  {
    // A route, not a handler: a handler is raced against the deadline, which on an immediate
    // clock is due at once.
    let stub = StubTransport()
    await stub.on(.any, answer)
    let clock = ImmediateClock()
    let error = await #expect(throws: APIError.self) {
      try await deadlineClient(stub, clock: clock).send(
        Endpoint<Void>(path: "dogs", timeout: .seconds(3)))
    }
    #expect(error?.localizedDescription.hasPrefix(message) == true, "\(String(describing: error))")
    #expect(await stub.requests.count == 1)
    #expect(clock.now == TestClock.Instant(offset: .zero))
  }

  @Test func cancellationDuringBackoffReturnsCancelledWithoutWaiting() async throws {
    let stub = StubTransport { _ in .status(503) }
    let clock = TestClock()
    let client = client(
      stub, policy: RetryPolicy(maxAttempts: 5, baseDelay: .seconds(3600), jitter: .none),
      clock: clock)
    let call = Task { try await client.send(Endpoint<Void>(path: "dogs")) }
    try #require(await clock.waitForSleepers())
    call.cancel()
    let error = await #expect(throws: APIError.self) { try await call.cancellableValue }
    #expect(error?.kind == .cancelled)
    #expect(clock.sleeperCount == 0)
    #expect(await stub.requests.count == 1)
  }

  @Test func theFinalErrorSaysHowManyAttemptsWereMade() async throws {
    let clock = ImmediateClock()
    let policy = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1), jitter: .none)
    let statusError = await #expect(throws: APIError.self) {
      try await client(StubTransport { _ in .status(503) }, policy: policy, clock: clock).send(
        Endpoint<Void>(path: "d"))
    }
    #expect(
      statusError?.localizedDescription
        == "The server answered GET https://api.example.com/d with HTTP 503 Service Unavailable after 3 attempts."
    )
    let networkError = await #expect(throws: APIError.self) {
      try await client(StubTransport { _ in .connectionLost }, policy: policy, clock: clock).send(
        Endpoint<Void>(path: "d"))
    }
    #expect(
      networkError?.localizedDescription
        == "The request failed for GET https://api.example.com/d after 3 attempts: the connection "
        + "was lost before the response was complete (URLError -1005).")
  }

  @Test(arguments: [(1, 1), (2, 2), (3, 4), (4, 8), (5, 10), (40, 10)])
  func backoffDoublesUpToTheMaximum(retry: Int, seconds: Int) {
    let policy = RetryPolicy(baseDelay: .seconds(1), maxDelay: .seconds(10))
    #expect(policy.backoff(beforeRetry: retry) == .seconds(seconds))
  }

  /// Huge attempt numbers and delays saturate at the maximum instead of overflowing.
  @Test(arguments: [
    (Duration.seconds(1), Duration.seconds(10), Int.max, Duration.seconds(10)),
    (.seconds(Int64.max / 2), .seconds(Int64.max), 40, .seconds(Int64.max)),
    (.seconds(Int64.max), .seconds(Int64.max), 2, .seconds(Int64.max)),
    (.milliseconds(500), .seconds(Int64.max), 200, .milliseconds(500) * (Int64(1) << 62)),
  ])
  func backoffSaturates(base: Duration, maximum: Duration, retry: Int, expected: Duration) {
    let policy = RetryPolicy(baseDelay: base, maxDelay: maximum)
    #expect(policy.backoff(beforeRetry: retry) == expected)
  }

  @Test func fullJitterOverAHugeBackoffSaturates() async throws {
    let clock = ImmediateClock()
    let policy = RetryPolicy(
      maxAttempts: 2, baseDelay: .seconds(Int64.max), maxDelay: .seconds(Int64.max), budget: nil)
    let stub = StubTransport { _ in .status(503) }
    let response = try await client(stub, policy: policy, clock: clock)
      .response(for: Endpoint<Data>(path: "d").accepting(200..<600)).response
    #expect(response.status == 503 && response.attempts == 2)
    #expect(clock.now.offset <= .seconds(9_300_000_000))
  }

  @Test func fullJitterStaysWithinTheBackoff() async throws {
    let stub = StubTransport { _ in .status(503) }
    let clock = ImmediateClock()
    let policy = RetryPolicy(
      maxAttempts: 50, baseDelay: .seconds(1), maxDelay: .seconds(2), jitter: .full)
    await #expect(throws: APIError.self) {
      try await client(stub, policy: policy, clock: clock).send(Endpoint<Void>(path: "d"))
    }
    let waited = clock.now.offset
    #expect(waited > .zero)
    #expect(waited < .seconds(1 + 2 * 48))
    #expect(waited != .seconds(1 + 2 * 48))
  }
}

enum RetryPolicyDates {
  /// 30 November 2030, 12:00:00 GMT.
  static let noon = RetryPolicy.httpDateForTests("Sat, 30 Nov 2030 12:00:00 GMT")
}

extension RetryPolicy {
  static func httpDateForTests(_ text: String) -> Date? {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
    return formatter.date(from: text)
  }
}
