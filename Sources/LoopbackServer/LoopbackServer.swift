import Errand
import Foundation

/// A small HTTP/1.1 server on 127.0.0.1 for tests, in the spirit of OkHttp's MockWebServer:
/// each test starts its own on a free port, scripts its responses (or routes them with a
/// closure), and reads back what it received. For code that owns its own `URLSession` (an image
/// loader, a vendor SDK) and can only be tested against a real socket.
///
/// ```swift
/// let server = try LoopbackServer()
/// defer { server.stop() }
/// server.enqueue(.json(#"{"name":"Rex"}"#), ScriptedResponse(status: 503))
/// let (data, _) = try await URLSession.shared.data(from: server.url("/dogs/1"))
/// let request = try await server.takeRequest()      // method, path, headers, body
/// ```
///
/// Responses can misbehave as servers do (``ScriptedResponse/Ending``): drop the connection
/// mid-body, reset it, stall before the headers or mid-body, send a body slowly, or send bytes that
/// are not HTTP at all (``ScriptedResponse/raw(_:)``). No TLS. Linux and Apple platforms (BSD
/// sockets).
///
/// Every connection is handled on its own thread, so slow or broken responses never hold up
/// others, and is closed after one response unless that response keeps it open
/// (``ScriptedResponse/keepingConnectionOpen()``); ``RecordedRequest/connection`` says which
/// connection a request came on. The server stops when `stop()` is called or when it is
/// released.
public final class LoopbackServer: Sendable {
  /// The port the server listens on.
  public let port: UInt16
  /// `http://127.0.0.1:<port>`.
  public let baseURL: URL

  let state: Locked<State>
  /// Wakes the server's threads when it stops.
  private let stopSignal: StopSignal
  /// The socket file this server made, until it is removed: by ``stop()``, before it returns,
  /// or by the accept thread when it ends; taken out by whichever comes first, so that it is
  /// removed once (a file made at the path since, which may have the same identity once the
  /// first is gone, is never removed).
  private let socketFile: Locked<SocketFile?>

  /// A socket file at `path`, with the identity it had when it was made.
  struct SocketFile: Sendable {
    var path: String
    var made: Socket.FileIdentity?

    /// Remove the file in `holder`, if it is still there and no one removed it yet. Removed
    /// under the lock: a caller that finds it gone (`stop()`, racing the accept thread) returns
    /// only once the other has removed it, not merely taken it out of `holder` (a server
    /// started again on the path at once found the file still there, "address in use").
    static func removeOnce(_ holder: Locked<SocketFile?>) {
      holder.withLock { file in
        guard let current = file else { return }
        Socket.removeSocketFile(at: current.path, made: current.made)
        file = nil
      }
    }
  }

  struct State {
    var stopped = false
    var requests: [RecordedRequest] = []
    var earlyDisconnects: [ContinuousClock.Instant] = []
    var malformedRequests: [String] = []
    var taken = 0
    var connections = 0
    /// Connections being served now, and the most at once so far.
    var openConnections = 0
    var peakOpenConnections = 0
    /// Tasks in a `wait…` method, each resumed when its condition holds.
    var waiters = ConditionWaiters<State>()
  }

  /// The responses ``enqueue(_:)`` lined up, for a server created with ``init()``.
  private let queue: Locked<[ScriptedResponse]>

  /// Start a server that answers requests with the responses ``enqueue(_:)`` lines up, in order;
  /// when none is left it answers `500` with the body `nothing enqueued`.
  /// - Throws: When no port can be bound.
  public convenience init() throws {
    let queue = Locked<[ScriptedResponse]>([])
    try self.init(queue: queue) { _ in
      queue.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        ?? ScriptedResponse(status: 500, body: Data("nothing enqueued".utf8))
    }
  }

  /// Start a server that answers every request with `handler`.
  /// - Parameter handler: Called on the connection's thread with each request; returns the script.
  /// - Throws: When no port can be bound.
  public convenience init(_ handler: @escaping @Sendable (RecordedRequest) -> ScriptedResponse)
    throws
  {
    try self.init(queue: Locked([]), handler)
  }

  /// Start a server on a Unix domain socket at `path` that answers every request with
  /// `handler`: for a client that reaches a local daemon over a socket. The socket file must not
  /// exist; the server creates it and removes it when it stops. ``port`` is 0 and ``baseURL``
  /// is `http://localhost`: a client reaches the server only through the socket.
  /// - Parameters:
  ///   - path: An absolute path of at most 103 bytes, in a directory the test owns.
  ///   - handler: Called on the connection's thread with each request; returns the script.
  /// - Throws: When the socket cannot be created there (the file exists, the path is too long).
  ///
  /// Once stopped, the server removes the socket file only if it is still the one it made: a
  /// file put in its place since is left alone.
  public convenience init(
    unixSocketAt path: String,
    _ handler: @escaping @Sendable (RecordedRequest) -> ScriptedResponse
  ) throws {
    let (listener, file) = try Socket.makeUnixListener(path: path)
    try self.init(
      queue: Locked([]), listener: listener, port: 0, baseURL: "http://localhost",
      socketFile: (path, file), handler)
  }

  private convenience init(
    queue: Locked<[ScriptedResponse]>,
    _ handler: @escaping @Sendable (RecordedRequest) -> ScriptedResponse
  ) throws {
    let (listener, port) = try Socket.makeListener()
    try self.init(
      queue: queue, listener: listener, port: port, baseURL: "http://127.0.0.1:\(port)",
      socketFile: nil, handler)
  }

  /// Start serving on `listener`: with `served`, the transport that answers instead of
  /// `handler` (its `serverURL` set here); at most `maximumConnections` connections at once,
  /// others waiting in the listen queue until one ends (`nil`: no limit).
  init(
    queue: Locked<[ScriptedResponse]>, listener: Int32, port: UInt16, baseURL: String,
    socketFile: (path: String, made: Socket.FileIdentity?)?, served: ServedTransport? = nil,
    maximumConnections: Int? = nil,
    _ handler: @escaping @Sendable (RecordedRequest) -> ScriptedResponse
  ) throws {
    self.queue = queue
    self.port = port
    guard let baseURL = URL(string: baseURL) else {
      if let socketFile { Socket.removeSocketFile(at: socketFile.path, made: socketFile.made) }
      Socket.release(listener)
      throw Socket.Failure(call: "URL", code: 0)
    }
    self.baseURL = baseURL
    let socketFile = Locked(socketFile.map { SocketFile(path: $0.path, made: $0.made) })
    self.socketFile = socketFile
    var served = served
    served?.serverURL = baseURL
    let state = Locked(State())
    self.state = state
    let stop = StopSignal()
    self.stopSignal = stop
    // Written when a connection ends, for an accept loop that waits for a free slot.
    let slotFreed = WakePipe()
    Thread.detachNewThread { [served] in
      while true {
        if let maximumConnections, state.withLock({ $0.openConnections >= maximumConnections }) {
          guard Socket.wait(-1, orWake: slotFreed, orStop: stop) != .stopped else { break }
          slotFreed.drain()
          continue
        }
        let readiness = Socket.wait(listener, orStop: stop, milliseconds: -1)
        guard readiness != .stopped else { break }
        guard readiness == .readable, let fd = Socket.acceptConnection(listener) else {
          // Out of descriptors, say: wait a little instead of spinning on a readable listener.
          _ = Socket.wait(-1, orStop: stop, milliseconds: 10)
          continue
        }
        let number = state.change(\.waiters) { state -> Int in
          state.connections += 1
          state.openConnections += 1
          state.peakOpenConnections = max(state.peakOpenConnections, state.openConnections)
          return state.connections
        }
        Thread.detachNewThread {
          Connection(
            fd: fd, number: number, state: state, stop: stop, served: served, handler: handler
          ).run()
          state.change(\.waiters) { $0.openConnections -= 1 }
          slotFreed.wake()
        }
      }
      // Before the listener closes: once a connection is refused, the file is dealt with.
      SocketFile.removeOnce(socketFile)
      Socket.release(listener)
    }
  }

  /// Start a server that answers requests with these responses in order, repeating the last.
  /// - Parameter responses: The scripts, at least one.
  /// - Throws: When no port can be bound.
  public convenience init(responses: [ScriptedResponse]) throws {
    let counter = Locked(0)
    try self.init { _ in
      let index = counter.withLock { count -> Int in
        defer { count += 1 }
        return count
      }
      return responses.isEmpty
        ? ScriptedResponse(status: 500) : responses[min(index, responses.count - 1)]
    }
  }

  deinit {
    stop()
  }

  /// A URL on this server.
  /// - Parameter path: The path and query, for example `/dogs?page=2`.
  /// - Returns: The URL.
  public func url(_ path: String) -> URL {
    URL(string: baseURL.absoluteString + path) ?? baseURL
  }

  /// Every request received so far, in order of arrival.
  public var requests: [RecordedRequest] {
    state.withLock { $0.requests }
  }

  /// Why each request the server could not read was refused, in order: a request it cannot
  /// frame for certain (a chunk size or `Content-Length` that is empty, negative or too large, both
  /// `Transfer-Encoding` and `Content-Length`, a head longer than 64 KB) is answered
  /// `400 Bad Request`, its connection closed, and the server goes on serving others.
  public var malformedRequests: [String] {
    state.withLock { $0.malformedRequests }
  }

  /// How many clients closed their connection before the response was complete.
  public var earlyDisconnects: Int {
    state.withLock { $0.earlyDisconnects.count }
  }

  /// When the server saw each client close its connection before the response was complete, in
  /// order: seen on the connection's own thread within 50 milliseconds of the close, so a test
  /// can tell when a client gave up even while Swift's cooperative threads are busy.
  public var earlyDisconnectTimes: [ContinuousClock.Instant] {
    state.withLock { $0.earlyDisconnects }
  }

  /// Wait until at least `count` requests have arrived.
  ///
  /// Returns as soon as the request that makes up the count is recorded; the timeout only
  /// guards against a test that would otherwise hang.
  /// - Parameters:
  ///   - count: How many requests to wait for.
  ///   - timeout: The longest to wait, in real time: 60 seconds by default.
  /// - Returns: `true` when they arrived in time.
  public func waitForRequests(_ count: Int = 1, timeout: Duration = .seconds(60)) async -> Bool {
    await waitUntil(timeout: timeout) { $0.requests.count >= count }
  }

  /// Wait until a client has closed its connection before the response was complete.
  ///
  /// Returns as soon as the disconnect is seen; the timeout only guards against a test that
  /// would otherwise hang.
  /// - Parameter timeout: The longest to wait, in real time: 60 seconds by default.
  /// - Returns: `true` when a disconnect was seen in time.
  public func waitForEarlyDisconnect(timeout: Duration = .seconds(60)) async -> Bool {
    await waitUntil(timeout: timeout) { !$0.earlyDisconnects.isEmpty }
  }

  /// Line up responses for the next requests, in order (for a server created with ``init()``).
  /// - Parameter responses: The scripts.
  public func enqueue(_ responses: ScriptedResponse...) {
    queue.withLock { $0 += responses }
  }

  /// The next request the server received that no earlier call returned, waiting for it to
  /// arrive: requests come back one by one, in order of arrival.
  /// - Parameter timeout: The longest to wait, in real time: 60 seconds by default.
  /// - Returns: The request.
  /// - Throws: ``NoRequest`` when none arrives in time.
  public func takeRequest(timeout: Duration = .seconds(60)) async throws -> RecordedRequest {
    let arrived = await waitUntil(timeout: timeout) { $0.requests.count > $0.taken }
    guard arrived else {
      throw NoRequest(waited: timeout, received: requests.count)
    }
    return state.withLock { state in
      state.taken += 1
      return state.requests[state.taken - 1]
    }
  }

  /// No request arrived within ``takeRequest(timeout:)``'s time.
  public struct NoRequest: Error, CustomStringConvertible {
    /// How long the call waited.
    public var waited: Duration
    /// How many requests the server had received in all.
    public var received: Int

    /// What happened, in one line.
    public var description: String {
      "LoopbackServer received no new request within \(waited) (\(received) received in all)."
    }
  }

  /// Stop accepting connections. Connections in progress finish their current step and close.
  /// A Unix socket's file is removed before this returns, so a server can start again on its
  /// path at once.
  public func stop() {
    state.withLock { $0.stopped = true }
    stopSignal.signal()
    SocketFile.removeOnce(socketFile)
  }

  /// Wait until `condition` holds, without polling (see `ConditionWaiters`).
  private func waitUntil(
    timeout: Duration, _ condition: @escaping @Sendable (State) -> Bool
  ) async -> Bool {
    await state.wait(on: \.waiters, timeout: timeout, until: condition)
  }

}

/// A port on 127.0.0.1 that refuses connections for as long as this value lives: bound, so no
/// other server can take it, but not listening.
public final class RefusingPort: Sendable {
  /// The port.
  public let port: UInt16
  private let fd: Int32

  /// Reserve a port.
  /// - Throws: When no port can be bound.
  public init() throws {
    (fd, port) = try Socket.makeBound()
  }

  deinit {
    Socket.release(fd)
  }

  /// `http://127.0.0.1:<port>`.
  public var url: URL {
    URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/")
  }
}
