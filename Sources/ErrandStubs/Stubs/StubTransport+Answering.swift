@_spi(Transports) import Errand
import Foundation

/// Answering: the route a request matches, the answer it resolves to on the stub's clock, and the
/// report when nothing matches.
extension StubTransport {
  /// Record the request and answer it: from the first matching route, else the handler, else the
  /// endpoint's sample when the stub answers with samples.
  /// - Parameter request: The request.
  /// - Returns: The answer, with the request's URL as its URL unless it has one.
  /// - Throws: The answer's error, `CancellationError` when the task is cancelled while the
  ///   answer waits, or ``UnmatchedRequest``; `APIError.invalidRequest` for a request that fails
  ///   `HTTPRequest.validate()`, as Errand's own transports do.
  public nonisolated func send(_ request: HTTPRequest) async throws -> HTTPResponse {
    try await exchange(request, Exchange())
      .settlingBody(limit: request.maximumResponseSize, streams: false, deadline: nil)
  }

  /// Record the request and answer it as ``send(_:)`` does, returning at the head: the body of a
  /// ``StubResponse/chunks(_:interval:status:headers:failingWith:)`` or
  /// ``StubResponse/events(_:interval:failingWith:)`` answer arrives chunk by chunk on the stub's
  /// clock; any other answer's body arrives as one chunk.
  /// - Parameter request: The request.
  /// - Returns: The head, with its body in `bodyStream`.
  /// - Throws: What ``send(_:)`` throws before the head.
  public nonisolated func stream(_ request: HTTPRequest) async throws -> HTTPResponse {
    try await exchange(request, Exchange(streams: true))
      .settlingBody(limit: request.maximumResponseSize, streams: true, deadline: nil)
  }

  /// Answer as ``send(_:)`` or ``stream(_:)`` do, returning at the head (a chunked answer's
  /// body follows on the stub's clock), within the exchange's deadline: an answer with nothing to
  /// wait for comes back at once; one with delays or handlers is worked out in one task raced
  /// against the deadline and the caller's cancellation; the upstream gets the exchange. A stub
  /// created with `followsRedirects` answers each redirect's `Location` in turn, as Errand's
  /// transports do, and tells the call's listeners. A stub that answers with samples answers
  /// with the exchange's `sample`.
  /// - Parameters:
  ///   - request: The request.
  ///   - exchange: Whether the caller reads the body as it arrives, the call's deadline, who
  ///     hears about the request body being sent, and the endpoint's sample.
  /// - Returns: The answer, or its head.
  /// - Throws: What ``send(_:)`` throws, `APIError.timedOut` or `CancellationError`.
  public nonisolated func exchange(
    _ request: HTTPRequest, _ exchange: Exchange
  ) async throws -> HTTPResponse {
    if isTestScoped.withLock({ $0 }), hasTestEnded.withLock({ $0 }), Self.scoped !== self {
      // A client kept from a `.stubbed` test that has ended: its routes answer nobody now. The
      // test running now is told so when it has a stub of its own (a test without the trait,
      // or a detached task, gets the error alone: no test of its can be named).
      let message =
        "\(request.method.rawValue) \(request.reportRedaction.redact(request.url)) was sent "
        + "through the stub of a @Test(.stubbed) test that has ended: a client made with "
        + "StubTransport.current (or .stubbed) belongs to the test that made it; make the "
        + "client inside this test"
      if Self.scoped != nil {
        CallSite(fileID: #fileID, filePath: #filePath, line: #line, column: #column)
          .recordIssueAtRunningTest(message)
      }
      throw APIError.invalidRequest(message)
    }
    if isTestScoped.withLock({ $0 }), let running = Self.scoped, running !== self {
      // A client made in one `.stubbed` test, used in another: its routes are the other test's.
      let message =
        "\(request.method.rawValue) \(request.reportRedaction.redact(request.url)) was sent "
        + "through the stub of another @Test(.stubbed) test: a client made with "
        + "StubTransport.current (or .stubbed) belongs to the test that made it; make the "
        + "client inside this test"
      CallSite(fileID: #fileID, filePath: #filePath, line: #line, column: #column)
        .recordIssueAtRunningTest(message)
      throw APIError.invalidRequest(message)
    }
    guard followsRedirects else {
      return try await journaled(request, exchange)
    }
    return try await RedirectPolicy.following(
      request, exchange, trustedHosts: [], maximum: RedirectPolicy.maximumRedirects
    ) {
      try await journaled($0, exchange)
    }
  }

  /// Answer one request, without following a redirect.
  nonisolated func answer(
    _ request: HTTPRequest, _ exchange: Exchange
  ) async throws -> HTTPResponse {
    let deadline = exchange.deadline
    if deadline != nil {
      // As a raced call would: a caller cancelled before it starts gets no answer.
      try Task.checkCancellation()
    }
    // As Errand's own transports do: a request that could not go on the wire never gets an answer.
    try request.validate()
    let request = try request.readingBodyFile()
    if let body = request.body {
      exchange.reportUploadProgress(
        TransferProgress(completedBytes: body.count, expectedBytes: body.count))
    }
    let stopwatch = Stopwatch(clock)
    let (answer, call) = try await route(request, sample: exchange.sample)
    let resolved: Resolved
    do {
      if let atOnce = try Self.resolveAtOnce(answer, call: call, defaultDelay: defaultDelay) {
        resolved = atOnce
      } else {
        resolved = try await Self.bounded(by: deadline, endedBy: exchange.cancellation) {
          [clock, defaultDelay] in
          try await Self.resolve(
            answer, request: request, call: call, clock: clock, defaultDelay: defaultDelay)
        }
      }
    } catch is StubPinMismatch {
      let host = request.url.host ?? ""
      throw PinMismatchError(host: host, expected: trust?.pins(for: host)?.sha256 ?? [])
    }
    switch resolved {
    case .passthrough:
      guard let upstream else { throw NoPassthrough(request: request) }
      await noteForwarded(request)
      return try await upstream.send(request, as: exchange)
    case .whole(var response):
      response.url = response.url ?? request.url
      response.metrics = Self.metrics(
        of: request, answeredAfter: stopwatch.elapsed, body: response.body, given: response.metrics)
      return response
    case .streamed(var stream):
      stream.head.url = stream.head.url ?? request.url
      stream.head.metrics = Self.metrics(
        of: request, answeredAfter: stopwatch.elapsed, body: nil, given: stream.head.metrics)
      return feed(stream, limit: request.maximumResponseSize)
    }
  }

  /// What the stub measured of an answer, on its clock, overlaid with what the route set
  /// (``StubResponse/withMetrics(_:)``): the request sent at zero, the first byte after the
  /// answer's delay, a whole body at once, the sizes of both bodies; nothing about connections.
  private static func metrics(
    of request: HTTPRequest, answeredAfter elapsed: Duration, body: Data?,
    given: TransferMetrics?
  ) -> TransferMetrics {
    var measured = TransferMetrics()
    measured.requestStart = .zero
    measured.responseStart = elapsed
    measured.requestBodyBytes = request.body?.count ?? 0
    if let body {
      measured.responseEnd = elapsed
      measured.responseBodyBytes = body.count
    }
    return given.map(measured.overlaid(by:)) ?? measured
  }

  /// Wait for `operation` within `deadline`, or until the caller is cancelled (or its client
  /// cancels the call, `cancellation`).
  private static func bounded<Value: Sendable>(
    by deadline: RequestDeadline?, endedBy cancellation: CallCancellation?,
    _ operation: @escaping @Sendable () async throws -> Value
  ) async throws -> Value {
    // Without a deadline still raced against the caller's cancellation: a handler that holds
    // its answer must not hold a cancelled caller.
    guard let deadline else { return try await withCancellation(endedBy: cancellation, operation) }
    return try await deadline.race(endedBy: cancellation, operation)
  }

  /// The head of a streamed answer, its body written chunk by chunk on the stub's clock by a task
  /// that stops when the reader does or the body crosses `limit`. A body that ends normally ends
  /// with the whole answer's metrics: the head's, with the end on the stub's clock and the
  /// body's size (unless the route set them).
  private nonisolated func feed(_ stream: StubStream, limit: Int?) -> HTTPResponse {
    let feeding = Locked<Task<Void, Never>?>(nil)
    let (body, writer) = HTTPBody.makeStream(
      expectedLength: nil, limit: limit, onCancel: { feeding.withLock { $0 }?.cancel() })
    let clock = clock
    let headMetrics = stream.head.metrics ?? TransferMetrics()
    let task = Task {
      do {
        let stopwatch = Stopwatch(clock)
        var sent = 0
        for (index, chunk) in stream.chunks.enumerated() {
          if index > 0, stream.interval > .zero {
            try await clock.sleep(for: stream.interval.sleepable)
          }
          if writer.write(chunk) == .stop { return }
          sent += chunk.count
        }
        if stream.stalls {
          try await Self.stall()
        }
        if let failure = stream.failure {
          writer.finish(throwing: failure)
        } else {
          var whole = headMetrics
          whole.responseEnd =
            whole.responseEnd ?? (whole.responseStart ?? .zero) + stopwatch.elapsed
          whole.responseBodyBytes = whole.responseBodyBytes ?? sent
          writer.finish(metrics: whole)
        }
      } catch {
        writer.finish(throwing: error)
      }
    }
    feeding.withLock { $0 = task }
    var head = stream.head
    head.bodyStream = body
    return head
  }

  /// Wait until the task is cancelled: a server that never answers, or stops mid-body.
  private static func stall() async throws {
    while true {
      try await Task.sleep(for: .seconds(3600))
    }
  }

  /// A route's answer once sequences, handlers and delays are worked out.
  private enum Resolved {
    case whole(HTTPResponse)
    case streamed(StubStream)
    case passthrough
  }

  /// Record the request and find what answers it: the first matching route whose scenario is in
  /// the state it requires (counting the call and moving the scenario, in this one step of the
  /// actor), else the handler, else the endpoint's sample when the stub answers with samples, else
  /// the upstream.
  /// - Throws: ``UnmatchedRequest`` when nothing answers.
  private func route(_ request: HTTPRequest, sample: HTTPResponse?) throws -> (
    StubResponse, call: Int
  ) {
    record(request)
    if let index = routes.firstIndex(where: {
      scenarioAdmits($0) && $0.matcher.matches(request)
    }) {
      routes[index].calls += 1
      advanceScenario(of: routes[index])
      return (routes[index].response, routes[index].calls)
    }
    if let fallback {
      return (.handler { request, _ in try await fallback(request) }, 1)
    }
    if answersWithSamples, let sample {
      return (.response(sample), 1)
    }
    if upstream != nil {
      return (.passthrough, 1)
    }
    unmatchedRequests.append(request)
    throw UnmatchedRequest(request: request, closestRoutes: closestRoutes(to: request))
  }

  private func noteForwarded(_ request: HTTPRequest) {
    forwardedRequests.append(request)
  }

  /// A sequence's answer for the `call`th call (1-based): its last answer once it runs out; a
  /// bare `500` for an empty sequence.
  private static func pick(from answers: [StubResponse], call: Int) -> StubResponse {
    // An empty sequence is the test's mistake: say so, rather than invent a 500 that the code
    // under test would take for the server's.
    guard let last = answers.last else { return StubResponse(.failure(EmptyStubSequence())) }
    return call <= answers.count ? answers[call - 1] : last
  }

  /// An answer that is what it says (a response, a stream, a pass-through, an error), or `nil`
  /// for one still to work out (a sequence, a handler, a hang).
  private static func leaf(_ kind: StubResponse.Kind) throws -> Resolved? {
    switch kind {
    case .response(let response): .whole(response)
    case .stream(let stream): .streamed(stream)
    case .passthrough: .passthrough
    case .failure(let error): throw error
    case .sequence, .handler, .hang: nil
    }
  }

  /// Work out an answer that has nothing to wait for (no delay, handler or hang), or `nil`.
  private static func resolveAtOnce(_ answer: StubResponse, call: Int, defaultDelay: Duration)
    throws -> Resolved?
  {
    guard (answer.delay ?? defaultDelay) <= .zero else { return nil }
    if let resolved = try leaf(answer.kind) {
      return resolved
    }
    guard case .sequence(let answers) = answer.kind else { return nil }
    return try resolveAtOnce(
      pick(from: answers, call: call), call: call, defaultDelay: defaultDelay)
  }

  /// Work out an answer: pick from sequences, run handlers, wait out delays, throw errors.
  private static func resolve(
    _ answer: StubResponse, request: HTTPRequest, call: Int, clock: any Clock<Duration>,
    defaultDelay: Duration
  ) async throws -> Resolved {
    let delay = answer.delay ?? defaultDelay
    if delay > .zero {
      try await clock.sleep(for: delay.sleepable)
    }
    switch answer.kind {
    case .response, .stream, .passthrough, .failure:
      return try leaf(answer.kind) ?? .passthrough  // a leaf is never nil
    case .sequence(let answers):
      return try await resolve(
        pick(from: answers, call: call), request: request, call: call, clock: clock,
        defaultDelay: defaultDelay)
    case .handler(let handler):
      return try await resolve(
        try await handler(request, call), request: request, call: call, clock: clock,
        defaultDelay: defaultDelay)
    case .hang:
      try await stall()
      return .whole(HTTPResponse(status: 500))
    }
  }

  /// Routes ranked by how close they come to the request (first those that match it but wait
  /// for another scenario state, then by method, then by shared path segments), each with the
  /// clauses the request failed and the scenario state it waits for.
  private func closestRoutes(to request: HTTPRequest, limit: Int = 3) -> [String] {
    let scored = routes.enumerated().map { offset, route -> (score: Double, offset: Int) in
      let hint = route.matcher.hint
      let methodScore = hint.method.map { $0 == request.method ? 0.5 : 0 } ?? 0.25
      let pathScore = hint.path.map { PathTemplate.similarity($0, request.url.path) } ?? 0
      // Only a route its scenario held back can match here: the others were all tried.
      let heldBack = !scenarioAdmits(route) && route.matcher.matches(request)
      return ((heldBack ? 2 : 0) + methodScore + pathScore, offset)
    }
    // Only the routes shown are asked why they did not match: a JSON difference is not free.
    return scored.sorted { ($0.score, -$0.offset) > ($1.score, -$1.offset) }.prefix(limit).map {
      let route = routes[$0.offset]
      let reasons = route.matcher.mismatches(request) + [scenarioMiss(of: route)].compactMap { $0 }
      let misses = reasons.map { "\n    - \($0)" }.joined()
      let shown = route.shownMatcher(redactedBy: request.reportRedaction)
      return "\(shown) (registered at \(route.location.short))\(misses)"
    }
  }
}

/// What a route answering with `StubResponse.sequence([])` throws: the sequence has no answer.
struct EmptyStubSequence: Error, CustomStringConvertible, LocalizedError {
  var description: String {
    "StubResponse.sequence([]) has no answer to give: a sequence needs at least one answer."
  }

  var errorDescription: String? { description }
}
