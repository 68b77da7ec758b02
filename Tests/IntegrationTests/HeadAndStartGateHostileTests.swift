import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Hostile probes of three changes: the pipeline's last cancellation check before the transport,
/// `HTTPResponse.init(_:body:)` (string fields, `Set-Cookie` matched by ASCII case and split),
/// and `SessionDelegate`'s end building a full response only when no head arrived first.
@Suite(.timeLimit(.minutes(3))) struct HeadAndStartGateHostileTests {
  // MARK: - Helpers

  /// A transport that records each request and answers from a script (the last answer repeats).
  final class ScriptedTransport: Transport {
    private let state: Locked<(answers: [HTTPResponse], received: [HTTPRequest])>

    init(_ answers: [HTTPResponse]) { state = Locked((answers, [])) }

    var requests: [HTTPRequest] { state.withLock { $0.received } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
      state.withLock { state in
        state.received.append(request)
        return state.answers.count > 1 ? state.answers.removeFirst() : state.answers[0]
      }
    }
  }

  /// A middleware of the app's that, on the attempts `holdOn` lists (counting from 1), says it
  /// entered, waits for `latch` ignoring cancellation, then calls `next`; it reports whether
  /// `next` returned or threw.
  struct HoldingMiddleware: Middleware {
    let entered: AsyncStream<Int>.Continuation
    let nextEnded: AsyncStream<Bool>.Continuation
    let latch: AsyncGate
    let holdOn: Set<Int>
    private let attempts = Locked(0)

    init(
      entered: AsyncStream<Int>.Continuation, nextEnded: AsyncStream<Bool>.Continuation,
      latch: AsyncGate, holdOn: Set<Int>
    ) {
      self.entered = entered
      self.nextEnded = nextEnded
      self.latch = latch
      self.holdOn = holdOn
    }

    func intercept(
      _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
      let attempt = attempts.withLock {
        $0 += 1
        return $0
      }
      if holdOn.contains(attempt) {
        entered.yield(attempt)
        await latch.wait()
      }
      do {
        let response = try await next(request)
        nextEnded.yield(true)
        return response
      } catch {
        nextEnded.yield(false)
        throw error
      }
    }
  }

  static let base = URL(string: "https://api.example.com/v1")!

  /// Every transport, buffered and streamed, with each of `values`.
  static func combos<Value: Sendable>(_ values: [Value]) -> [(TransportKind, Bool, Value)] {
    TransportKind.allCases.flatMap { kind in
      [false, true].flatMap { streams in values.map { (kind, streams, $0) } }
    }
  }

  // MARK: - 1. The start gate

  /// A retry (RetryMiddleware outside the app's middleware) whose second attempt is cancelled by
  /// its caller while the app's middleware holds it is not sent: the transport sees one request.
  @Test(arguments: [false, true])
  func aRetryCancelledInTheAppsMiddlewareIsNotSent(streams: Bool) async throws {
    let transport = ScriptedTransport([
      HTTPResponse(status: 503, body: Data("busy".utf8)),
      HTTPResponse(status: 200, body: Data("secret".utf8)),
    ])
    let latch = AsyncGate()
    let (entered, enteredContinuation) = AsyncStream.makeStream(of: Int.self)
    let (nextEnded, nextEndedContinuation) = AsyncStream.makeStream(of: Bool.self)
    let holding = HoldingMiddleware(
      entered: enteredContinuation, nextEnded: nextEndedContinuation, latch: latch, holdOn: [2])
    let retry = RetryMiddleware(
      policy: RetryPolicy(maxAttempts: 3, baseDelay: .zero, jitter: .none), clock: .immediate)
    let client = APIClient(
      baseURL: Self.base, transport: transport,
      configuration: .init(timeout: nil, middleware: [retry, holding]))
    let endpoint = Endpoint<Data>(path: "dogs", decoding: .data)
    let call = startCall(client, endpoint, streams: streams)
    var enteredEvents = entered.makeAsyncIterator()
    #expect(await enteredEvents.next() == 2)
    call.cancel()
    await latch.open()
    var ends = nextEnded.makeAsyncIterator()
    _ = await ends.next()  // the first attempt's
    let secondSent = await ends.next()
    #expect(secondSent == false, "the cancelled retry's next() returned an answer")
    let error = await #expect(throws: APIError.self) { try await call.value }
    #expect(error?.kind == .cancelled)
    #expect(transport.requests.count == 1, "the transport got the cancelled retry")
  }

  /// A call whose deadline passes while the app's middleware holds it (on a test clock) ends as
  /// a timeout, not a cancellation, and its middleware's late `next` does not reach the
  /// transport: the answer would be thrown away.
  @Test func aCallPastItsDeadlineInTheAppsMiddlewareTimesOutAndIsNotSent() async throws {
    let transport = ScriptedTransport([HTTPResponse(status: 200, body: Data("ok".utf8))])
    let clock = TestClock()
    let latch = AsyncGate()
    let (entered, enteredContinuation) = AsyncStream.makeStream(of: Int.self)
    let (_, nextEndedContinuation) = AsyncStream.makeStream(of: Bool.self)
    let holding = HoldingMiddleware(
      entered: enteredContinuation, nextEnded: nextEndedContinuation, latch: latch, holdOn: [1])
    let client = APIClient(
      baseURL: Self.base, transport: transport,
      configuration: .init(timeout: .seconds(10), middleware: [holding], clock: clock))
    let call = Task { try await client.send(Endpoint<Data>(path: "dogs", decoding: .data)) }
    var enteredEvents = entered.makeAsyncIterator()
    _ = await enteredEvents.next()
    await clock.advance(by: .seconds(11))
    await latch.open()
    let error = await #expect(throws: APIError.self) { try await call.value }
    #expect(error?.kind == .timedOut, "got \(String(describing: error))")
    #expect(transport.requests.isEmpty, "the transport got a call past its deadline")
  }

  /// `cancelAll()` ends only the calls in flight: a call made after it, through the same app
  /// middleware, is sent and answered.
  @Test func aCallAfterCancelAllIsStillSent() async throws {
    let transport = ScriptedTransport([HTTPResponse(status: 200, body: Data("ok".utf8))])
    let latch = AsyncGate()
    await latch.open()
    let (_, enteredContinuation) = AsyncStream.makeStream(of: Int.self)
    let (_, nextEndedContinuation) = AsyncStream.makeStream(of: Bool.self)
    let holding = HoldingMiddleware(
      entered: enteredContinuation, nextEnded: nextEndedContinuation, latch: latch, holdOn: [])
    let client = APIClient(
      baseURL: Self.base, transport: transport,
      configuration: .init(timeout: nil, middleware: [holding]))
    client.cancelAll()
    let body = try await client.send(Endpoint<Data>(path: "dogs", decoding: .data))
    #expect(body == Data("ok".utf8))
    #expect(transport.requests.count == 1)
  }

  /// Two identical GETs shared in flight, each through the app's middleware: the first caller,
  /// cancelled in its middleware, does not take the second one's answer down with it.
  @Test func aSharedCallSurvivesAnotherCallersCancellationInTheMiddleware() async throws {
    let transport = ScriptedTransport([HTTPResponse(status: 200, body: Data("ok".utf8))])
    let latch = AsyncGate()
    let (entered, enteredContinuation) = AsyncStream.makeStream(of: Int.self)
    let (_, nextEndedContinuation) = AsyncStream.makeStream(of: Bool.self)
    let holding = HoldingMiddleware(
      entered: enteredContinuation, nextEnded: nextEndedContinuation, latch: latch, holdOn: [1])
    var configuration = APIClient.Configuration(timeout: nil, middleware: [holding])
    configuration.sharesInFlightRequests = true
    let client = APIClient(baseURL: Self.base, transport: transport, configuration: configuration)
    let endpoint = Endpoint<Data>(path: "dogs", decoding: .data)
    let first = Task { try await client.send(endpoint) }
    var enteredEvents = entered.makeAsyncIterator()
    _ = await enteredEvents.next()
    first.cancel()
    let second = try await client.send(endpoint)
    await latch.open()
    #expect(second == Data("ok".utf8))
    let error = await #expect(throws: APIError.self) { try await first.value }
    #expect(error?.kind == .cancelled)
    #expect(transport.requests.count == 1)
  }

  /// Over a real socket: a call cancelled by `cancelAll()` inside the app's middleware, which
  /// then goes on to `next`, never reaches the server.
  @Test(arguments: TransportKind.allCases, [false, true])
  func aCancelledCallNeverReachesTheServer(kind: TransportKind, streams: Bool) async throws {
    let server = try LoopbackServer { _ in
      ScriptedResponse(status: 200, body: Data("secret".utf8))
    }
    defer { server.stop() }
    let late = LateClient()
    let latch = AsyncGate()
    let (entered, enteredContinuation) = AsyncStream.makeStream(of: Int.self)
    let (nextEnded, nextEndedContinuation) = AsyncStream.makeStream(of: Bool.self)
    let holding = HoldingMiddleware(
      entered: enteredContinuation, nextEnded: nextEndedContinuation, latch: latch, holdOn: [1])
    let client = kind.client(
      server.baseURL, configuration: .init(timeout: nil, middleware: [holding]))
    late.client = client
    let endpoint = Endpoint<Data>(path: "dogs", decoding: .data)
    let call = startCall(client, endpoint, streams: streams)
    var enteredEvents = entered.makeAsyncIterator()
    _ = await enteredEvents.next()
    late.cancelAll()
    await latch.open()
    var ends = nextEnded.makeAsyncIterator()
    #expect(await ends.next() == false)
    let error = await #expect(throws: APIError.self) { try await call.value }
    #expect(error?.kind == .cancelled)
    // A request that reached the server would be recorded before the client's next one: ask
    // once more, uncancelled, and look at what the server got.
    _ = try? await kind.client(server.baseURL).send(Endpoint<Data>(path: "probe", decoding: .data))
    #expect(server.requests.map(\.path) == ["/probe"])
  }

  // MARK: - 2 and 3. Heads and their fields over a socket

  /// What a call returns: its head (and body, or the error the body ended with).
  struct Answer {
    var head: HTTPResponse
    var body: Result<Data, any Error>
  }

  /// Make a call, buffered or streamed, returning the head whatever the status.
  static func call(
    _ client: APIClient, _ endpoint: Endpoint<Data>, streams: Bool
  ) async throws -> Answer {
    if streams {
      let stream = try await client.stream(endpoint)
      do {
        return Answer(head: stream.response, body: .success(try await stream.collect()))
      } catch {
        return Answer(head: stream.response, body: .failure(error))
      }
    }
    let response = try await client.response(for: endpoint)
    return Answer(head: response.response, body: .success(response.value))
  }

  static let cookies = [
    "a=1; Path=/; Expires=Wed, 21 Oct 2026 07:28:00 GMT",
    "b=2; HttpOnly",
    "c=3; Expires=Thu, 01 Jan 2037 00:00:00 GMT; Secure",
    "d=; Max-Age=0",
    "e=5",
  ]

  /// Many `Set-Cookie` lines, one name spelling: each cookie comes back as a field of its own, in
  /// the order sent (RFC 9110 §5.3: the order of same-named lines is significant).
  @Test(arguments: TransportKind.allCases, [false, true])
  func everySetCookieLineComesBackOnceInOrder(kind: TransportKind, streams: Bool) async throws {
    let server = try LoopbackServer { _ in
      ScriptedResponse(
        status: 200,
        headers: [("Content-Type", "text/plain")] + Self.cookies.map { ("Set-Cookie", $0) },
        body: Data("ok".utf8))
    }
    defer { server.stop() }
    let answer = try await Self.call(
      kind.client(server.baseURL), Endpoint<Data>(path: "x", decoding: .data), streams: streams)
    #expect(answer.head.headers.values(for: "set-cookie") == Self.cookies)
    #expect(answer.head.headers["Content-Type"] == "text/plain")
    #expect(try answer.body.get() == Data("ok".utf8))
  }

  /// `Set-Cookie` lines whose names the server spells in different cases: every cookie comes
  /// back, once, as a field of its own.
  @Test(arguments: TransportKind.allCases, [false, true])
  func setCookieLinesInMixedCaseAllComeBack(kind: TransportKind, streams: Bool) async throws {
    let names = ["Set-Cookie", "set-cookie", "SET-COOKIE", "sEt-CoOkIe", "Set-cookie"]
    let server = try LoopbackServer { _ in
      ScriptedResponse(
        status: 200, headers: Array(zip(names, Self.cookies)), body: Data("ok".utf8))
    }
    defer { server.stop() }
    let answer = try await Self.call(
      kind.client(server.baseURL), Endpoint<Data>(path: "x", decoding: .data), streams: streams)
    // Linux's URLSession keeps one of the fields whose names differ only in case (Cookies.md);
    // Apple's is not known to, hence intermittent.
    withKnownIssue("URLSession keeps one of the names that differ in case", isIntermittent: true) {
      #expect(answer.head.headers.values(for: "Set-Cookie").sorted() == Self.cookies.sorted())
    } when: {
      kind == .urlSession
    }
  }

  /// A cookie with an extension attribute holding `, name=` (RFC 6265 §4.1.1: an extension-av
  /// is any CHAR but CTLs and `;`) is one cookie: no phantom cookie `y=z` appears.
  @Test(arguments: TransportKind.allCases)
  func aCommaInAnExtensionAttributeMakesNoPhantomCookie(kind: TransportKind) async throws {
    let cookie = "a=1; Path=/; Ext=x, y=z"
    let server = try LoopbackServer { _ in
      ScriptedResponse(status: 200, headers: [("Set-Cookie", cookie)], body: Data("ok".utf8))
    }
    defer { server.stop() }
    let answer = try await Self.call(
      kind.client(server.baseURL), Endpoint<Data>(path: "x", decoding: .data), streams: false)
    withKnownIssue("URLSession joins Set-Cookie fields with commas, read back at `, name=`") {
      #expect(answer.head.headers.values(for: "Set-Cookie") == [cookie])
    } when: {
      kind == .urlSession
    }
  }

  /// Header names in odd cases, and a UTF-8 value, are read whatever the case they are asked in,
  /// with no field lost.
  @Test(arguments: TransportKind.allCases, [false, true])
  func headerNamesAnyCaseAndUTF8Values(kind: TransportKind, streams: Bool) async throws {
    let server = try LoopbackServer { _ in
      ScriptedResponse(
        status: 200,
        headers: [
          ("x-MiXeD-cAsE", "v1"), ("CONTENT-TYPE", "text/plain"), ("X-Name", "café ☕"),
          ("x-empty", ""),
        ],
        body: Data("ok".utf8))
    }
    defer { server.stop() }
    let answer = try await Self.call(
      kind.client(server.baseURL), Endpoint<Data>(path: "x", decoding: .data), streams: streams)
    let headers = answer.head.headers
    #expect(headers["X-Mixed-Case"] == "v1")
    #expect(headers["content-type"] == "text/plain")
    if kind == .urlSession { #expect(headers["x-name"] == "café ☕") }
    #expect(headers["X-Name"] != nil)
    #expect(try answer.body.get() == Data("ok".utf8))
  }

  /// Answers without a body (a HEAD, a `204`, a `304`) keep their head's fields.
  @Test(arguments: Self.combos(["HEAD", "204", "304"]))
  func bodilessAnswersKeepTheirFields(kind: TransportKind, streams: Bool, shape: String)
    async throws
  {
    let status = shape == "HEAD" ? 200 : Int(shape)!
    let server = try LoopbackServer { _ in
      var answer = ScriptedResponse(
        status: status,
        headers: [
          ("ETag", "\"v1\""), ("X-Trace", "t-1"), ("Set-Cookie", "s=1"),
          ("Set-Cookie", "u=2; Expires=Wed, 21 Oct 2026 07:28:00 GMT"),
        ])
      if shape == "HEAD" {
        answer.raw = Data(
          ("HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nX-Trace: t-1\r\nSet-Cookie: s=1\r\n"
            + "Set-Cookie: u=2; Expires=Wed, 21 Oct 2026 07:28:00 GMT\r\n"
            + "Content-Length: 1234\r\nConnection: close\r\n\r\n").utf8)
      }
      return answer
    }
    defer { server.stop() }
    let endpoint = Endpoint<Data>(
      method: shape == "HEAD" ? .head : .get, path: "x", decoding: .data,
      acceptableStatusCodes: 200..<400)
    let answer = try await Self.call(kind.client(server.baseURL), endpoint, streams: streams)
    #expect(answer.head.status == status)
    #expect(answer.head.headers["etag"] == "\"v1\"")
    #expect(answer.head.headers["x-trace"] == "t-1")
    #expect(
      answer.head.headers.values(for: "Set-Cookie")
        == ["s=1", "u=2; Expires=Wed, 21 Oct 2026 07:28:00 GMT"])
    #expect(try answer.body.get().isEmpty)
  }

  /// A body that stops short of its length after the head: a buffered call fails (it does not
  /// succeed with part of the body), a streamed one has its head's fields and a body that fails.
  @Test(arguments: TransportKind.allCases, [false, true])
  func aBodyCutShortFailsWithTheHeadIntact(kind: TransportKind, streams: Bool) async throws {
    let server = try LoopbackServer { _ in
      ScriptedResponse(
        status: 200, headers: [("X-Trace", "t-2"), ("Set-Cookie", "k=1")],
        body: Data(repeating: 0x61, count: 10_000), ending: .closeAfterBodyBytes(100))
    }
    defer { server.stop() }
    let client = kind.client(server.baseURL)
    let endpoint = Endpoint<Data>(path: "x", decoding: .data)
    if streams {
      let answer = try await Self.call(client, endpoint, streams: true)
      #expect(answer.head.headers["X-Trace"] == "t-2")
      #expect(answer.head.headers.values(for: "Set-Cookie") == ["k=1"])
      let error = #expect(throws: APIError.self) { try answer.body.get() }
      #expect(error?.kind == .transport, "got \(String(describing: error))")
    } else {
      let error = await #expect(throws: APIError.self) { try await client.send(endpoint) }
      #expect(error?.kind == .transport, "got \(String(describing: error))")
    }
  }

  /// A body over the call's size limit fails with `dataLengthExceedsMaximum`, buffered or
  /// streamed, chunked or with its length announced.
  @Test(arguments: Self.combos([false, true]))
  func aBodyOverTheLimitFails(kind: TransportKind, streams: Bool, chunked: Bool) async throws {
    let server = try LoopbackServer { _ in
      ScriptedResponse(
        status: 200, headers: [("X-Trace", "t-3")], body: Data(repeating: 0x62, count: 200_000),
        chunkSize: chunked ? 1000 : nil)
    }
    defer { server.stop() }
    let client = kind.client(
      server.baseURL, configuration: .init(maximumResponseSize: 50_000))
    let endpoint = Endpoint<Data>(path: "x", decoding: .data)
    let failure: (any Error)?
    if streams {
      let answer = try await Self.call(client, endpoint, streams: true)
      #expect(answer.head.headers["X-Trace"] == "t-3")
      if case .failure(let error) = answer.body { failure = error } else { failure = nil }
    } else {
      failure = await #expect(throws: APIError.self) { try await client.send(endpoint) }
    }
    let described = String(describing: failure)
    #expect(
      described.contains("dataLengthExceedsMaximum") || described.contains("-1103"),
      "got \(described)")
  }

  /// A large buffered body (it backs up, so its head is handed over before the end): every byte
  /// and every field arrives.
  @Test(arguments: TransportKind.allCases)
  func aLargeBufferedBodyKeepsItsFieldsAndBytes(kind: TransportKind) async throws {
    let body = Data((0..<6_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    let server = try LoopbackServer { _ in
      ScriptedResponse(
        status: 200, headers: [("X-Trace", "t-4"), ("Set-Cookie", "big=1")], body: body,
        chunkSize: 64 * 1024)
    }
    defer { server.stop() }
    let answer = try await Self.call(
      kind.client(server.baseURL), Endpoint<Data>(path: "x", decoding: .data), streams: false)
    #expect(answer.head.headers["X-Trace"] == "t-4")
    #expect(answer.head.headers.values(for: "Set-Cookie") == ["big=1"])
    let got = try answer.body.get()
    #expect(got.count == body.count)
    #expect(got == body)
  }

  /// A redirect (a `302`, a same-origin `307` that the transport resends itself): the caller
  /// gets the final answer's status and fields, none of the redirect's.
  @Test(arguments: Self.combos([302, 307]))
  func aRedirectsFieldsDoNotLeakIntoTheAnswer(kind: TransportKind, streams: Bool, status: Int)
    async throws
  {
    let server = try LoopbackServer { request in
      if request.path == "/from" {
        return ScriptedResponse(
          status: status,
          headers: [
            ("Location", "/to"), ("X-Hop", "redirect"), ("Set-Cookie", "hop=1"),
            ("X-Secret", "redirect-only"),
          ])
      }
      return ScriptedResponse(
        status: 200, headers: [("X-Hop", "final"), ("Set-Cookie", "fin=2")],
        body: Data("final:\(request.method):\(String(decoding: request.body, as: UTF8.self))".utf8))
    }
    defer { server.stop() }
    let endpoint = Endpoint<Data>(
      method: .post, path: "from", body: .data(Data("payload".utf8)), decoding: .data)
    let answer = try await Self.call(kind.client(server.baseURL), endpoint, streams: streams)
    #expect(answer.head.status == 200)
    #expect(answer.head.headers.values(for: "X-Hop") == ["final"])
    #expect(answer.head.headers["X-Secret"] == nil)
    #expect(answer.head.headers.values(for: "Set-Cookie") == ["fin=2"])
    let expected = status == 307 ? "final:POST:payload" : "final:GET:"
    #expect(String(decoding: try answer.body.get(), as: UTF8.self) == expected)
  }

  /// Many calls at once, each answered with its own fields and cookie: no caller gets another's.
  @Test(arguments: TransportKind.allCases)
  func concurrentCallsEachGetTheirOwnHead(kind: TransportKind) async throws {
    let server = try LoopbackServer { request in
      let id = request.path.split(separator: "/").last.map(String.init) ?? "?"
      return ScriptedResponse(
        status: 200,
        headers: [("X-Id", id), ("Set-Cookie", "session=\(id)"), ("Set-Cookie", "other=\(id)")],
        body: Data("body-\(id)".utf8), chunkSize: Int(id).map { $0 % 2 == 0 ? 3 : nil } ?? nil)
    }
    defer { server.stop() }
    let client = kind.client(server.baseURL)
    let mismatches = try await withThrowingTaskGroup(of: [String].self) { group in
      for id in 0..<24 {
        group.addTask {
          let answer = try await Self.call(
            client, Endpoint<Data>(path: "u/\(id)", decoding: .data), streams: id % 3 == 0)
          var wrong: [String] = []
          if answer.head.headers["X-Id"] != "\(id)" { wrong.append("\(id): X-Id") }
          if answer.head.headers.values(for: "Set-Cookie") != ["session=\(id)", "other=\(id)"] {
            wrong.append("\(id): cookies \(answer.head.headers.values(for: "Set-Cookie"))")
          }
          if (try? answer.body.get()) != Data("body-\(id)".utf8) { wrong.append("\(id): body") }
          return wrong
        }
      }
      return try await group.reduce(into: []) { $0 += $1 }
    }
    #expect(mismatches.isEmpty)
  }

  // MARK: - 2. HTTPResponse.init(_:body:) directly

  /// Expires dates, quoted values and `Max-Age` in a joined value: split into exactly the cookies
  /// that were joined.
  @Test func joinedCookiesWithDatesAndQuotesSplitExactly() throws {
    let cookies = [
      "a=\"x y\"; Expires=Wed, 21 Oct 2026 07:28:00 GMT; Path=/",
      "b=2; Max-Age=10",
      "c=3; Expires=Sun, 06 Nov 1994 08:49:37 GMT",
      "__Host-d=4; Secure; Path=/",
    ]
    let head = try #require(
      HTTPURLResponse(
        url: URL(string: "https://api.example.com/x")!, statusCode: 200, httpVersion: "HTTP/1.1",
        headerFields: ["set-cookie": cookies.joined(separator: ", ")]))
    #expect(HTTPResponse(head, body: Data()).headers.values(for: "Set-Cookie") == cookies)
  }
}
