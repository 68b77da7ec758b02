import Errand
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A `URLProtocol` that answers from a ``StubTransport``, for testing code that uses `URLSession`
/// directly (the classic `MockURLProtocol`, without its global state).
///
/// ```swift
/// let stub = StubTransport()
/// await stub.on(.get, "/v1/dogs", .json([Dog(name: "Rex")]))
/// let session = URLSession(configuration: StubURLProtocol.configuration(for: stub))
/// let (data, response) = try await session.data(from: URL(string: "https://api.example.com/v1/dogs")!)
/// ```
///
/// It is installed through the session configuration, never with `URLProtocol.registerClass`.
/// Every configuration gets a protocol class of its own that knows only its stub (and keeps it
/// alive), so two tests running in parallel never reach each other's stubs, and a session made
/// for a stub never reaches the network. Request bodies reach the stub even when URLSession
/// turns them into a stream, and a streamed answer (``StubResponse/chunks(_:interval:status:headers:failingWith:)``)
/// reaches URLSession chunk by chunk, failing mid-body when the stream does.
///
/// watchOS does not run custom `URLProtocol` classes, so a session configured this way would reach
/// the real network there: this type is unavailable on watchOS. Inject a ``StubTransport`` instead.
@available(
  watchOS, unavailable, message: "watchOS does not run custom URLProtocols; inject a StubTransport"
)
public class StubURLProtocol: URLProtocol {
  private var running: Task<Void, Never>?
  private var connection: ClientConnection?

  /// A configuration whose sessions answer every HTTP request from `stub`.
  /// - Parameters:
  ///   - stub: The stub that answers.
  ///   - base: The configuration to start from; ephemeral by default. It is copied, not changed.
  /// - Returns: A configuration to create sessions with.
  public static func configuration(
    for stub: StubTransport, base: URLSessionConfiguration = .ephemeral
  ) -> URLSessionConfiguration {
    let configuration = (base.copy() as? URLSessionConfiguration) ?? base
    configuration.protocolClasses = [StubURLProtocolRegistry.register(stub)]
    return configuration
  }

  /// The stub this protocol class answers from, while it exists.
  class var stub: StubTransport? {
    StubURLProtocolRegistry.stub(for: self)
  }

  /// Whether this class handles the request: every HTTP and HTTPS request, so that a session
  /// made for a stub never reaches the network.
  override public class func canInit(with request: URLRequest) -> Bool {
    guard let scheme = request.url?.scheme?.lowercased() else { return false }
    return ["http", "https"].contains(scheme)
  }

  /// The request unchanged.
  override public class func canonicalRequest(for request: URLRequest) -> URLRequest {
    request
  }

  /// Ask the stub and hand its answer to URLSession.
  override public func startLoading() {
    let connection = ClientConnection(self)
    self.connection = connection
    guard let stub = Self.stub else {
      connection.fail(URLError(.resourceUnavailable))
      return
    }
    let request: HTTPRequest
    do {
      request = try HTTPRequest(self.request)
    } catch {
      connection.fail(URLError(.badURL))
      return
    }
    running = Task {
      do {
        let response = try await stub.stream(request)
        guard connection.deliverHead(response, for: request.url) else { return }
        if let body = response.bodyStream {
          for try await chunk in body {
            connection.deliver(chunk)
          }
        }
        connection.finish()
      } catch is CancellationError {
        // Only stopLoading cancels this task; URLSession reports the cancellation itself.
      } catch {
        connection.fail(error)
      }
    }
  }

  /// Stop a delayed or hanging answer.
  override public func stopLoading() {
    connection?.close()
    running?.cancel()
  }
}

/// A protocol instance and its client, handed to the task that answers.
///
/// `@unchecked Sendable` is safe: the task only calls `URLProtocolClient` methods, which
/// swift-corelibs-foundation dispatches onto its own queues, and only under `gate` while the
/// connection is open; `close()` takes the same gate, so once `stopLoading` returns the client is
/// never called again (URLSession traps on calls for a task it has let go). On Apple platforms
/// the calls are performed on the run loop of the thread that started loading, as URLSession
/// expects, in the mode it was running then and in the common modes; the run loop is woken, since
/// it may be asleep waiting for input. `CFRunLoop` functions may be called from any thread. The
/// compiler cannot check it: it holds the `URLProtocol`, which swift-corelibs-foundation does
/// not make `Sendable`, and `open` is a stored `var` that only `gate` protects.
private final class ClientConnection: @unchecked Sendable {
  let owner: URLProtocol
  private let gate = NSLock()
  private var open = true
  #if !canImport(FoundationNetworking)
    private let runLoop: CFRunLoop
    private let modes: CFArray
  #endif

  /// Called from `startLoading()`, on the loader thread.
  init(_ owner: URLProtocol) {
    self.owner = owner
    #if !canImport(FoundationNetworking)
      runLoop = CFRunLoopGetCurrent()
      let current: CFRunLoopMode? = CFRunLoopCopyCurrentMode(runLoop)
      modes = ([current, CFRunLoopMode.commonModes].compactMap { $0?.rawValue }) as CFArray
    #endif
  }

  /// Stop every later call to the client.
  func close() {
    gate.withLock { open = false }
  }

  /// Hand over the head (and a body already whole); `false` when it cannot be expressed as an
  /// `HTTPURLResponse`, which fails the load.
  func deliverHead(_ response: HTTPResponse, for url: URL) -> Bool {
    guard let head = response.httpURLResponse(for: response.url ?? url) else {
      fail(URLError(.badServerResponse))
      return false
    }
    perform { [self] in
      owner.client?.urlProtocol(owner, didReceive: head, cacheStoragePolicy: .notAllowed)
    }
    deliver(response.body)
    return true
  }

  /// Hand over a chunk of the body, as its own `didLoad`.
  func deliver(_ chunk: Data) {
    guard !chunk.isEmpty else { return }
    perform { [self] in owner.client?.urlProtocol(owner, didLoad: chunk) }
  }

  func finish() {
    perform { [self] in owner.client?.urlProtocolDidFinishLoading(owner) }
  }

  func fail(_ error: any Error) {
    perform { [self] in owner.client?.urlProtocol(owner, didFailWithError: error) }
  }

  private func perform(_ work: @escaping @Sendable () -> Void) {
    let guarded: @Sendable () -> Void = { [self] in
      gate.withLock {
        if open {
          work()
        }
      }
    }
    #if canImport(FoundationNetworking)
      guarded()
    #else
      CFRunLoopPerformBlock(runLoop, modes, guarded)
      CFRunLoopWakeUp(runLoop)
    #endif
  }
}

/// Gives each configuration a protocol class of its own and remembers which stub it answers from.
@available(watchOS, unavailable)
enum StubURLProtocolRegistry {
  /// Protocol classes and their stubs. Each stub stays alive as long as the process, because a
  /// session configuration cannot say when it is done with its protocol class; a test creates
  /// one or two, so this costs little and a session never finds its stub gone.
  private static let state = Locked((next: 1, entries: [ObjectIdentifier: StubTransport]()))

  /// A fresh protocol class that answers from `stub`.
  static func register(_ stub: StubTransport) -> StubURLProtocol.Type {
    state.withLock { state in
      let type = slot(state.next, SlotEnd.self)
      state.next += 1
      state.entries[ObjectIdentifier(type)] = stub
      return type
    }
  }

  static func stub(for type: AnyClass) -> StubTransport? {
    state.withLock { $0.entries[ObjectIdentifier(type)] }
  }

  /// A distinct subclass for each number, spelled in binary with generic tags.
  private static func slot<Tag>(_ number: Int, _: Tag.Type) -> StubURLProtocol.Type {
    if number == 0 {
      return StubURLProtocolSlot<Tag>.self
    }
    return number & 1 == 0
      ? slot(number >> 1, SlotZero<Tag>.self) : slot(number >> 1, SlotOne<Tag>.self)
  }
}

/// One configuration's protocol class: a subclass that adds no state.
@available(watchOS, unavailable)
private final class StubURLProtocolSlot<Tag>: StubURLProtocol {}

#if !canImport(FoundationNetworking)  // apple-check: Linux cannot build this side
  // Apple's SDKs mark URLProtocol `@unchecked Sendable`, and a Swift subclass must restate an
  // inherited unchecked conformance (swift-corelibs-foundation marks it unavailable instead, so
  // there is nothing to restate on Linux). It holds: URLSession calls `startLoading()` and
  // `stopLoading()` of one instance on its loader thread, one after the other, and only those
  // touch the stored properties; the task that answers reaches URLSession only through its
  // connection, which serializes the calls with a lock.
  @available(watchOS, unavailable)
  extension StubURLProtocol: @unchecked Sendable {}

  @available(watchOS, unavailable)
  extension StubURLProtocolSlot: @unchecked Sendable {}
#endif
private enum SlotEnd {}
private enum SlotZero<Rest> {}
private enum SlotOne<Rest> {}
