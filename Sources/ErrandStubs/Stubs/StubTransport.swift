@_spi(Transports) import Errand
import Foundation

/// A `Transport` that answers from routes registered by the test, without a network.
///
/// Each instance has its own routes, journal and clock, so parallel tests never share state.
///
/// ```swift
/// let stub = StubTransport()
/// await stub.on(.get, "/v1/dogs", .json([Dog(name: "Rex")]))
/// await stub.on(.get, "/v1/dogs/{id}", .fixture("dog.json"))
/// await stub.on(.get, "/v1/flaky", .sequence([.status(503), .json(Dog(name: "Rex"))]))
/// let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, transport: stub)
/// let dogs = try await client.send(Endpoint<[Dog]>(path: "dogs"))
/// let sent = await stub.requests          // every request the stub received
/// ```
///
/// Routes are tried in the order they were registered and the first match answers. A request
/// that matches none goes to the handler given at creation, or to the endpoint's sample when the
/// stub answers with samples, or else throws ``UnmatchedRequest``, which shows the request and
/// the closest routes.
public actor StubTransport: Transport {
  /// One registered route and where it was registered.
  struct Route: Sendable {
    var matcher: RequestMatcher
    var response: StubResponse
    var location: CallSite
    var calls = 0
  }

  var routes: [Route] = []
  private let fallback: (@Sendable (HTTPRequest) async throws -> StubResponse)?
  private let defaultDelay: Duration
  private let clock: any Clock<Duration>
  private let answersWithSamples: Bool
  private let upstream: (any Transport)?

  /// Every request received, in order, with its body.
  public internal(set) var requests: [HTTPRequest] = []
  /// The requests the stub sent on to its upstream (``StubResponse/passthrough`` routes, and
  /// requests no route matched when the stub has an upstream), in order; they are in
  /// ``requests`` too.
  public internal(set) var forwardedRequests: [HTTPRequest] = []
  /// The requests no route answered (each also threw ``UnmatchedRequest``), in order; the
  /// `.stubbed` test trait reports them when the test ends.
  public internal(set) var unmatchedRequests: [HTTPRequest] = []
  /// How many requests ``nextRequest(timeout:)`` has handed out.
  var taken = 0
  /// Callers of ``nextRequest(timeout:)`` waiting for a request.
  var waiters: [(id: UUID, continuation: CheckedContinuation<HTTPRequest, any Error>)] = []

  /// Create a stub with no routes; add them with ``on(_:_:_:fileID:filePath:line:column:)``.
  /// - Parameters:
  ///   - delay: The delay before every answer that sets none of its own (Moya's `.delayed`);
  ///     none by default.
  ///   - clock: The clock that delays run on; pass a ``TestClock`` or ``ImmediateClock`` so long
  ///     delays take no wall time.
  ///   - samples: Answer requests that match no route with their endpoint's `sample`.
  public init(
    delay: Duration = .zero, clock: any Clock<Duration> = ContinuousClock(), samples: Bool = false
  ) {
    self.init(routes: [], fallback: nil, delay: delay, clock: clock, samples: samples)
  }

  /// Create a stub that answers every request that no route matches with a closure.
  /// - Parameters:
  ///   - delay: The delay before every answer that sets none of its own.
  ///   - clock: The clock that delays run on.
  ///   - handler: Sees the request and returns the answer.
  public init(
    delay: Duration = .zero, clock: any Clock<Duration> = ContinuousClock(),
    _ handler: @escaping @Sendable (HTTPRequest) async throws -> StubResponse
  ) {
    self.init(routes: [], fallback: handler, delay: delay, clock: clock, samples: false)
  }

  /// Create a stub that sends every request its routes do not answer on to `upstream`: partial
  /// stubbing over a live API or a cassette.
  ///
  /// ```swift
  /// let stub = StubTransport(passthrough: URLSessionTransport())
  /// await stub.on(.get, "/v1/dogs/7", .status(404))     // stubbed; everything else is real
  /// ```
  /// - Parameters:
  ///   - upstream: The transport that answers what the routes do not.
  ///   - delay: The delay before every stubbed answer that sets none of its own.
  ///   - clock: The clock that delays run on.
  public init(
    passthrough upstream: any Transport, delay: Duration = .zero,
    clock: any Clock<Duration> = ContinuousClock()
  ) {
    self.init(
      routes: [], fallback: nil, delay: delay, clock: clock, samples: false, upstream: upstream)
  }

  init(
    routes: [Route], fallback: (@Sendable (HTTPRequest) async throws -> StubResponse)?,
    delay: Duration, clock: any Clock<Duration>, samples: Bool, upstream: (any Transport)? = nil
  ) {
    self.routes = routes
    self.fallback = fallback
    self.defaultDelay = delay
    self.clock = clock
    self.answersWithSamples = samples
    self.upstream = upstream
  }

  /// A stub that answers every request with its endpoint's sample response (Moya's
  /// `immediatelyStub` over `sampleData`); a request whose endpoint has no sample throws
  /// ``UnmatchedRequest``.
  /// - Parameters:
  ///   - delay: The delay before every answer.
  ///   - clock: The clock that delays run on.
  /// - Returns: The stub.
  public static func samples(
    delay: Duration = .zero, clock: any Clock<Duration> = ContinuousClock()
  )
    -> StubTransport
  {
    StubTransport(delay: delay, clock: clock, samples: true)
  }

  /// Answer requests with this method and URL path.
  /// - Parameters:
  ///   - method: The method to match.
  ///   - path: The URL path, exact or a template such as `/v1/dogs/{id}`.
  ///   - response: The answer.
  ///   - fileID: Where the route is registered; filled in by the compiler.
  ///   - filePath: Where the route is registered; filled in by the compiler.
  ///   - line: Where the route is registered; filled in by the compiler.
  ///   - column: Where the route is registered; filled in by the compiler.
  public func on(
    _ method: HTTPMethod, _ path: String, _ response: StubResponse, fileID: String = #fileID,
    filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) {
    on(
      .method(method) && .path(path), response, fileID: fileID, filePath: filePath, line: line,
      column: column)
  }

  /// Answer requests that a matcher accepts.
  /// - Parameters:
  ///   - matcher: Which requests to answer.
  ///   - response: The answer.
  ///   - fileID: Where the route is registered; filled in by the compiler.
  ///   - filePath: Where the route is registered; filled in by the compiler.
  ///   - line: Where the route is registered; filled in by the compiler.
  ///   - column: Where the route is registered; filled in by the compiler.
  public func on(
    _ matcher: RequestMatcher, _ response: StubResponse, fileID: String = #fileID,
    filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) {
    var added = StubRoutes()
    added.on(matcher, response, fileID: fileID, filePath: filePath, line: line, column: column)
    routes += added.routes
  }

  /// Record the request and answer it: from the first matching route, else the handler, else the
  /// endpoint's sample when the stub answers with samples.
  /// - Parameter request: The request.
  /// - Returns: The answer, with the request's URL as its URL unless it has one.
  /// - Throws: The answer's error, `CancellationError` when the task is cancelled while the
  ///   answer waits, or ``UnmatchedRequest``; `APIError.invalidRequest` for a request that fails
  ///   `HTTPRequest.validate()`, as Errand's own transports do.
  public nonisolated func send(_ request: HTTPRequest) async throws -> HTTPResponse {
    try await exchange(request, streams: false, deadline: nil, progress: nil)
  }

  /// Record the request and answer it as ``send(_:)`` does, returning at the head: the body of a
  /// ``StubResponse/chunks(_:interval:status:headers:failingWith:)`` or
  /// ``StubResponse/events(_:interval:failingWith:)`` answer arrives chunk by chunk on the stub's
  /// clock; any other answer's body arrives as one chunk.
  /// - Parameter request: The request.
  /// - Returns: The head, with its body in `bodyStream`.
  /// - Throws: What ``send(_:)`` throws before the head.
  public nonisolated func stream(_ request: HTTPRequest) async throws -> HTTPResponse {
    try await exchange(request, streams: true, deadline: nil, progress: nil)
  }

  /// Answer as ``send(_:)`` or ``stream(_:)`` do, within `deadline`: an answer with nothing to
  /// wait for comes back at once; one with delays or handlers is worked out in one task raced
  /// against the deadline and the caller's cancellation; the upstream gets the deadline.
  /// - Parameters:
  ///   - request: The request.
  ///   - streams: Whether to return at the head.
  ///   - deadline: When to give up; `nil` for never.
  ///   - progress: Who hears about the request body being sent, for this exchange only.
  /// - Returns: The answer, or its head.
  /// - Throws: What ``send(_:)`` throws, `APIError.timedOut` or `CancellationError`.
  @_spi(Transports) public nonisolated func exchange(
    _ request: HTTPRequest, streams: Bool, deadline: RequestDeadline?,
    progress: (@Sendable (TransferProgress) -> Void)?
  ) async throws -> HTTPResponse {
    if deadline != nil {
      // As a raced call would: a caller cancelled before it starts gets no answer.
      try Task.checkCancellation()
    }
    // As Errand's own transports do: a request that could not go on the wire never gets an answer.
    try request.validate()
    let request = try request.readingBodyFile()
    if let observer = progress, let body = request.body {
      observer(TransferProgress(completedBytes: body.count, expectedBytes: body.count))
    }
    let (answer, call) = try await route(request)
    let resolved: Resolved
    if let atOnce = try Self.resolveAtOnce(answer, call: call, defaultDelay: defaultDelay) {
      resolved = atOnce
    } else {
      resolved = try await Self.bounded(by: deadline) { [clock, defaultDelay] in
        try await Self.resolve(
          answer, request: request, call: call, clock: clock, defaultDelay: defaultDelay)
      }
    }
    let limit = request.maximumResponseSize ?? .max
    switch resolved {
    case .passthrough:
      guard let upstream else { throw NoPassthrough(request: request) }
      await noteForwarded(request)
      return try await upstream.exchange(
        request, streams: streams, deadline: deadline, progress: progress)
    case .whole(var response):
      response.url = response.url ?? request.url
      guard response.body.count <= limit else { throw URLError(.dataLengthExceedsMaximum) }
      return streams ? response.streamingBody() : response
    case .streamed(var stream):
      stream.head.url = stream.head.url ?? request.url
      let head = feed(stream, limit: limit)
      if streams {
        return head
      }
      return try await Self.bounded(by: deadline) { try await head.collectingBody(upTo: limit) }
    }
  }

  /// Wait for `operation` within `deadline` (racing it when there is one).
  private static func bounded<Value: Sendable>(
    by deadline: RequestDeadline?, _ operation: @escaping @Sendable () async throws -> Value
  ) async throws -> Value {
    guard let deadline else { return try await operation() }
    return try await deadline.race(operation)
  }

  /// The head of a streamed answer, its body written chunk by chunk on the stub's clock by a task
  /// that stops when the reader does; a body over `limit` ends with
  /// `URLError(.dataLengthExceedsMaximum)`.
  private nonisolated func feed(_ stream: StubStream, limit: Int) -> HTTPResponse {
    let feeding = Locked<Task<Void, Never>?>(nil)
    let (body, writer) = HTTPBody.makeStream(
      expectedLength: nil, onCancel: { feeding.withLock { $0 }?.cancel() })
    let clock = clock
    let task = Task {
      var sent = 0
      do {
        for (index, chunk) in stream.chunks.enumerated() {
          if index > 0, stream.interval > .zero {
            try await clock.sleep(for: stream.interval)
          }
          sent += chunk.count
          guard sent <= limit else { throw URLError(.dataLengthExceedsMaximum) }
          writer.write(chunk)
        }
        if stream.stalls {
          try await Self.stall()
        }
        writer.finish(throwing: stream.failure)
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

  /// Record the request and find what answers it: the first matching route (counting the call),
  /// else the handler, else the endpoint's sample when the stub answers with samples, else the
  /// upstream.
  /// - Throws: ``UnmatchedRequest`` when nothing answers.
  private func route(_ request: HTTPRequest) throws -> (StubResponse, call: Int) {
    record(request)
    if let index = routes.firstIndex(where: { $0.matcher.matches(request) }) {
      routes[index].calls += 1
      return (routes[index].response, routes[index].calls)
    }
    if let fallback {
      return (.handler { request, _ in try await fallback(request) }, 1)
    }
    if answersWithSamples, let sample = RequestContext.current?.sample {
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

  /// A sequence's answer for the `call`th call (1-based): its last answer once it runs out;
  /// `nil` for an empty sequence.
  private static func pick(from answers: [StubResponse], call: Int) -> StubResponse? {
    guard let last = answers.last else { return nil }
    return call <= answers.count ? answers[call - 1] : last
  }

  /// Work out an answer that has nothing to wait for (no delay, handler or hang), or `nil`.
  private static func resolveAtOnce(_ answer: StubResponse, call: Int, defaultDelay: Duration)
    throws -> Resolved?
  {
    guard (answer.delay ?? defaultDelay) <= .zero else { return nil }
    switch answer.kind {
    case .response(let response):
      return .whole(response)
    case .stream(let stream):
      return .streamed(stream)
    case .passthrough:
      return .passthrough
    case .failure(let error):
      throw error
    case .sequence(let answers):
      guard let next = pick(from: answers, call: call) else {
        return .whole(HTTPResponse(status: 500))
      }
      return try resolveAtOnce(next, call: call, defaultDelay: defaultDelay)
    case .handler, .hang:
      return nil
    }
  }

  /// Work out an answer: pick from sequences, run handlers, wait out delays, throw errors.
  private static func resolve(
    _ answer: StubResponse, request: HTTPRequest, call: Int, clock: any Clock<Duration>,
    defaultDelay: Duration
  ) async throws -> Resolved {
    let delay = answer.delay ?? defaultDelay
    if delay > .zero {
      try await clock.sleep(for: delay)
    }
    switch answer.kind {
    case .response(let response):
      return .whole(response)
    case .stream(let stream):
      return .streamed(stream)
    case .passthrough:
      return .passthrough
    case .failure(let error):
      throw error
    case .sequence(let answers):
      guard let next = pick(from: answers, call: call) else {
        return .whole(HTTPResponse(status: 500))
      }
      return try await resolve(
        next, request: request, call: call, clock: clock, defaultDelay: defaultDelay)
    case .handler(let handler):
      return try await resolve(
        try await handler(request, call), request: request, call: call, clock: clock,
        defaultDelay: defaultDelay)
    case .hang:
      try await stall()
      return .whole(HTTPResponse(status: 500))
    }
  }

  /// Routes ranked by how close they come to the request (method, then shared path segments),
  /// each with the clauses the request failed.
  private func closestRoutes(to request: HTTPRequest, limit: Int = 3) -> [String] {
    let scored = routes.enumerated().map { offset, route -> (score: Double, offset: Int) in
      let hint = route.matcher.hint
      let methodScore = hint.method.map { $0 == request.method ? 0.5 : 0 } ?? 0.25
      let pathScore = hint.path.map { PathTemplate.similarity($0, request.url.path) } ?? 0
      return (methodScore + pathScore, offset)
    }
    // Only the routes shown are asked why they did not match: a JSON difference is not free.
    return scored.sorted { ($0.score, -$0.offset) > ($1.score, -$1.offset) }.prefix(limit).map {
      let route = routes[$0.offset]
      let misses = route.matcher.mismatches(request).map { "\n    - \($0)" }.joined()
      return "\(route.matcher) (registered at \(route.location.short))\(misses)"
    }
  }
}

/// A route answered ``StubResponse/passthrough``, but the stub has no upstream to send it to.
public struct NoPassthrough: Error, CustomStringConvertible, LocalizedError {
  /// The request, secrets hidden when printed.
  public var request: HTTPRequest

  /// What happened and what to do.
  public var description: String {
    "StubTransport has no upstream for the passthrough route that matched \(request); "
      + "create it with StubTransport(passthrough:)"
  }

  /// The same as ``description``.
  public var errorDescription: String? { description }
}

/// Ends its own waits at the client's deadline, so the client calls it without a racing task.
@_spi(Transports) extension StubTransport: DeadlineEnforcingTransport {}
