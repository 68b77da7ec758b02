import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Hostile probes of `Exchange` and `ExchangeTransport` as a user outside Errand sees them: this
/// file imports only `Errand` and `ErrandTesting` (no SPI, no `@testable`), and the tests' hang
/// guard. Each probe asserts the safe behaviour, so a failure is a finding.
@Suite(.timeLimit(.minutes(3))) struct ExchangeFromOutsideHostileTests {
  // MARK: Helpers a user would write

  /// A value behind a lock, as a user writes one (Errand's `Locked` is not public).
  final class Box<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func update<R>(_ body: (inout Value) -> R) -> R {
      lock.lock()
      defer { lock.unlock() }
      return body(&value)
    }
    var current: Value { update { $0 } }
  }

  /// Every event heard, and a stream that tells when one arrives.
  final class Heard: EventListener {
    let events = Box<[CallEvent]>([])
    let arrivals = AsyncStream<CallEvent>.makeStream()

    func receive(_ event: CallEvent) throws {
      events.update { $0.append(event) }
      arrivals.continuation.yield(event)
    }

    /// The events up to the one that ends a call (bounded: 10 seconds at most).
    func untilCallEnds() async -> [CallEvent] {
      let stream = arrivals.stream
      _ = await returnsInTime(seconds: 60) {
        for await event in stream {
          switch event.kind {
          case .callEnded, .callFailed, .callCancelled: return true
          default: continue
          }
        }
        return false
      }
      return events.current
    }
  }

  /// Whether `call` ends within 60 s of real time (a hang guard, not a timing), and its error.
  static func ending(_ call: Task<Data, any Error>) async -> (ended: Bool, error: (any Error)?) {
    let outcome = Box<(any Error)?>(nil)
    let ended = await returnsInTime(seconds: 60) {
      do {
        _ = try await call.value
      } catch {
        outcome.update { $0 = error }
      }
      return true
    }
    return (ended, outcome.current)
  }

  static let base = URL(string: "https://api.example.com/v1")!

  // MARK: Secrets told through the exchange

  /// An error a user's transport refuses a redirect with, and the secret it quotes.
  struct Refusal: Sendable, CustomTestStringConvertible {
    let name: String
    let error: any Error
    var testDescription: String { name }
  }

  struct AppRedirectError: LocalizedError {
    var location: String
    var errorDescription: String? { "will not follow the redirect to \(location)" }
  }

  static let refusals: [Refusal] = [
    Refusal(
      name: "RefusedRedirectError built from the raw URLs",
      error: RefusedRedirectError(
        from: "https://api.example.com/v1/start?access_token=S3CRET-A",
        location: "http://cdn.example/file?api_key=S3CRET-A", reason: .downgradeToHTTP)),
    Refusal(
      name: "URLError whose description names the Location",
      error: URLError(
        .badURL,
        userInfo: [
          NSLocalizedDescriptionKey: "bad Location http://cdn.example/file?token=S3CRET-B"
        ])),
    Refusal(
      name: "an app's own error quoting the Location",
      error: AppRedirectError(location: "https://login.example/cb?code=S3CRET-C")),
  ]

  /// The Transports article: listeners hear the redirects a transport refuses "redacted as
  /// every event is". `Exchange.redirectRefused(_:)` posts the error's description as it is.
  @Test(arguments: refusals)
  func aRefusalToldByAUsersTransportShowsNoSecret(_ refusal: Refusal) async throws {
    struct Refusing: ExchangeTransport {
      let error: any Error
      func exchange(_ request: HTTPRequest, _ exchange: Exchange) async throws -> HTTPResponse {
        exchange.redirectRefused(error)
        throw error
      }
      func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await exchange(request, Exchange())
      }
    }
    let heard = Heard()
    let client = APIClient(
      baseURL: Self.base, transport: Refusing(error: refusal.error),
      configuration: .init(eventListeners: [heard]))
    _ = try? await client.send(Endpoint<Data>(path: "start"))
    let events = await heard.untilCallEnds()
    let reasons = events.compactMap { event -> String? in
      if case .redirectRefused(let reason) = event.kind { return reason }
      return nil
    }
    #expect(reasons.count == 1, "heard \(events.map(\.kind.name))")
    for reason in reasons {
      #expect(!reason.contains("S3CRET"), "a listener heard: \(reason)")
    }
  }

  /// A Location a user's transport follows, and the secret in it.
  static let followedLocations: [String] = [
    // A query value the client's own redaction names: hidden (control row).
    "https://cdn.example/file?session=S3CRET-D",
    // An OAuth implicit-grant token, in the fragment.
    "https://app.example/callback#access_token=S3CRET-E&token_type=bearer",
  ]

  /// `Exchange.redirectFollowed(status:location:)`: "the location is shown with its secrets
  /// hidden".
  @Test(arguments: followedLocations)
  func aRedirectToldByAUsersTransportShowsNoSecret(_ location: String) async throws {
    struct Following: ExchangeTransport {
      let location: URL
      func exchange(_ request: HTTPRequest, _ exchange: Exchange) async throws -> HTTPResponse {
        exchange.redirectFollowed(status: 302, location: location)
        return HTTPResponse(status: 200, headers: [:], body: Data("{}".utf8), url: request.url)
      }
      func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await exchange(request, Exchange())
      }
    }
    let heard = Heard()
    var configuration = APIClient.Configuration(eventListeners: [heard])
    configuration.redaction.queryParameters.insert("session")
    let client = APIClient(
      baseURL: Self.base, transport: Following(location: try #require(URL(string: location))),
      configuration: configuration)
    _ = try await client.send(Endpoint<Data>(path: "start"))
    let events = await heard.untilCallEnds()
    let told = events.compactMap { event -> String? in
      if case .redirectFollowed(_, let location) = event.kind { return location }
      return nil
    }
    #expect(told.count == 1, "heard \(events.map(\.kind.name))")
    for location in told {
      #expect(!location.contains("S3CRET"), "a listener heard: \(location)")
    }
  }

  /// `RefusedRedirectError`: "Both URLs are kept with their secrets hidden, so printing the error
  /// never shows a token from a redirect URL". Its public initializer is what a user's transport
  /// calls, with the URLs it has.
  @Test func aRefusedRedirectErrorBuiltByAUserPrintsNoToken() {
    let error = RefusedRedirectError(
      from: "https://api.example.com/v1/start?access_token=S3CRET-G",
      location: "http://cdn.example/file?signature=S3CRET-G", reason: .downgradeToHTTP)
    var dumped = ""
    dump(error, to: &dumped)
    for form in [error.localizedDescription, "\(error)", dumped] {
      #expect(!form.contains("S3CRET"), "printed: \(form)")
    }
  }

  // MARK: Deadlines a user's transport is handed

  /// `Exchange.whenDeadlinePasses(_:)` on a `TestClock`: a deadline is "counted from when the call
  /// starts", so once the clock has been advanced past it the handler runs, however soon after
  /// arming the clock moved.
  @Test func aDeadlineOnATestClockFiresOnceTheClockHasPassedIt() async throws {
    for attempt in 1...20 {
      let clock = TestClock()
      let exchange = Exchange(timeout: .seconds(5), clock: clock)
      let fired = AsyncStream<Void>.makeStream()
      let disarm = exchange.whenDeadlinePasses { fired.continuation.finish() }
      await clock.advance(by: .seconds(5))
      #expect((exchange.remainingTime ?? .seconds(1)) <= .zero)
      let heard = await returnsInTime(seconds: 60) {
        for await _ in fired.stream {}
        return true
      }
      let sleepers = clock.sleeperCount
      disarm()
      guard heard else {
        let remaining = String(describing: exchange.remainingTime)
        let message =
          "attempt \(attempt): remaining \(remaining), the handler has not run, "
          + "\(sleepers) sleeper(s) still waiting on the clock"
        Issue.record(Comment(rawValue: message))
        return
      }
    }
  }

  /// An exchange a user builds: without a timeout its deadline never passes; one whose timeout
  /// has already run out passes at once, and its handler runs once.
  @Test(arguments: [Duration.zero, .seconds(-1)])
  func aUserExchangeFiresOnlyWhenItHasADeadlineAndThenOnce(_ timeout: Duration) async throws {
    let none = Exchange()
    let neverFired = Box(0)
    let disarmNone = none.whenDeadlinePasses { neverFired.update { $0 += 1 } }
    #expect(none.remainingTime == nil)
    let count = Box(0)
    let fired = AsyncStream<Void>.makeStream()
    let passed = Exchange(timeout: timeout)
    let disarm = passed.whenDeadlinePasses {
      count.update { $0 += 1 }
      fired.continuation.finish()
    }
    let heard = await returnsInTime(seconds: 60) {
      for await _ in fired.stream {}
      return true
    }
    #expect(heard)
    disarm()
    disarm()
    disarmNone()
    #expect(count.current == 1)
    #expect(neverFired.current == 0)
  }

  /// A user's transport that ignores the deadline but hands over a head at once, its body never
  /// ending: the client "settles the body in one place" and ends a buffered call at its deadline,
  /// stopping the transfer.
  @Test func aBodyThatNeverEndsIsEndedAtTheCallsDeadline() async throws {
    final class NeverEnding: ExchangeTransport {
      let stopped = Box(0)
      let writers = Box<[HTTPBody.Writer]>([])
      func exchange(_ request: HTTPRequest, _ exchange: Exchange) async throws -> HTTPResponse {
        let (body, writer) = HTTPBody.makeStream(expectedLength: nil) { [stopped] in
          stopped.update { $0 += 1 }
        }
        writer.write(Data("{".utf8))
        writers.update { $0.append(writer) }
        var head = HTTPResponse(status: 200, headers: [:], body: Data(), url: request.url)
        head.bodyStream = body
        return head
      }
      func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await exchange(request, Exchange())
      }
    }
    let clock = TestClock()
    let transport = NeverEnding()
    let client = APIClient(
      baseURL: Self.base, transport: transport,
      configuration: .init(timeout: .seconds(5), clock: clock))
    let call = Task { try await client.send(Endpoint<Data>(path: "slow")) }
    try #require(await clock.waitForSleepers(1))
    await clock.advance(by: .seconds(5))
    let (ended, outcome) = await Self.ending(call)
    call.cancel()
    #expect(ended, "the call did not end at its deadline")
    #expect(
      (outcome as? APIError)?.kind == .timedOut, "\(String(describing: outcome))")
    #expect(transport.stopped.current == 1)
  }

  /// `StubTransport.exchange(_:_:)`: an answer "with delays or handlers is worked out in one task
  /// raced against the deadline and the caller's cancellation"; `ExchangeTransport`: "throw
  /// `CancellationError` promptly when the calling task is cancelled, whether or not the work
  /// underneath has noticed yet". A handler that holds its answer (a test gating the server) on a
  /// client without a timeout.
  @Test func aStubHandlerThatHoldsItsAnswerEndsOnCancellationWithoutADeadline() async throws {
    let gate = Box<CheckedContinuation<Void, Never>?>(nil)
    let entered = AsyncStream<Void>.makeStream()
    let stub = StubTransport { _ in
      await withCheckedContinuation { continuation in
        gate.update { $0 = continuation }
        entered.continuation.yield()
      }
      return .status(200)
    }
    let client = APIClient(baseURL: Self.base, transport: stub, configuration: .init(timeout: nil))
    let call = Task { try await client.send(Endpoint<Data>(path: "held")) }
    var arrivals = entered.stream.makeAsyncIterator()
    _ = await arrivals.next()
    call.cancel()
    let (ended, outcome) = await Self.ending(call)
    // Let the held handler go, so that nothing is left waiting after the probe.
    gate.update { held -> CheckedContinuation<Void, Never>? in
      defer { held = nil }
      return held
    }?.resume()
    #expect(ended, "the cancelled call was still waiting for the stub's handler after 5 s")
    if ended {
      #expect((outcome as? APIError)?.kind == .cancelled)
    }
  }

  /// A timeout so large it means "never" (`Duration.seconds(Int64.max)`), on the continuous clock
  /// and on a `TestClock`: no overflow trap, the deadline does not pass, and Errand's own
  /// transports take the exchange.
  @Test func anEnormousTimeoutNeitherTrapsNorPasses() async throws {
    for clock in [ContinuousClock() as any Clock<Duration>, TestClock()] {
      let exchange = Exchange(timeout: .seconds(Int64.max), clock: clock)
      let fired = Box(false)
      let disarm = exchange.whenDeadlinePasses { fired.update { $0 = true } }
      #expect((exchange.remainingTime ?? .zero) > .seconds(1_000_000))
      let answer = try await StubTransport.httpbin().exchange(
        HTTPRequest(url: URL(string: "http://httpbin.invalid/get")!), exchange)
      #expect(answer.status == 200)
      disarm()
      #expect(!fired.current)
    }
  }

  // MARK: Progress

  /// `APIClient.send(_:progress:)`: "reports never go back". A user's transport that sends its
  /// body twice (a resend after a redirect, a reconnection) reports from zero again.
  @Test func uploadProgressThroughAUsersTransportNeverGoesBack() async throws {
    struct Resending: ExchangeTransport {
      func exchange(_ request: HTTPRequest, _ exchange: Exchange) async throws -> HTTPResponse {
        let count = request.body?.count ?? 0
        for sent in [count / 2, count, 0, count / 2, count] {
          exchange.reportUploadProgress(
            TransferProgress(completedBytes: sent, expectedBytes: count))
        }
        return HTTPResponse(status: 200, headers: [:], body: Data("{}".utf8), url: request.url)
      }
      func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await exchange(request, Exchange())
      }
    }
    let heard = Box<[Int]>([])
    let client = APIClient(baseURL: Self.base, transport: Resending())
    _ = try await client.send(
      Endpoint<Data>(method: .put, path: "logs", body: .data(Data(count: 10)))
    ) { progress in heard.update { $0.append(progress.completedBytes) } }
    let reports = heard.current
    #expect(reports.last == 10)
    #expect(zip(reports, reports.dropFirst()).allSatisfy { $0 <= $1 }, "heard \(reports)")
  }

  // MARK: The conformance checks a user runs

  /// Times out at once whatever the deadline (a `/delay` request), else answers as httpbin.
  struct TimesOutAtOnce: ExchangeTransport {
    let inner = StubTransport.httpbin()
    func exchange(_ request: HTTPRequest, _ exchange: Exchange) async throws -> HTTPResponse {
      if request.url.path.contains("delay") { throw APIError.timedOut }
      return try await inner.exchange(request, exchange)
    }
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
      try await exchange(request, Exchange())
    }
  }

  /// Waits for the whole body before returning, whatever the exchange says.
  struct ReturnsAtTheEnd: ExchangeTransport {
    let inner = StubTransport.httpbin()
    func exchange(_ request: HTTPRequest, _ exchange: Exchange) async throws -> HTTPResponse {
      var plain = exchange
      plain.streams = false
      let head = try await inner.exchange(request, plain)
      return try await head.collectingBody().streamingBody()
    }
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
      try await exchange(request, Exchange())
    }
  }

  /// `TransportConformance.exchangeChecks` promise that "a transport that adopts
  /// ExchangeTransport ends its wait at the exchange's deadline" and "returns a streamed
  /// exchange's head with its body to follow": a transport that does neither should fail them.
  @Test(arguments: ["the exchange's deadline ends the wait"])
  func theExchangeChecksCatchATransportThatBreaksThem(_ name: String) async throws {
    let check = try #require(TransportConformance.exchangeChecks.first { $0.description == name })
    let transport: any Transport =
      name.contains("deadline") ? TimesOutAtOnce() : ReturnsAtTheEnd()
    var failed = false
    do {
      try await check.run(transport, httpbin: URL(string: "http://httpbin.invalid")!)
    } catch {
      failed = true
    }
    #expect(failed, "\(type(of: transport)) passed \"\(name)\"")
  }
}
