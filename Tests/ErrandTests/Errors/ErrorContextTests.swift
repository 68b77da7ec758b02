import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Every error of a call carries its call (``APIError/context``): the request as the transport
/// was given it, the attempts made, the metrics; its description names the request and the
/// attempts, and no printed form shows a secret.
@Suite(.timeLimit(.minutes(3))) struct ErrorContextTests {
  static let base = url("https://api.example.com/v1/")
  static let secrets = ["s3cret-token", "s3cret-key"]

  /// `GET dogs?api_key=…` with a bearer token: both secret.
  static let endpoint = Endpoint<[Dog]>(
    path: "dogs", query: [URLQueryItem(name: "api_key", value: "s3cret-key")],
    headers: ["Authorization": "Bearer s3cret-token"])

  static let shownRequest = "GET https://api.example.com/v1/dogs?api_key=<redacted>"

  /// Every form an error can be printed in.
  static func printedForms(of error: any Error) -> [String] {
    var dumped = ""
    dump(error, to: &dumped)
    return [
      error.localizedDescription, String(describing: error), "\(error)",
      String(reflecting: error), dumped,
    ]
  }

  static func expectNoSecret(in error: any Error, sourceLocation: SourceLocation = #_sourceLocation)
  {
    let forms = printedForms(of: error)
    for (form, secret) in forms.flatMap({ form in secrets.map { (form, $0) } }) {
      #expect(!form.contains(secret), "printed \(secret):\n\(form)", sourceLocation: sourceLocation)
    }
    #expect(forms.last?.contains("<redacted>") == true, sourceLocation: sourceLocation)
  }

  /// How a call that waits for an answer ends.
  enum Ending: String, CaseIterable {
    case timeout, cancellation

    var kind: APIError.Kind { self == .timeout ? .timedOut : .cancelled }
    var verb: String { self == .timeout ? "timed out" : "was cancelled" }
  }

  /// A client over `stub` that tries three times, its waits on an immediate clock.
  static func retryingClient(_ stub: StubTransport) -> APIClient {
    let retry = RetryMiddleware(
      policy: RetryPolicy(maxAttempts: 3, baseDelay: .seconds(1), jitter: .none),
      clock: ImmediateClock())
    return APIClient(
      baseURL: base, transport: stub, configuration: APIClient.Configuration(middleware: [retry]))
  }

  /// A call with a 10-second timeout whose first attempts time out at once (a `URLError`), each
  /// retried after 1 s, then 2 s, and whose last attempt waits for an answer that comes only
  /// after an hour: the deadline ends it, or the caller cancels it.
  @Test(arguments: Ending.allCases, [1, 3])
  func aTimeoutOrACancellationNamesItsRequestAndAttempts(ending: Ending, attempts: Int)
    async throws
  {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    let late = StubResponse.json([Dog(name: "Rex")]).delayed(by: .seconds(3600))
    await stub.on(
      .get, "/v1/dogs",
      .sequence(Array(repeating: StubResponse.timedOut, count: attempts - 1) + [late]))
    let retry = RetryMiddleware(
      policy: RetryPolicy(maxAttempts: attempts, baseDelay: .seconds(1), jitter: .none))
    let client = APIClient(
      baseURL: Self.base, transport: stub,
      configuration: APIClient.Configuration(
        timeout: .seconds(10), middleware: [retry], clock: clock))
    let call = Task { try await client.send(Self.endpoint) }
    for retry in 1..<attempts {
      try #require(await clock.waitForSleeper(dueIn: .seconds(1 << (retry - 1))))
      await clock.advance(by: .seconds(1 << (retry - 1)))
    }
    try #require(await clock.waitForSleeper(dueIn: .seconds(3600)))
    switch ending {
    case .timeout: await clock.advance(by: .seconds(10))
    case .cancellation: call.cancel()
    }

    let error = try await #require(throws: APIError.self) { try await call.cancellableValue }
    #expect(error.kind == ending.kind)
    let suffix = attempts > 1 ? " after \(attempts) attempts" : ""
    #expect(
      error.localizedDescription == "The request \(Self.shownRequest) \(ending.verb)\(suffix).")
    let context = try #require(error.context)
    #expect(context.attempts == attempts)
    #expect(context.request?.url.path == "/v1/dogs")
    // The request as the transport was given it: the credential is there to read, never printed.
    #expect(context.request?.headers["Authorization"] == "Bearer s3cret-token")
    #expect(await stub.requests.count == attempts)
    Self.expectNoSecret(in: error)
  }

  /// A refused redirect (a `RefusedRedirectError`, not a `URLError`) carries its request and
  /// attempts as a `URLError` does: first answered, then after a lost connection and a retry.
  @Test(arguments: [1, 2])
  func aRefusedRedirectNamesItsRequestAndAttempts(attempts: Int) async throws {
    let stub = StubTransport(followsRedirects: true)
    let downgrade = StubResponse.status(
      302, headers: ["Location": "http://api.example.com/v1/dogs?api_key=s3cret-key"])
    await stub.on(
      .get, "/v1/dogs",
      .sequence(Array(repeating: StubResponse.connectionLost, count: attempts - 1) + [downgrade]))
    let client = Self.retryingClient(stub)

    let error = try await #require(throws: APIError.self) { try await client.send(Self.endpoint) }
    guard case .transport(let refused as RefusedRedirectError) = error else {
      Issue.record("expected a refused redirect, got \(error)")
      return
    }
    #expect(
      refused
        == RefusedRedirectError(
          from: "https://api.example.com/v1/dogs?api_key=<redacted>",
          location: "http://api.example.com/v1/dogs?api_key=<redacted>", reason: .downgradeToHTTP))
    #expect(refused.context?.request?.url.path == "/v1/dogs")
    #expect(error.context?.attempts == attempts)
    let suffix = attempts > 1 ? " after \(attempts) attempts" : ""
    #expect(
      error.localizedDescription
        == "The request stopped at a redirect for \(Self.shownRequest)\(suffix): refused to follow "
        + "a redirect from https://api.example.com/v1/dogs?api_key=<redacted> to "
        + "http://api.example.com/v1/dogs?api_key=<redacted>: it would downgrade HTTPS to plain HTTP"
    )
    Self.expectNoSecret(in: error)
  }

  /// A network failure keeps its `URLError`, with the request and attempts in its context.
  @Test func aNetworkFailureKeepsItsURLErrorWithTheContext() async throws {
    let stub = StubTransport { _ in .connectionLost }
    let client = Self.retryingClient(stub)
    let error = try await #require(throws: APIError.self) { try await client.send(Self.endpoint) }
    guard case .transport(let underlying) = error, let urlError = underlying as? URLError else {
      Issue.record("expected a URLError, got \(error)")
      return
    }
    #expect(urlError.code == .networkConnectionLost)
    let context = try #require(urlError.userInfo[APIError.Context.userInfoKey] as? APIError.Context)
    #expect(context.attempts == 3)
    #expect(context.request?.description == Self.shownRequest)
    #expect(error.context?.attempts == 3)
    Self.expectNoSecret(in: error)
  }

  static let response = HTTPResponse(status: 503, url: base)

  /// Where each case's context comes from.
  @Test(
    arguments: [
      (APIError.invalidRequest("GET x: bad."), nil),
      (.timedOut, 1),
      (.cancelled(APIError.Context(attempts: 4)), 4),
      (.unacceptableStatus(response), 1),
      (.decoding(URLError(.badURL), response), 1),
      (.transport(URLError(.notConnectedToInternet)), nil),
      (
        .transport(
          URLError(
            .notConnectedToInternet,
            userInfo: [APIError.Context.userInfoKey: APIError.Context(attempts: 2)])),
        2
      ),
      (.transport(LineTooLongError(unit: .line, limit: 10)), nil),
      (.transport(CocoaError(.fileNoSuchFile)), nil),
    ] as [(APIError, Int?)])
  func eachCaseHasItsContext(error: APIError, attempts: Int?) {
    #expect(error.context?.attempts == attempts)
  }

  /// A custom transport's `URLError` can carry its metrics in a context; the client adds the
  /// request.
  @Test func aTransportsOwnURLErrorKeepsItsMetrics() async throws {
    var metrics = TransferMetrics()
    metrics.responseBodyBytes = 42
    let known = metrics
    let stub = StubTransport { _ in
      .error(
        URLError(
          .networkConnectionLost,
          userInfo: [APIError.Context.userInfoKey: APIError.Context(metrics: known)]))
    }
    let client = APIClient(baseURL: Self.base, transport: stub)
    let error = try await #require(throws: APIError.self) { try await client.send(Self.endpoint) }
    #expect(error.metrics?.responseBodyBytes == 42)
    #expect(error.context?.request?.description == Self.shownRequest)
  }

  /// `APIError.timedOut` and `.cancelled` still work without their context: as values, and as
  /// patterns that match whatever context an error carries.
  @Test func theCasesWithoutTheirContextStillCompileAndMatch() {
    let context = APIError.Context(
      request: HTTPRequest(method: .get, url: Self.base), attempts: 2)
    func kind(of error: any Error) -> String {
      switch error {
      case APIError.timedOut: "timedOut"
      case APIError.cancelled: "cancelled"
      default: "other"
      }
    }
    #expect(kind(of: APIError.timedOut(context)) == "timedOut")
    #expect(kind(of: APIError.cancelled) == "cancelled")
    let value: APIError = .timedOut
    if case .timedOut = value {
    } else {
      Issue.record("`case .timedOut` did not match \(value)")
    }
    #expect(value.context?.request == nil)
    #expect(value.context?.attempts == 1)
    do {
      throw APIError.cancelled(context)
    } catch APIError.cancelled {
      #expect(
        APIError.cancelled(context).localizedDescription
          == "The request GET https://api.example.com/v1/ was cancelled after 2 attempts.")
    } catch {
      Issue.record("`catch APIError.cancelled` did not catch \(error)")
    }
  }

  /// A context prints its request with secrets hidden, in every form.
  @Test func aContextPrintsNoSecret() throws {
    let request = HTTPRequest(
      method: .get,
      url: url("https://api.example.com/v1/dogs?api_key=s3cret-key"),
      headers: ["Authorization": "Bearer s3cret-token", "Cookie": "sid=s3cret-token"])
    let context = APIError.Context(request: request, attempts: 3, retryPastDeadline: .seconds(4))
    #expect(
      context.description
        == "\(Self.shownRequest), 3 attempts, a retry after 4 s ruled out by the deadline")
    var dumped = ""
    dump(context, to: &dumped)
    for form in [context.description, String(reflecting: context), dumped] {
      for secret in Self.secrets {
        #expect(!form.contains(secret), "printed \(secret):\n\(form)")
      }
    }
    #expect(dumped.contains("<redacted>"))
  }
}
