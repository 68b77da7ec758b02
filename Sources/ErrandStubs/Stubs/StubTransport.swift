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
    /// The failure last reported for the route, so that verifying again does not repeat it.
    var reported: String?
  }

  var routes: [Route] = []
  /// Each scenario's state, for the scenarios not in ``StubScenario/started``.
  package var scenarioStates: [String: String] = [:]
  let fallback: (@Sendable (HTTPRequest) async throws -> StubResponse)?
  let defaultDelay: Duration
  let clock: any Clock<Duration>
  let answersWithSamples: Bool
  let upstream: (any Transport)?
  /// Whether a redirect's `Location` is answered in turn, as Errand's transports follow it.
  let followsRedirects: Bool
  /// The trust policy the stub was made with, as a real transport would be: for a test that
  /// checks what the app's code gives its transport. ``StubResponse/pinMismatch`` names its
  /// pins. `nil` for a stub made without one.
  public nonisolated let trust: TrustPolicy?
  /// The connection options the stub was made with, as a real transport would be; `nil` for a
  /// stub made without them.
  public nonisolated let connection: ConnectionOptions?

  /// Whether ``current`` has handed this stub out as a `.stubbed` test's own: such a stub
  /// refuses requests sent while another test's stub is the current one.
  nonisolated let isTestScoped = Locked(false)
  /// Whether the `.stubbed` test this stub belongs to has ended: such a stub refuses every
  /// request, whoever sends it (a test without the trait, a detached task).
  nonisolated let hasTestEnded = Locked(false)

  /// Every request received, in order, with its body.
  public internal(set) var requests: [HTTPRequest] = []
  /// The requests the stub sent on to its upstream (``StubResponse/passthrough`` routes, and
  /// requests no route matched when the stub has an upstream), in order; they are in
  /// ``requests`` too.
  public internal(set) var forwardedRequests: [HTTPRequest] = []
  /// The requests no route answered (each also threw ``UnmatchedRequest``), in order; the
  /// `.stubbed` test trait reports them when the test ends.
  public internal(set) var unmatchedRequests: [HTTPRequest] = []
  /// Every request received with its answer, in order: ``exchanges``.
  var journal: [StubExchange] = []
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
  ///   - followsRedirects: Answer a redirect's `Location` in turn (by the rules Errand's
  ///     transports follow: secrets stay behind at another origin, no HTTPS-to-HTTP), so code
  ///     sees what it would see in production; off by default, so a test sees the redirect.
  public init(
    delay: Duration = .zero, clock: any Clock<Duration> = ContinuousClock(), samples: Bool = false,
    followsRedirects: Bool = false
  ) {
    self.init(
      routes: [], fallback: nil, delay: delay, clock: clock, samples: samples,
      followsRedirects: followsRedirects)
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

  /// Create a stub made with the trust policy and connection options the app's code gives a
  /// real transport: it checks them as `CurlTransport` does (a malformed option, or a file that
  /// cannot be read, throws the same error), keeps them for the test to compare
  /// (``trust``, ``connection``), and names the policy's pins when a route answers
  /// ``StubResponse/pinMismatch``.
  ///
  /// ```swift
  /// let stub = try StubTransport(trust: AppNetwork.trustPolicy)
  /// await stub.on(.get, "/v1/me", .pinMismatch)
  /// #expect(stub.trust?.pins.first?.hosts == ["api.example.com"])
  /// ```
  /// - Parameters:
  ///   - trust: The trust policy.
  ///   - connection: The connection options; libcurl's defaults by default.
  ///   - delay: The delay before every answer that sets none of its own.
  ///   - clock: The clock that delays run on.
  /// - Throws: `InvalidConnectionOption` for a part of either that a real transport refuses.
  public init(
    trust: TrustPolicy, connection: ConnectionOptions = ConnectionOptions(),
    delay: Duration = .zero, clock: any Clock<Duration> = ContinuousClock()
  ) throws {
    try connection.validate()
    _ = try LoadedTrust(trust)
    self.init(
      routes: [], fallback: nil, delay: delay, clock: clock, samples: false, trust: trust,
      connection: connection)
  }

  init(
    routes: [Route], fallback: (@Sendable (HTTPRequest) async throws -> StubResponse)?,
    delay: Duration, clock: any Clock<Duration>, samples: Bool, upstream: (any Transport)? = nil,
    followsRedirects: Bool = false, trust: TrustPolicy? = nil, connection: ConnectionOptions? = nil
  ) {
    self.trust = trust
    self.connection = connection
    self.followsRedirects = followsRedirects
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
}

/// Ends its own waits at the client's deadline, so the client calls it without a racing task.
extension StubTransport: ExchangeTransport {}

// Its waits (a delay, a handler, a passthrough) end when the call's client cancels the call.
extension StubTransport: CallCancellationAware {}
