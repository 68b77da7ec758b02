import Errand
import Foundation

/// A small HTTP/1.1 server on 127.0.0.1 for tests: each test starts its own on a free port,
/// scripts its responses, and reads back what it received.
///
/// ```swift
/// let server = try LoopbackServer { request in .json(#"{"name":"Rex"}"#) }
/// defer { server.stop() }
/// let client = APIClient(baseURL: server.baseURL, transport: URLSessionTransport())
/// ```
///
/// Every connection is answered with `Connection: close` and handled on its own thread, so slow or
/// broken responses never hold up others. The server stops when `stop()` is called or when it is
/// released.
public final class LoopbackServer: Sendable {
  /// The port the server listens on.
  public let port: UInt16
  /// `http://127.0.0.1:<port>`.
  public let baseURL: URL

  private let state: Locked<State>

  struct State {
    var stopped = false
    var requests: [RecordedRequest] = []
    var earlyDisconnects = 0
  }

  /// Start a server that answers every request with `handler`.
  /// - Parameter handler: Called on the connection's thread with each request; returns the script.
  /// - Throws: When no port can be bound.
  public init(_ handler: @escaping @Sendable (RecordedRequest) -> ScriptedResponse) throws {
    let (listener, port) = try Socket.makeListener()
    self.port = port
    guard let baseURL = URL(string: "http://127.0.0.1:\(port)") else {
      Socket.release(listener)
      throw Socket.Failure(call: "URL", code: 0)
    }
    self.baseURL = baseURL
    let state = Locked(State())
    self.state = state
    Thread.detachNewThread {
      while !state.withLock({ $0.stopped }) {
        guard Socket.waitReadable(listener, milliseconds: 50),
          let fd = Socket.acceptConnection(listener)
        else { continue }
        Thread.detachNewThread {
          Connection(fd: fd, state: state, handler: handler).run()
        }
      }
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

  /// How many clients closed their connection before the response was complete.
  public var earlyDisconnects: Int {
    state.withLock { $0.earlyDisconnects }
  }

  /// Wait until at least `count` requests have arrived.
  /// - Parameters:
  ///   - count: How many requests to wait for.
  ///   - timeout: The longest to wait.
  /// - Returns: `true` when they arrived in time.
  public func waitForRequests(_ count: Int = 1, timeout: Duration = .seconds(10)) async -> Bool {
    await waitUntil(timeout: timeout) { $0.requests.count >= count }
  }

  /// Wait until a client has closed its connection before the response was complete.
  /// - Parameter timeout: The longest to wait.
  /// - Returns: `true` when a disconnect was seen in time.
  public func waitForEarlyDisconnect(timeout: Duration = .seconds(10)) async -> Bool {
    await waitUntil(timeout: timeout) { $0.earlyDisconnects > 0 }
  }

  /// Stop accepting connections. Connections in progress finish their current step and close.
  public func stop() {
    state.withLock { $0.stopped = true }
  }

  private func waitUntil(timeout: Duration, _ condition: @escaping (State) -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
      if state.withLock({ condition($0) }) {
        return true
      }
      try? await Task.sleep(for: .milliseconds(5))
    }
    return state.withLock { condition($0) }
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
