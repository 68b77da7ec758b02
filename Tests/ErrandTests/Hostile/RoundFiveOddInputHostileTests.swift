import Errand
import ErrandStubs
import Foundation
import Testing

/// Round five of the hostile review: odd values from servers, files and callers. Each test
/// states the correct behaviour; a failure is a defect. Waits a server or a caller can make
/// enormous must neither crash (the standard library traps when a clock is asked to sleep until
/// an instant past `Int64.max` seconds) nor hang past the test: every probe that waits races the
/// wait against a cancellation of its own.
@Suite(.timeLimit(.minutes(2))) struct RoundFiveOddInputHostileTests {
  let base = URL(string: "https://api.example.com/v1")!

  /// Whether `error` is the error of a cancelled call.
  static func isCancelled(_ error: any Error) -> Bool {
    if case APIError.cancelled = error { return true }
    return error is CancellationError
  }

  /// Start `operation`, let it run until it waits (`settle` of real time after `ready`), cancel
  /// it, and return how it ended.
  static func cancelWhileWaiting<Value: Sendable>(
    ready: @Sendable () async throws -> Void = {},
    settle: Duration = .milliseconds(300),
    operation: @escaping @Sendable () async throws -> Value
  ) async throws -> Result<Value, any Error> {
    let task = Task { try await operation() }
    try await ready()
    try await Task.sleep(for: settle)
    task.cancel()
    return await task.result
  }

  /// How `operation` ended. One that never ends hangs the test until the suite's time limit
  /// reports it: no bound in real time here.
  static func outcome<Value: Sendable>(
    of operation: @escaping @Sendable () async throws -> Value
  ) async -> Result<Value, any Error> {
    do { return .success(try await operation()) } catch { return .failure(error) }
  }

  // MARK: - Retry-After (RFC 9110 §10.2.3: delay-seconds = 1*DIGIT)

  /// A sign is not part of delay-seconds: `+5` and `-0` are not `Retry-After` values, so the
  /// policy's backoff applies instead of a wait the server never validly asked for.
  @Test(arguments: ["+5", "-0", "+0", "+120"])
  func retryAfterWithASignIsNotDelaySeconds(value: String) {
    #expect(RetryPolicy().retryAfter(value, now: Date()) == nil)
  }

  /// A `RetryPolicy` whose caps the app lifted (no budget, a `maxRetryAfter` of
  /// `.seconds(Int64.max)`, the documented way to say "whatever the server asks") and a server
  /// that asks for 10^20 seconds: the retry waits (for ever, in effect) until the call is
  /// cancelled. Before the fix the real clock trapped in `Duration.components` ("Not enough bits
  /// to represent the passed value") as the wait began, killing the process.
  @Test func hugeRetryAfterOnTheRealClockWaitsUntilCancelled() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/d", .status(503, headers: ["Retry-After": "99999999999999999999"]))
    let policy = RetryPolicy(maxAttempts: 2, maxRetryAfter: .seconds(Int64.max), budget: nil)
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        timeout: nil, middleware: [RetryMiddleware(policy: policy)]))
    let outcome = try await Self.cancelWhileWaiting(
      ready: { _ = try await stub.nextRequest(timeout: .seconds(30)) },
      operation: { try await client.send(Endpoint<Data>(path: "d", decoding: .data)) })
    #expect(throws: (any Error).self) { try outcome.get() }
    if case .failure(let error) = outcome { #expect(Self.isCancelled(error)) }
    #expect(await stub.requests.count == 1)
  }

  /// The same with backoff instead of `Retry-After`: a base delay of `.seconds(Int64.max)`
  /// without jitter (which `backoff(beforeRetry:)` documents as saturating) waits until cancelled.
  @Test func hugeBackoffOnTheRealClockWaitsUntilCancelled() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/d", .error(URLError(.networkConnectionLost)))
    let policy = RetryPolicy(
      maxAttempts: 3, baseDelay: .seconds(Int64.max), maxDelay: .seconds(Int64.max),
      jitter: .none, budget: nil)
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        timeout: nil, middleware: [RetryMiddleware(policy: policy)]))
    let outcome = try await Self.cancelWhileWaiting(
      ready: { _ = try await stub.nextRequest(timeout: .seconds(30)) },
      operation: { try await client.send(Endpoint<Data>(path: "d", decoding: .data)) })
    if case .failure(let error) = outcome { #expect(Self.isCancelled(error)) }
    #expect(await stub.requests.count == 1)
  }

  // MARK: - Timeouts and call limits on a clock other than ContinuousClock

  /// A timeout of `.seconds(Int64.max)` means "never" (DeadlineTests checks it on the continuous
  /// clock); on a `SuspendingClock`, which `Configuration.clock` accepts, the timer's sleep
  /// trapped before the fix.
  @Test func hugeTimeoutOnASuspendingClockIsNever() async throws {
    let stub = StubTransport(delay: .milliseconds(200))
    await stub.on(.get, "/v1/d", .status(200, body: Data("ok".utf8)))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(timeout: .seconds(Int64.max), clock: SuspendingClock())
    )
    let body = try await client.send(Endpoint<Data>(path: "d", decoding: .data))
    #expect(body == Data("ok".utf8))
  }

  /// A rate of one call per `.seconds(Int64.max)` on a `SuspendingClock`: the second call waits
  /// until cancelled; its wake-up timer must not trap.
  @Test
  func hugeRateIntervalOnASuspendingClockWaitsUntilCancelled() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/d", .status(200))
    var configuration = APIClient.Configuration(timeout: nil, clock: SuspendingClock())
    configuration.callLimits = CallLimits(rate: RequestRate(1, per: .seconds(Int64.max)))
    let client = APIClient(baseURL: base, transport: stub, configuration: configuration)
    _ = try await client.send(Endpoint<Data>(path: "d", decoding: .data))
    let outcome = try await Self.cancelWhileWaiting {
      try await client.send(Endpoint<Data>(path: "d", decoding: .data))
    }
    if case .failure(let error) = outcome { #expect(Self.isCancelled(error)) }
    #expect(await stub.requests.count == 1)
  }

  // MARK: - The stub's own waits

  /// `.delayed(by: .seconds(Int64.max))` is how a test writes "a server that never answers":
  /// the call waits until cancelled, on the stub's default (continuous) clock.
  @Test func stubDelayedForEverWaitsUntilCancelled() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/d", StubResponse.status(200).delayed(by: .seconds(Int64.max)))
    let client = APIClient(
      baseURL: base, transport: stub, configuration: APIClient.Configuration(timeout: nil))
    let outcome = try await Self.cancelWhileWaiting(
      ready: { _ = try await stub.nextRequest(timeout: .seconds(30)) },
      operation: { try await client.send(Endpoint<Data>(path: "d", decoding: .data)) })
    if case .failure(let error) = outcome { #expect(Self.isCancelled(error)) }
  }

  /// `nextRequest(timeout: .seconds(Int64.max))` waits for the request, without trapping.
  @Test
  func nextRequestWithAHugeTimeoutWaitsForTheRequest() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/d", .status(200))
    let client = APIClient(baseURL: base, transport: stub)
    let next = Task { try await stub.nextRequest(timeout: .seconds(Int64.max)) }
    try await Task.sleep(for: .milliseconds(200))
    _ = try await client.send(Endpoint<Data>(path: "d", decoding: .data))
    #expect(try await next.value.url.path == "/v1/d")
  }

  /// A `TestClock` advanced by `.seconds(Int64.max)` again and again (a test that means "run
  /// every timer") keeps counting, saturated, instead of trapping on `Duration` overflow.
  @Test
  func testClockHugeAdvancesSaturate() async {
    let clock = TestClock()
    for _ in 0..<40 {
      await clock.advance(by: .seconds(Int64.max))
    }
    #expect(clock.now.offset > .seconds(Int64.max))
  }

  // MARK: - Lines: a line of exactly the maximum length

  /// `maximumLineLength` is "the longest line": a line of exactly that many bytes is read
  /// whether it ends with LF or with CRLF (the CR is the line ending, not the line).
  @Test(arguments: ["\n", "\r\n"])
  func lineOfTheMaximumLengthIsReadWhateverItsEnding(ending: String) async throws {
    let stub = StubTransport()
    let body = "abcd" + ending + "efgh" + ending
    await stub.on(.get, "/v1/l", .chunks([Data(body.utf8)]))
    let client = APIClient(baseURL: base, transport: stub)
    var stream = try await client.stream(Endpoint<Data>(path: "l", decoding: .data))
    stream.maximumLineLength = 4
    var lines: [String] = []
    for try await line in stream.lines {
      lines.append(line)
    }
    #expect(lines == ["abcd", "efgh"])
  }

  /// The same for JSON Lines with CRLF endings, which NDJSON allows.
  @Test func jsonLineOfTheMaximumLengthWithCRLFIsRead() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/l", .chunks([Data("[1,2]\r\n[3,4]\r\n".utf8)]))
    var configuration = APIClient.Configuration()
    configuration.maximumLineLength = 5
    let client = APIClient(baseURL: base, transport: stub, configuration: configuration)
    var values: [[Int]] = []
    for try await value in try await client.jsonLines(Endpoint<[Int]>(path: "l")) {
      values.append(value)
    }
    #expect(values == [[1, 2], [3, 4]])
  }

  // MARK: - Server-Sent Events written by the test kit

  /// `ServerSentEvent.wireFormat(of:)` promises that "reading them back gives the same events";
  /// at the least, an `id` or an `event` type holding a line break must not forge a field (a
  /// `data` line here) when the stub (`.events`) or a cassette replays the event.
  @Test(arguments: [
    ServerSentEvent(data: "x", id: "1\ndata: forged"),
    ServerSentEvent(data: "x", id: "1\rdata: forged"),
    ServerSentEvent(event: "tick\ndata: forged", data: "x"),
    ServerSentEvent(event: "tick\r\ndata: forged", data: "x"),
  ])
  func wireFormatCannotForgeAField(event: ServerSentEvent) {
    let read = ServerSentEvent.parse(ServerSentEvent.wireFormat(of: [event]).joined())
    #expect(read.count == 1)
    #expect(read.allSatisfy { !$0.data.contains("forged") })
  }

  /// The same through the stub: the events a client reads are the ones the test gave.
  @Test func stubEventsWithALineBreakInAnIDDoNotForgeData() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/sse", .events([ServerSentEvent(data: "x", id: "7\ndata: forged")]))
    let client = APIClient(baseURL: base, transport: stub)
    var read: [ServerSentEvent] = []
    for try await event in try await client.events(Endpoint<Data>(path: "sse", decoding: .data)) {
      read.append(event)
    }
    #expect(read.map(\.data) == ["x"])
  }

  // MARK: - Cassettes from disk

  /// A cassette whose status is not an HTTP status (negative, or past 999) is refused on load,
  /// as a HAR entry is (`HAR+Replay`: "not an HTTP status (100 to 999)"), instead of being
  /// replayed as a response with that status.
  @Test(arguments: [-1, 42, 1000, 99999])
  func cassetteStatusOutOfRangeIsRefused(status: Int) async throws {
    let file = FileManager.default.temporaryDirectory
      .appendingPathComponent("hr2-cassette-\(UUID().uuidString).json")
    defer { try? FileManager.default.removeItem(at: file) }
    let json = """
      {"version": 1, "recordedWith": "Errand", "exchanges": [
        {"request": {"method": "GET", "url": "https://api.example.com/v1/d", "headers": []},
         "response": {"status": \(status), "headers": [], "body": {"text": "hi"}}}]}
      """
    try Data(json.utf8).write(to: file)
    let cassette = CassetteTransport(url: file, mode: .none)
    let client = APIClient(
      baseURL: base, transport: cassette,
      configuration: APIClient.Configuration(acceptableStatusCodes: -10_000..<1_000_000))
    var replayedStatus: Int?
    do {
      replayedStatus = try await client.response(for: Endpoint<Data>(path: "d", decoding: .data))
        .response.status
    } catch {
      replayedStatus = nil
    }
    #expect(replayedStatus == nil, "a cassette replayed status \(status) as a response")
  }

  // MARK: - Link headers (RFC 8288)

  /// RFC 8288 §3.2: an `anchor` parameter makes the link about another resource, so a
  /// `rel="next"` anchored elsewhere is not this list's next page.
  @Test func nextLinkAnchoredToAnotherResourceIsNotFollowed() async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/dogs",
      .status(
        200, body: Data("[]".utf8),
        headers: [
          "Link":
            "<https://api.example.com/v1/cats?page=2>; rel=\"next\"; anchor=\"https://api.example.com/v1/cats\""
        ]))
    await stub.on(.get, "/v1/cats", .status(200, body: Data("[]".utf8)).allowingUnused())
    let client = APIClient(baseURL: base, transport: stub)
    var count = 0
    for try await _ in client.pages(Endpoint<[Int]>(path: "dogs")) {
      count += 1
      if count > 3 { break }
    }
    #expect(count == 1)
  }

  // MARK: - Limits set through their properties, past the clamps of their initializers

  /// `CallLimits(maximumCalls: 0)` becomes 1, but `maximumCalls` is a `var`: set to 0 (or
  /// `maximumCallsPerHost` to 0) after creation, every call waited for ever. A limit of 0 must
  /// mean what the initializer makes of it.
  @Test(arguments: [true, false])
  func zeroCallLimitSetThroughThePropertyStillLetsACallGo(perHost: Bool) async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/d", .status(200))
    var limits = CallLimits()
    if perHost { limits.maximumCallsPerHost = 0 } else { limits.maximumCalls = 0 }
    #expect((perHost ? limits.maximumCallsPerHost : limits.maximumCalls) == 1)
    var configuration = APIClient.Configuration(timeout: nil)
    configuration.callLimits = limits
    let client = APIClient(baseURL: base, transport: stub, configuration: configuration)
    let outcome = await Self.outcome {
      try await client.send(Endpoint<Data>(path: "d", decoding: .data))
    }
    #expect(throws: Never.self) { try outcome.get() }
    #expect(await stub.requests.count == 1)
  }

  /// `RequestRate(0, per:)` becomes 1 call per interval; `count` set to 0 or below afterwards
  /// divided the interval by zero (a trap) or by a negative number (a timer due in the past,
  /// re-armed for ever while the call never starts).
  @Test(arguments: [0, -1])
  func requestRateCountSetBelowOneStillLetsACallGo(count: Int) async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/d", .status(200))
    var rate = RequestRate(1, per: .seconds(1))
    rate.count = count
    #expect(rate.count == 1)
    var configuration = APIClient.Configuration(timeout: nil)
    configuration.callLimits = CallLimits(rate: rate)
    let client = APIClient(baseURL: base, transport: stub, configuration: configuration)
    let outcome = await Self.outcome {
      try await client.send(Endpoint<Data>(path: "d", decoding: .data))
    }
    #expect(throws: Never.self) { try outcome.get() }
    #expect(await stub.requests.count == 1)
  }

  /// `CookieJar.Limits(cookies: 0)` becomes 1; `cookies` (or `cookiesPerDomain`) set to
  /// `Int.min` afterwards overflowed `entries.count - limits.cookies` in the jar's eviction.
  @Test(arguments: [true, false])
  func cookieLimitSetToIntMinThroughThePropertyDoesNotTrap(perDomain: Bool) {
    var limits = CookieJar.Limits()
    if perDomain { limits.cookiesPerDomain = .min } else { limits.cookies = .min }
    let jar = CookieJar(limits: limits)
    _ = jar.store(["a=1"], from: URL(string: "https://api.example.com/")!)
    #expect(jar.cookies(for: URL(string: "https://api.example.com/")!).count == 1)
  }
  // MARK: - Size limits at their edges

  /// A body exactly as long as `maximumResponseSize` is accepted (the limit is the longest body
  /// to accept), an empty one under a limit of 0 too.
  @Test(arguments: [(0, 204), (10, 200)])
  func bodyOfExactlyTheLimitIsAccepted(limit: Int, status: Int) async throws {
    let stub = StubTransport()
    let body = Data(repeating: UInt8(ascii: "a"), count: limit)
    await stub.on(.get, "/v1/d", .chunks(limit == 0 ? [] : [body], status: status))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(maximumResponseSize: limit))
    #expect(try await client.send(Endpoint<Data>(path: "d", decoding: .data)) == body)
  }
}
