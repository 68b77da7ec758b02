import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

/// Probes of `cancelAll()` and `cancelAll(tagged:)` as an attacker (or an unlucky app at
/// sign-out) would try them: cancel a call before it is sent, while it waits for a retry or a
/// token, while its error is read; make the count lie, a tag reach untagged calls, a cancel reach
/// a call started after it or another client's calls, and a reader go on after the cancel.
@Suite(.timeLimit(.minutes(3))) struct CallControlHostileTests {
  static func client(
    _ stub: StubTransport, clock: any Clock<Duration> = ContinuousClock(),
    middleware: [any Middleware] = []
  ) -> APIClient {
    APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(timeout: nil, middleware: middleware, clock: clock))
  }

  /// A call cancelled while its request is being built (here by its own body's encoding, as a
  /// sign-out on another thread could) is never sent: no middleware sees it, the transport gets
  /// nothing, and it throws `.cancelled`. The stub has no deadline to race, so it records
  /// whatever reaches it, as a transport of the app's own that does not check for cancellation
  /// would send it.
  @Test(arguments: CallKind.allCases)
  func aCallCancelledWhileItsRequestIsBuiltIsNeverSent(_ kind: CallKind) async throws {
    let stub = StubTransport()
    await stub.on(.any, .events([ServerSentEvent(data: "1")]))
    let late = LateClient()
    let passes = CountsPasses()
    let client = Self.client(stub, middleware: [passes])
    late.client = client
    let endpoint = Endpoint<Data>(
      method: .post, path: "orders", body: .json(RunsWhenEncoded { late.cancelAll() }),
      decoding: .data)
    let error = await #expect(throws: APIError.self) { try await kind.make(endpoint, on: client) }
    #expect(error?.kind == .cancelled)
    #expect(late.cancelled == [kind.entries])
    #expect(passes.passes == 0)
    #expect(await stub.requests.isEmpty)
    #expect(client.inFlight.isEmpty)
  }

  /// A call made with a completion handler is listed when `send` returns: a `cancelAll()` made
  /// right after it ends it. (The stub never answers: an answer could otherwise beat the
  /// `cancelAll()`, as it did under ThreadSanitizer; whether the request reached the stub first
  /// depends on the threads, and is not checked.)
  @Test func aCallbackCallIsEndedByACancelAllRightAfterIt() async throws {
    let stub = StubTransport()
    await stub.on(.any, .hang)
    let client = Self.client(stub)
    let counted = Locked(-1)
    let result = await withCheckedContinuation { continuation in
      client.send(Endpoint<Data>(path: "dogs", decoding: .data), queue: .global()) {
        continuation.resume(returning: $0)
      }
      counted.withLock { $0 = client.cancelAll() }
    }
    #expect(counted.withLock { $0 } == 1)
    guard case .failure(let error) = result else {
      Issue.record("the call went on after cancelAll: \(result)")
      return
    }
    #expect(error.kind == .cancelled)
    #expect(client.inFlight.isEmpty)
  }

  /// A keyed `POST` waiting for its retry (a `503`, then a 1 s backoff on the test clock) ends
  /// when its client cancels it, and no other attempt is sent when the backoff would have ended.
  @Test func cancelAllDuringARetryBackoffSendsNoOtherAttempt() async throws {
    let clock = TestClock()
    let stub = StubTransport()
    await stub.on(.any, .status(503))
    let retry = RetryMiddleware(
      policy: RetryPolicy(maxAttempts: 3, baseDelay: .seconds(1), jitter: .none), clock: clock)
    let client = Self.client(stub, clock: clock, middleware: [retry])
    let pay = Endpoint<Data>(
      method: .post, path: "payments", body: .data(Data("{}".utf8)), decoding: .data
    ).withIdempotencyKey()
    let call = Task { _ = try await client.send(pay) }
    try #require(await clock.waitForSleeper(dueIn: .seconds(1)))
    #expect(client.cancelAll() == 1)
    await expectCancelled(call)
    await clock.advance(by: .seconds(60))
    let sent = await stub.requests
    #expect(sent.count == 1)
    #expect(sent.first?.headers["Idempotency-Key"] != nil)
    #expect(client.inFlight.isEmpty)
  }

  /// A call waiting for a token refresh (its first attempt got a `401`) ends when its client
  /// cancels it, at once, whatever the refresh does; the refresh ends on its own and the call
  /// is not sent again with the new token.
  @Test func cancelAllDuringATokenRefreshSendsNoReplay() async throws {
    let stub = StubTransport { request in
      request.headers["Authorization"] == "Bearer new" ? .status(200) : .status(401)
    }
    let provider = GatedTokens(current: "old")
    let auth = BearerAuthenticationMiddleware(provider: provider)
    let client = Self.client(stub, middleware: [auth])
    let endpoint = Endpoint<Data>(path: "me", requiresAuthentication: true, decoding: .data)
    let call = Task { _ = try await client.send(endpoint) }
    defer { call.cancel() }
    #expect(await eventually { provider.refreshing })
    #expect(client.cancelAll() == 1)
    let ended = await returnsInTime(seconds: 60) {
      (try? await call.value) == nil && client.inFlight.isEmpty
    }
    #expect(ended, "the call waited for the refresh after its client cancelled it")
    await provider.gate.open()
    // Another call, once the refresh is let go, gets the new token (after the old one, when it
    // reads its token before the refresh has ended): the cancelled call is not among them.
    let again = Endpoint<Data>(path: "me/again", requiresAuthentication: true, decoding: .data)
    _ = try await client.send(again)
    let sent = await stub.requests
    let cancelled = sent.filter { $0.url.path.hasSuffix("/me") }.map { $0.headers["Authorization"] }
    #expect(cancelled == ["Bearer old"])
    #expect(sent.last?.headers["Authorization"] == "Bearer new")
  }

  /// A call waiting for its first token (a provider that reads a keychain, or waits for the
  /// user to sign in, and does not look at cancellation) ends when its client cancels it, at
  /// once, and is never sent, whenever the token comes.
  @Test func cancelAllWhileTheTokenIsLoadedEndsTheCallAtOnce() async throws {
    let stub = StubTransport()
    await stub.on(.any, .status(200))
    let provider = GatedTokens(current: "t", gatesCurrent: true)
    let auth = BearerAuthenticationMiddleware(provider: provider)
    let client = Self.client(stub, middleware: [auth])
    let endpoint = Endpoint<Data>(path: "me", requiresAuthentication: true, decoding: .data)
    let call = Task { _ = try await client.send(endpoint) }
    defer { call.cancel() }
    #expect(await eventually { provider.loading })
    #expect(client.cancelAll() == 1)
    let ended = await returnsInTime(seconds: 60) {
      do {
        try await call.value
        return false
      } catch {
        return (error as? APIError)?.kind == .cancelled
      }
    }
    #expect(ended, "the call waited for its token after its client cancelled it")
    await provider.gate.open()
    _ = await call.result
    #expect(await stub.requests.isEmpty)
  }

  /// A buffered call cancelled while its unacceptable answer is read (its failure body being
  /// decoded) throws `.cancelled`, as `cancelAll()` counted it, not the status.
  @Test func aCallCancelledWhileItsErrorIsReadThrowsCancelled() async throws {
    let stub = StubTransport()
    await stub.on(.any, .status(500, body: Data(#"{"title":"down"}"#.utf8)))
    let late = LateClient()
    let client = Self.client(stub)
    late.client = client
    var endpoint = Endpoint<Data>(path: "dogs", decoding: .data)
    endpoint.failureDecoding = FailureDecoding { _, _ in
      late.cancelAll()
      return nil
    }
    let error = await #expect(throws: APIError.self) { try await client.send(endpoint) }
    #expect(late.cancelled == [1])
    #expect(error?.kind == .cancelled)
    #expect(client.inFlight.isEmpty)
  }

  /// A streamed call cancelled while it reads the start of an unacceptable answer's body for
  /// its error (the body trickles in on the test clock) throws `.cancelled`, as counted.
  @Test func aStreamCancelledWhileItsErrorBodyIsReadThrowsCancelled() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(
      .any,
      .chunks([Data("partial ".utf8), Data("rest".utf8)], interval: .seconds(30), status: 500))
    let client = Self.client(stub, clock: clock)
    let call = Task { _ = try await client.stream(Endpoint<Data>(path: "feed", decoding: .data)) }
    // The error body is read for at most 10 s: the call is in that read.
    try #require(await clock.waitForSleeper(dueIn: APIClient.errorBodyTime))
    #expect(client.cancelAll() == 1)
    await expectCancelled(call)
    #expect(client.inFlight.isEmpty)
  }

  /// A reader of any format gets nothing more once its client cancelled the call: not the
  /// lines, values or events already split off a chunk it read before (not even on a read
  /// after the error), nor a body that had arrived whole. At sign-out the old account's data
  /// stops at once.
  @Test(arguments: BufferedFormat.allCases)
  func aReaderGetsNothingMoreAfterCancelAll(_ format: BufferedFormat) async throws {
    let stub = StubTransport()
    await stub.on(.any, format.answer)
    let client = Self.client(stub)
    let (first, counted, after) = try await format.readOneThenCancel(on: client)
    #expect(first == format.first)
    #expect(counted == format.entries)
    guard case .failure(let error) = after.first else {
      Issue.record("read \(after) after cancelAll")
      return
    }
    #expect((error as? APIError)?.kind == .cancelled)
    // Nor does a read after the error get an item.
    #expect(after.compactMap { try? $0.get() }.isEmpty, "\(after)")
    #expect(client.inFlight.isEmpty)
  }

  /// Two clients over one transport: `cancelAll()` on one ends its own calls, and the other's
  /// call goes on to its answer.
  @Test func cancelAllOnOneClientLeavesAnotherClientsCalls() async throws {
    let stub = StubTransport()
    let gate = AsyncGate()
    await stub.on(.get, "/v1/a", .hang)
    await stub.on(
      .get, "/v1/b",
      .handler { _, _ in
        await gate.wait()
        return .status(200, body: Data("b".utf8))
      })
    let first = Self.client(stub)
    let second = Self.client(stub)
    let a = Task { _ = try await first.send(Endpoint<Data>(path: "a", decoding: .data)) }
    let b = Task { try await second.send(Endpoint<Data>(path: "b", decoding: .data)) }
    defer {
      a.cancel()
      b.cancel()
    }
    #expect(await eventually { first.inFlight.count == 1 && second.inFlight.count == 1 })
    #expect(first.cancelAll() == 1)
    await expectCancelled(a)
    #expect(second.inFlight.count == 1)
    await gate.open()
    #expect(try await b.cancellableValue == Data("b".utf8))
    #expect(second.inFlight.isEmpty)
  }

  /// For every kind of call: `cancelAll(tagged:)` counts and ends the tagged call only, a second
  /// one counts nothing, a call started after it runs to its end, and `cancelAll()` then counts
  /// exactly the untagged call and ends it.
  @Test(arguments: CallKind.allCases)
  func aTagEndsExactlyTheCallsRunningWithIt(_ kind: CallKind) async throws {
    let stub = StubTransport()
    await stub.on(.path("/v1/tagged"), kind.hangs)
    await stub.on(.path("/v1/untagged"), kind.hangs)
    await stub.on(.path("/v1/later"), .events([ServerSentEvent(data: "1")]))
    let client = Self.client(stub)
    let tagged = Task {
      try await kind.make(kind.endpoint("tagged").tagged("account-1"), on: client)
    }
    let untagged = Task { try await kind.make(kind.endpoint("untagged"), on: client) }
    defer {
      tagged.cancel()
      untagged.cancel()
    }
    #expect(await eventually { client.inFlight.count == 2 * kind.entries })
    #expect(client.cancelAll(tagged: "account-1") == kind.entries)
    #expect(client.cancelAll(tagged: "account-1") == 0)
    await expectCancelled(tagged)
    #expect(client.inFlight.count == kind.entries)
    #expect(client.inFlight.allSatisfy { $0.tags.isEmpty })
    try await kind.make(kind.endpoint("later").tagged("account-1"), on: client)
    #expect(client.cancelAll() == kind.entries)
    await expectCancelled(untagged)
    #expect(client.inFlight.isEmpty)
  }
}

/// A token provider whose refresh (or, with `gatesCurrent`, whose current token) waits for a
/// gate and does not look at cancellation, as one that waits for a keychain or a sign-in does.
struct GatedTokens: TokenProvider {
  let current: String
  var gatesCurrent = false
  let gate = AsyncGate()
  private let state = Locked((loading: false, refreshing: false))

  /// Whether `currentToken()` has been called.
  var loading: Bool { state.withLock { $0.loading } }
  /// Whether `refreshToken()` has been called.
  var refreshing: Bool { state.withLock { $0.refreshing } }

  func currentToken() async throws -> String? {
    state.withLock { $0.loading = true }
    if gatesCurrent { await gate.wait() }
    return current
  }

  func refreshToken() async throws -> String {
    state.withLock { $0.refreshing = true }
    await gate.wait()
    return "new"
  }
}

/// A format a reader reads from a streamed call, from a body whose first chunk holds three
/// items (or, for `bytes`, the whole body).
enum BufferedFormat: String, CaseIterable, CustomTestStringConvertible, Sendable {
  case lines, jsonLines, events, reconnectingEvents, bytes
  var testDescription: String { rawValue }

  var entries: Int { self == .reconnectingEvents ? 2 : 1 }

  var answer: StubResponse {
    switch self {
    case .lines:
      .stalledAfterHeaders(body: Data("a\nb\nc\n".utf8))
    case .jsonLines:
      .stalledAfterHeaders(body: Data(#"{"name":"a"}\#n{"name":"b"}\#n"#.utf8))
    case .events, .reconnectingEvents:
      .stalledAfterHeaders(
        body: Data("data: a\n\ndata: b\n\ndata: c\n\n".utf8),
        headers: ["Content-Type": "text/event-stream"])
    case .bytes:
      .status(200, body: Data("abc".utf8))
    }
  }

  /// What the reader reads before the cancel.
  var first: String? { self == .bytes ? nil : "a" }

  /// Read `iterator`'s first item, cancel every call of `client`, then try to read twice more;
  /// each item as `text` says.
  static func firstThenCancelled<Iterator: AsyncIteratorProtocol>(
    _ iterator: Iterator, on client: APIClient, _ text: (Iterator.Element) -> String?
  ) async throws -> (first: String?, counted: Int, after: [Result<String?, any Error>]) {
    var iterator = iterator
    let first = try await iterator.next().flatMap(text)
    let counted = client.cancelAll()
    let second = await outcome { try await iterator.next().flatMap(text) }
    let third = await outcome { try await iterator.next().flatMap(text) }
    return (first, counted, [second, third])
  }

  /// Read the first item, cancel every call of `client`, then try to read twice more.
  func readOneThenCancel(on client: APIClient) async throws
    -> (first: String?, counted: Int, after: [Result<String?, any Error>])
  {
    let endpoint = Endpoint<Data>(path: "feed", decoding: .data)
    switch self {
    case .lines:
      return try await Self.firstThenCancelled(
        client.stream(endpoint).lines.makeAsyncIterator(), on: client
      ) { $0 }
    case .jsonLines:
      return try await Self.firstThenCancelled(
        client.jsonLines(Endpoint<Dog>(path: "feed")).makeAsyncIterator(), on: client
      ) { $0.name }
    case .events:
      return try await Self.firstThenCancelled(
        client.events(endpoint).makeAsyncIterator(), on: client
      ) { $0.data }
    case .reconnectingEvents:
      return try await Self.firstThenCancelled(
        client.events(endpoint, reconnect: .default).makeAsyncIterator(), on: client
      ) { $0.data }
    case .bytes:
      let stream = try await client.stream(endpoint)
      let counted = client.cancelAll()
      let rest = await outcome {
        let bytes = try await stream.collect()
        return String(decoding: bytes, as: UTF8.self) as String?
      }
      return (nil, counted, [rest])
    }
  }
}

/// What `body` returned or threw.
private func outcome<Value>(_ body: () async throws -> Value) async -> Result<Value, any Error> {
  do {
    return .success(try await body())
  } catch {
    return .failure(error)
  }
}
