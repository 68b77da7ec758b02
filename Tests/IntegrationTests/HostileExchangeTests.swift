import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// Hostile probes of the production transports over a loopback socket: secrets in redirect
/// events, one call's head, body or progress reaching another, a user's `Exchange` handed to
/// Errand's transports, and cancellation or deadlines racing the head. Each probe asserts the
/// safe (or documented) behaviour, so a failure is a finding.
@Suite(.timeLimit(.minutes(3))) struct HostileExchangeTests {
  /// A client over `kind` whose redaction also hides `session`, with a listener.
  static func client(
    _ kind: TransportKind, _ base: URL, listener: RecordingListener,
    middleware: [any Middleware] = []
  ) -> APIClient {
    var configuration = APIClient.Configuration(
      middleware: middleware, eventListeners: [listener])
    configuration.redaction.queryParameters.insert("session")
    return kind.client(base, configuration: configuration)
  }

  // MARK: Secrets in redirect events

  static let refusedRows: [RefusedRedirectRow] = [
    RefusedRedirectRow(
      name: "client-secret-in-request-url",
      query: [URLQueryItem(name: "session", value: "S3CRET-1")], location: "ftp://files.example/x"),
    RefusedRedirectRow(
      name: "token-in-location-fragment", query: [],
      location: "ftp://files.example/cb#access_token=S3CRET-2"),
  ]

  /// A redirect refused by Errand's own policy, over each production transport: neither the
  /// `redirectRefused` event, the `callFailed` event nor the thrown error shows the secret.
  @Test(arguments: TransportKind.allCases, refusedRows)
  func aRefusedRedirectOverTheWireShowsNoSecret(_ kind: TransportKind, _ row: RefusedRedirectRow)
    async throws
  {
    let server = try LoopbackServer { _ in
      ScriptedResponse(status: 302, headers: [("Location", row.location)])
    }
    defer { server.stop() }
    let listener = RecordingListener()
    let client = Self.client(kind, server.baseURL, listener: listener)
    let error = try await #require(throws: APIError.self) {
      try await client.send(Endpoint<Data>(path: "start", query: row.query, decoding: .data))
    }
    #expect(error.underlyingError is RefusedRedirectError, "\(error)")
    let events = await listener.eventsOfOneCall()
    #expect(events.contains { $0.kind.name == "redirectRefused" })
    var dumped = ""
    dump(error, to: &dumped)
    for text in printedForms(of: events) + [error.localizedDescription, "\(error)", dumped] {
      #expect(!text.contains("S3CRET"), "printed: \(text)")
    }
  }

  /// A same-origin redirect whose Location carries an OAuth implicit grant's token in its
  /// fragment: the `redirectFollowed` event hides it as it hides a token in the query.
  @Test(arguments: TransportKind.allCases)
  func aFollowedRedirectShowsNoTokenInItsFragment(_ kind: TransportKind) async throws {
    let server = try LoopbackServer { request in
      request.path == "/start"
        ? ScriptedResponse(
          status: 302, headers: [("Location", "/next#access_token=S3CRET-4&token_type=bearer")])
        : .text("arrived")
    }
    defer { server.stop() }
    let listener = RecordingListener()
    let client = Self.client(kind, server.baseURL, listener: listener)
    #expect(try await client.send(Endpoint<String>(path: "start")) == "arrived")
    let events = await listener.eventsOfOneCall()
    #expect(events.contains { $0.kind.name == "redirectFollowed" })
    for text in printedForms(of: events) {
      #expect(!text.contains("S3CRET"), "a listener heard: \(text)")
    }
  }

  // MARK: One call's data reaching another

  /// Many calls at once over one transport (buffered, streamed, some timing out, some cancelled):
  /// every answer that arrives is the one its call asked for.
  @Test(arguments: TransportKind.allCases)
  func concurrentCallsEachGetTheirOwnAnswer(_ kind: TransportKind) async throws {
    let server = try LoopbackServer { request in
      let number = Int(request.path.split(separator: "/").last ?? "") ?? -1
      var response = ScriptedResponse.text(String(repeating: "item-\(number);", count: 50))
      response.delayBeforeHeaders = .milliseconds((number % 5) * 10)
      if number % 2 == 0 { response.chunkSize = 97 }
      return response
    }
    defer { server.stop() }
    let client = kind.client(server.baseURL)
    let problems = await withTaskGroup(of: String?.self) { group in
      for number in 0..<48 {
        group.addTask {
          let expected = String(repeating: "item-\(number);", count: 50)
          let call = Task { () throws -> String in
            switch number % 4 {
            case 1:
              let stream = try await client.stream(
                Endpoint<Data>(path: "item/\(number)", decoding: .data))
              return String(decoding: try await stream.collect(), as: UTF8.self)
            case 2:
              return try await client.send(
                Endpoint<String>(path: "item/\(number)", timeout: .milliseconds(25)))
            default:
              return try await client.send(Endpoint<String>(path: "item/\(number)"))
            }
          }
          if number % 4 == 3 {
            for _ in 0..<(number % 7) { await Task.yield() }
            call.cancel()
          }
          let problem = Locked<String?>(nil)
          let ended = await returnsInTime(seconds: 60) {
            do {
              let answer = try await call.value
              if answer != expected {
                problem.withLock { $0 = "call \(number) got \(answer.prefix(40))" }
              }
            } catch let error as APIError where [.cancelled, .timedOut].contains(error.kind) {
            } catch {
              problem.withLock { $0 = "call \(number) failed: \(error)" }
            }
            return true
          }
          return ended ? problem.withLock { $0 } : "call \(number) never ended"
        }
      }
      var problems: [String] = []
      for await problem in group {
        if let problem { problems.append(problem) }
      }
      return problems
    }
    #expect(problems.isEmpty, "\(problems)")
  }

  /// Uploads at once over one transport: each call's progress observer hears only its own body.
  @Test(arguments: TransportKind.allCases)
  func concurrentUploadsHearOnlyTheirOwnProgress(_ kind: TransportKind) async throws {
    let server = try LoopbackServer { _ in .json("{}") }
    defer { server.stop() }
    let client = kind.client(server.baseURL)
    let problems = await withTaskGroup(of: String?.self) { group in
      for index in 0..<6 {
        group.addTask {
          let size = 100_000 + index * 37_000
          let heard = Locked<[TransferProgress]>([])
          do {
            _ = try await client.send(
              Endpoint<Data>(
                method: .put, path: "upload/\(index)", body: .data(patternBytes(size)),
                decoding: .data)
            ) { progress in heard.withLock { $0.append(progress) } }
          } catch {
            return "upload \(index) failed: \(error)"
          }
          let reports = heard.withLock { $0 }
          guard reports.allSatisfy({ $0.expectedBytes == size }),
            reports.allSatisfy({ $0.completedBytes <= size }), reports.last?.completedBytes == size
          else {
            return "upload \(index) of \(size) bytes heard \(reports.map(\.completedBytes))"
          }
          return nil
        }
      }
      var problems: [String] = []
      for await problem in group {
        if let problem { problems.append(problem) }
      }
      return problems
    }
    #expect(problems.isEmpty, "\(problems)")
  }

  /// What sends an upload's body a second time.
  enum Resend: String, CaseIterable, Sendable {
    /// A `307` within the origin, which the transport answers by sending the body again.
    case redirect307
    /// A `503`, which `RetryMiddleware` answers with another attempt.
    case retryAfter503
  }

  /// `APIClient.send(_:progress:)`: "reports never go back, none is dropped ..., and the last one
  /// is the whole body", for an upload whose body goes out twice.
  @Test(arguments: TransportKind.allCases, Resend.allCases)
  func uploadProgressNeverGoesBack(_ kind: TransportKind, _ resend: Resend) async throws {
    let size = 3 * 1024 * 1024
    let answered = Locked(0)
    let server = try LoopbackServer { request in
      let first = answered.withLock { count -> Bool in
        count += 1
        return count == 1
      }
      switch resend {
      case .redirect307 where request.path == "/start":
        return ScriptedResponse(status: 307, headers: [("Location", "/next")])
      case .retryAfter503 where first:
        return ScriptedResponse(status: 503)
      default:
        return .json("{}")
      }
    }
    defer { server.stop() }
    let retry = RetryMiddleware(
      policy: RetryPolicy(maxAttempts: 2, baseDelay: .zero, jitter: .none))
    let listener = RecordingListener()
    let client = kind.client(
      server.baseURL,
      configuration: .init(
        middleware: resend == .retryAfter503 ? [retry] : [], eventListeners: [listener]))
    let heard = Locked<[Int]>([])
    do {
      _ = try await client.send(
        Endpoint<Data>(
          method: .put, path: "start", body: .data(patternBytes(size)), decoding: .data)
      ) { progress in heard.withLock { $0.append(progress.completedBytes) } }
    } catch {
      // What the server got and the call went through, to tell where a rare stall happened.
      let events = await listener.eventsOfOneCall().map(\.kind.name)
      Issue.record(
        """
        \(error); the server got \(server.requests.map { "\($0.method) \($0.path) \($0.body.count)" }); \
        events \(events); progress \(heard.withLock { $0 }.suffix(4))
        """)
      return
    }
    #expect(server.requests.count == 2)
    let reports = heard.withLock { $0 }
    #expect(reports.last == size)
    #expect(zip(reports, reports.dropFirst()).allSatisfy { $0 <= $1 }, "heard \(reports)")
  }

  // MARK: A user's exchange handed to Errand's transports

  /// `Exchange()` has no deadline: a transport given it waits as long as the server does, and
  /// ends its wait with `CancellationError` as soon as the calling task is cancelled.
  @Test(arguments: TransportKind.allCases)
  func aUserExchangeWithoutADeadlineEndsOnCancellation(_ kind: TransportKind) async throws {
    let server = try LoopbackServer { _ in ScriptedResponse(delayBeforeHeaders: .seconds(20)) }
    defer { server.stop() }
    let transport = try #require(kind.make() as? any ExchangeTransport)
    let call = Task {
      try await transport.exchange(HTTPRequest(url: server.url("/slow")), Exchange())
    }
    #expect(await server.waitForRequests(1))
    call.cancel()
    let outcome = Locked<(any Error)?>(nil)
    let ended = await returnsInTime(seconds: 60) {
      do {
        _ = try await call.value
      } catch {
        outcome.withLock { $0 = error }
      }
      return true
    }
    #expect(ended, "the exchange did not end within 5 s of its cancellation")
    #expect(outcome.withLock { $0 } is CancellationError, "\(String(describing: outcome))")
  }

  /// `Exchange(timeout:clock:)` on a `TestClock`: the transport's wait ends with `timedOut` when
  /// the clock passes the deadline, not before, whatever the wall clock says.
  @Test(arguments: TransportKind.allCases)
  func aUserExchangeOnATestClockTimesOutWhenItsClockPasses(_ kind: TransportKind) async throws {
    let server = try LoopbackServer { _ in ScriptedResponse(delayBeforeHeaders: .seconds(20)) }
    defer { server.stop() }
    let transport = try #require(kind.make() as? any ExchangeTransport)
    let clock = TestClock()
    let call = Task {
      try await transport.exchange(
        HTTPRequest(url: server.url("/slow")), Exchange(timeout: .seconds(5), clock: clock))
    }
    #expect(await server.waitForRequests(1))
    try #require(await clock.waitForSleepers(1))
    await clock.advance(by: .seconds(5))
    let outcome = Locked<(any Error)?>(nil)
    let ended = await returnsInTime(seconds: 60) {
      do {
        _ = try await call.value
      } catch {
        outcome.withLock { $0 = error }
      }
      return true
    }
    call.cancel()
    #expect(ended)
    #expect((outcome.withLock { $0 } as? APIError)?.kind == .timedOut)
  }

  /// A streamed exchange's head, dropped after one chunk: the transfer stops (the server sees
  /// the connection close early). The server would stream for 100 s: a test run that keeps this
  /// test from its thread for seconds (hundreds of tests start at once) still ends it early.
  @Test(arguments: TransportKind.allCases)
  func aDroppedHeadOfAUserExchangeStopsTheTransfer(_ kind: TransportKind) async throws {
    let server = try LoopbackServer { _ in
      .chunks(Array(repeating: patternBytes(1000), count: 100), interval: .seconds(1))
    }
    defer { server.stop() }
    let transport = try #require(kind.make() as? any ExchangeTransport)
    do {
      let head = try await transport.exchange(
        HTTPRequest(url: server.url("/feed")), Exchange(streams: true))
      var chunks = try #require(head.bodyStream).makeAsyncIterator()
      _ = try await chunks.next()
    }
    #expect(await server.waitForEarlyDisconnect())
  }

  // MARK: Races with the head

  /// Cancellation at any moment around the head (buffered and streamed calls): every call ends.
  @Test(arguments: TransportKind.allCases)
  func cancellationRacingTheHeadAlwaysEnds(_ kind: TransportKind) async throws {
    let server = try LoopbackServer { _ in .text(String(repeating: "x", count: 3000)) }
    defer { server.stop() }
    let client = kind.client(server.baseURL)
    for iteration in 0..<60 {
      let call = Task {
        if iteration % 2 == 0 {
          _ = try await client.send(Endpoint<String>(path: "x/\(iteration)"))
        } else {
          let stream = try await client.stream(
            Endpoint<Data>(path: "x/\(iteration)", decoding: .data))
          _ = try await stream.collect()
        }
      }
      for _ in 0..<(iteration % 13) { await Task.yield() }
      call.cancel()
      let ended = await returnsInTime(seconds: 60) {
        _ = try? await call.value
        return true
      }
      guard ended else {
        Issue.record("iteration \(iteration): a cancelled call never ended")
        return
      }
    }
  }

  /// A deadline at about the moment the head arrives: every call ends, with its answer or
  /// `timedOut`.
  @Test(arguments: TransportKind.allCases)
  func aDeadlineRacingTheHeadAlwaysEnds(_ kind: TransportKind) async throws {
    let server = try LoopbackServer { request in
      var response = ScriptedResponse.text("ok")
      response.delayBeforeHeaders = .milliseconds(request.path.count % 4)
      return response
    }
    defer { server.stop() }
    let client = kind.client(server.baseURL)
    for iteration in 0..<60 {
      let call = Task {
        try await client.send(
          Endpoint<String>(
            path: "r/\(iteration)", timeout: .milliseconds(1 + iteration % 5)))
      }
      let outcome = Locked<String?>(nil)
      let ended = await returnsInTime(seconds: 60) {
        do {
          _ = try await call.value
        } catch let error as APIError where error.kind == .timedOut {
        } catch {
          outcome.withLock { $0 = "\(error)" }
        }
        return true
      }
      guard ended else {
        Issue.record("iteration \(iteration): a call past its deadline never ended")
        call.cancel()
        return
      }
      #expect(outcome.withLock { $0 } == nil, "iteration \(iteration)")
    }
  }
}
