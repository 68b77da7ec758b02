import Errand
import ErrandStubs
import Foundation

/// Serving a transport: a `StubTransport`'s routes, a cassette, or any `Transport`, over a real
/// socket, for a process that cannot be handed the transport itself (the app a UI test drives).
extension LoopbackServer {
  /// The most connections a server that serves a transport answers at once, unless told
  /// otherwise.
  public static let defaultMaximumConnections = 64

  /// Start a server on 127.0.0.1 that answers every request with `transport`: a `StubTransport`
  /// (its routes, delays on its clock, faults), a `CassetteTransport`, or any other `Transport`.
  /// Hand ``launchEnvironment`` to the other process; check what it sent where the test runs,
  /// through the transport's own journal (`StubTransport.requests`, `unusedRoutes`,
  /// `unmatchedRequests`, or the `.stubbed` trait, which reports them as it does in-process).
  ///
  /// ```swift
  /// let stub = StubTransport()
  /// await stub.on(.get, "/v1/dogs", .json([Dog(name: "Rex")]))
  /// let server = try LoopbackServer(serving: stub)
  /// app.launchEnvironment = server.launchEnvironment      // ERRAND_STUB_SERVER_URL
  /// ```
  ///
  /// Each request becomes an `HTTPRequest` whose URL is the server's URL (or `origin`) followed
  /// by the request's path and query, so routes match on the path the app sends (`/v1/dogs`).
  /// Its fields are the client's, but for those about the connection (`Host`, `Connection`,
  /// `Content-Length`, `Transfer-Encoding`, `Expect`…); its `redaction` is `redaction`. The
  /// answer goes back as it arrives: a whole body with `Content-Length` (none for `204` and
  /// `304`), a streamed one chunk by chunk with chunked encoding (to an HTTP/1.0 client, as it is,
  /// ended by the close), `Connection: close` always (one request per connection, so bytes after
  /// a request are never read as another); an answer to `HEAD` has no body, a `501` report
  /// included. A `Transport` that is not an `ExchangeTransport` is asked with `send(_:)`, so its
  /// answer goes out whole. The transport's `Content-Encoding` is left out: its body is already
  /// decoded.
  ///
  /// What the transport throws becomes what a socket can say:
  ///
  /// | The transport                                         | The other process sees              |
  /// | ----------------------------------------------------- | ----------------------------------- |
  /// | no route matches (`UnmatchedRequest`, a cassette's `noMatch`) | `501` with the report, secrets scrubbed; the stub lists it in `unmatchedRequests` |
  /// | a body that fails mid-way (`.droppedMidBody`, `.chunks(…, failingWith:)`) | the connection closed mid-body |
  /// | `.hang`, `.stalledAfterHeaders`, `URLError(.timedOut)` | nothing more until it leaves or the server stops |
  /// | `URLError(.networkConnectionLost)`                     | the connection reset (RST)          |
  /// | `URLError(.badServerResponse)`, `.cannotParseResponse` | bytes that are not HTTP             |
  /// | any other `URLError` (`.notConnectedToInternet`…)      | the connection closed, no response  |
  /// | `APIError.invalidRequest`                              | `400` with the reason               |
  /// | any other error (a handler that throws, a missing fixture) | `500` naming it, secrets scrubbed |
  ///
  /// Delays and streams run on the transport's clock. A socket cannot say "offline": code that
  /// must see `.notConnectedToInternet` itself is tested in-process.
  ///
  /// - Parameters:
  ///   - transport: Who answers.
  ///   - origin: The origin the server stands in for, such as `https://api.example.com`:
  ///     requests reach the transport with that scheme, host and port (routes and cassettes
  ///     written for the real API match as they are), and a `Location` on it is moved onto the
  ///     server so that a redirect never leads to the real API. Its path is not used. `nil`: the
  ///     server's own URL.
  ///   - redaction: Which headers, query values and body fields are secret: scrubbed from every
  ///     report the server sends back. The usual ones by default.
  ///   - maximumConnections: The most connections served at once (each has a thread); further
  ///     clients wait in the listen queue until one ends, so a client that holds connections
  ///     open cannot make the server start threads without bound.
  /// - Throws: When no port can be bound.
  public convenience init(
    serving transport: any Transport, standingInFor origin: URL? = nil,
    redaction: Redaction = .default,
    maximumConnections: Int = LoopbackServer.defaultMaximumConnections
  ) throws {
    let (listener, port) = try Socket.makeListener()
    let url = "http://127.0.0.1:\(port)"
    try self.init(
      queue: Locked([]), listener: listener, port: port, baseURL: url, socketFile: nil,
      served: ServedTransport(
        transport: transport, origin: origin, redaction: redaction,
        serverURL: URL(fileURLWithPath: "/")),
      maximumConnections: max(1, maximumConnections)
    ) { _ in ScriptedResponse(status: 500) }
  }

  /// Start a server on a Unix domain socket at `path` that answers every request with
  /// `transport`, as ``init(serving:standingInFor:redaction:maximumConnections:)`` does: for a
  /// process that reaches a local daemon over a socket. The socket file must not exist; the
  /// server creates it and removes it when it stops.
  /// - Parameters:
  ///   - path: An absolute path of at most 103 bytes, in a directory the test owns.
  ///   - transport: Who answers.
  ///   - origin: The origin the server stands in for; `nil` for `http://localhost`.
  ///   - redaction: Which secrets reports leave out.
  ///   - maximumConnections: The most connections served at once.
  /// - Throws: When the socket cannot be created there.
  public convenience init(
    unixSocketAt path: String, serving transport: any Transport, standingInFor origin: URL? = nil,
    redaction: Redaction = .default,
    maximumConnections: Int = LoopbackServer.defaultMaximumConnections
  ) throws {
    let (listener, file) = try Socket.makeUnixListener(path: path)
    try self.init(
      queue: Locked([]), listener: listener, port: 0, baseURL: "http://localhost",
      socketFile: (path, file),
      served: ServedTransport(
        transport: transport, origin: origin, redaction: redaction,
        serverURL: URL(fileURLWithPath: "/")),
      maximumConnections: max(1, maximumConnections)
    ) { _ in ScriptedResponse(status: 500) }
  }

  /// What to add to another process's environment so that it finds this server:
  /// `ERRAND_STUB_SERVER_URL` (`StubServerEnvironment.key`) set to ``baseURL``. Set it as an
  /// `XCUIApplication`'s `launchEnvironment`, or a child process's environment; the app reads
  /// it with `StubServerEnvironment.baseURL(in:replacing:)`. Empty for a server on a Unix
  /// socket, which no URL reaches.
  public var launchEnvironment: [String: String] {
    port == 0 ? [:] : [StubServerEnvironment.key: baseURL.absoluteString]
  }

  /// How many connections the server is serving now.
  package var openConnections: Int {
    state.withLock { $0.openConnections }
  }

  /// The most connections the server has served at once.
  package var peakOpenConnections: Int {
    state.withLock { $0.peakOpenConnections }
  }

  /// Wait until the server serves exactly `count` connections at once.
  /// - Parameters:
  ///   - count: How many.
  ///   - timeout: The longest to wait, in real time.
  /// - Returns: `true` when it did in time.
  package func waitForOpenConnections(_ count: Int, timeout: Duration = .seconds(60)) async -> Bool
  {
    await state.wait(on: \.waiters, timeout: timeout) { $0.openConnections == count }
  }
}
