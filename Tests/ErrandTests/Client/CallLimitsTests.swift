import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

/// `CallLimits`: never more exchanges at once than the limits allow, per client and per host;
/// waiting calls start by priority, then in order; a waiting call's deadline counts and a
/// cancelled one never starts; a server's `Retry-After` and `RateLimit` hold its host back, and
/// the client's own rate spaces calls out. All on a `TestClock`.
@Suite(.timeLimit(.minutes(3))) struct CallLimitsTests {
  static let base = url("https://api.example.com/v1/")

  /// Counts the exchanges the stub is in, and holds each until the test lets it go.
  final class Server: Sendable {
    private struct State {
      var inside = 0
      var most = 0
      var perHost: [String: Int] = [:]
      var mostPerHost: [String: Int] = [:]
      var order: [String] = []
      var held: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    func enter(_ request: HTTPRequest) async {
      let host = request.url.host ?? ""
      await withCheckedContinuation { (exchange: CheckedContinuation<Void, Never>) in
        state.withLock { state in
          state.inside += 1
          state.perHost[host, default: 0] += 1
          state.most = max(state.most, state.inside)
          state.mostPerHost[host] = max(state.mostPerHost[host] ?? 0, state.perHost[host] ?? 0)
          state.order.append(request.url.lastPathComponent)
          state.held.append(exchange)
        }
      }
      state.withLock { state in
        state.inside -= 1
        state.perHost[host, default: 0] -= 1
      }
    }

    var waiting: Int { state.withLock { $0.held.count } }
    var most: Int { state.withLock { $0.most } }
    var mostPerHost: [String: Int] { state.withLock { $0.mostPerHost } }
    var order: [String] { state.withLock { $0.order } }

    /// Let every held exchange answer.
    func releaseAll() {
      let held = state.withLock { state in
        defer { state.held = [] }
        return state.held
      }
      for exchange in held { exchange.resume() }
    }

    /// Let the oldest held exchange answer.
    func releaseOne() {
      let first = state.withLock { state in
        state.held.isEmpty ? nil : state.held.removeFirst()
      }
      first?.resume()
    }
  }

  static func stub(_ server: Server) async -> StubTransport {
    let stub = StubTransport()
    await stub.on(
      .any,
      .handler { request, _ in
        await server.enter(request)
        return .json(["ok"])
      })
    return stub
  }

  static func client(
    _ stub: StubTransport, _ limits: CallLimits, clock: TestClock = TestClock(),
    listeners: [any EventListener] = []
  ) -> APIClient {
    var configuration = APIClient.Configuration(timeout: nil, clock: clock)
    configuration.callLimits = limits
    configuration.eventListeners = listeners
    return APIClient(baseURL: base, transport: stub, configuration: configuration)
  }

  static func call(
    _ client: APIClient, _ path: String, priority: CallPriority = .normal, tags: Set<String> = []
  ) -> Task<[String], any Error> {
    var endpoint = Endpoint<[String]>(path: path)
    endpoint.priority = priority
    endpoint.tags = tags
    return Task { try await client.send(endpoint) }
  }

  @Test func neverMoreCallsAtOnceThanTheClientsLimit() async throws {
    let server = Server()
    let client = Self.client(await Self.stub(server), CallLimits(maximumCalls: 3))
    let calls = (0..<10).map { Self.call(client, "dogs/\($0)") }
    for _ in 0..<10 {
      #expect(await eventually { server.waiting >= 1 })
      server.releaseOne()
    }
    for call in calls { #expect(try await call.value == ["ok"]) }
    #expect(server.most == 3)
  }

  /// A host at its limit holds up its own calls only.
  @Test func aHostAtItsLimitHoldsUpItsOwnCallsOnly() async throws {
    let server = Server()
    let client = Self.client(await Self.stub(server), CallLimits(maximumCallsPerHost: 2))
    var calls: [Task<[String], any Error>] = []
    for host in ["a.example.com", "b.example.com"] {
      for index in 0..<4 {
        var endpoint = Endpoint<[String]>(path: "")
        endpoint.url = url("https://\(host)/\(index)")
        calls.append(Task { try await client.send(endpoint) })
      }
    }
    #expect(await eventually { server.waiting == 4 }, "two per host at once")
    server.releaseAll()
    #expect(await eventually { server.waiting == 4 })
    server.releaseAll()
    for call in calls { #expect(try await call.value == ["ok"]) }
    #expect(server.mostPerHost == ["a.example.com": 2, "b.example.com": 2])
    #expect(server.most == 4)
  }

  /// Waiting calls start by priority, then in the order they came.
  @Test func waitingCallsStartByPriorityThenInOrder() async throws {
    let server = Server()
    let recorder = EventRecorder()
    let client = Self.client(
      await Self.stub(server), CallLimits(maximumCalls: 1), listeners: [recorder])
    let first = Self.call(client, "first")
    #expect(await eventually { server.waiting == 1 })
    let queued: [(String, CallPriority)] = [
      ("background", .background), ("normal-1", .normal), ("user", .userInitiated),
      ("normal-2", .normal),
    ]
    var calls = [first]
    for (path, priority) in queued {
      calls.append(Self.call(client, path, priority: priority))
      // Each waits before the next comes, so that "in order" means something.
      let queuedSoFar = calls.count - 1
      #expect(await eventually { recorder.count(of: "callQueued") == queuedSoFar })
    }
    for _ in calls {
      #expect(await eventually { server.waiting == 1 })
      server.releaseOne()
    }
    for call in calls { _ = try await call.value }
    #expect(server.order == ["first", "user", "normal-1", "normal-2", "background"])
    #expect(await eventually { recorder.count(of: "callDequeued") == 4 })
  }

  /// A waiting call's deadline counts: it fails when it passes, and is never sent.
  @Test func aWaitingCallTimesOutOnItsDeadlineAndIsNeverSent() async throws {
    let server = Server()
    let clock = TestClock()
    let stub = await Self.stub(server)
    let client = Self.client(stub, CallLimits(maximumCalls: 1), clock: clock)
    let first = Self.call(client, "first")
    defer { first.cancel() }
    #expect(await eventually { server.waiting == 1 })
    var late = Endpoint<[String]>(path: "late")
    late.timeout = .seconds(5)
    let waiting = Task { try await client.send(late) }
    try #require(await clock.waitForSleeper(dueIn: .seconds(5)))
    await clock.advance(by: .seconds(5))
    let error = await #expect(throws: APIError.self) { try await waiting.value }
    #expect(error?.kind == .timedOut)
    #expect(await stub.requests.map(\.url.lastPathComponent) == ["first"])
    server.releaseAll()
    #expect(try await first.value == ["ok"])
  }

  /// A waiting call that is cancelled (by its task, or by `cancelAll`) is never sent, and its
  /// place goes to the next.
  @Test(arguments: [false, true])
  func aCancelledWaitingCallIsNeverSent(byCancelAll: Bool) async throws {
    let server = Server()
    let stub = await Self.stub(server)
    let client = Self.client(stub, CallLimits(maximumCalls: 1))
    let first = Self.call(client, "first")
    #expect(await eventually { server.waiting == 1 })
    let cancelled = Self.call(client, "cancelled", tags: ["queued"])
    #expect(await eventually { client.inFlight.count == 2 })
    if byCancelAll {
      #expect(client.cancelAll(tagged: "queued") == 1)
    } else {
      cancelled.cancel()
    }
    let error = await #expect(throws: APIError.self) { try await cancelled.value }
    #expect(error?.kind == .cancelled)
    let next = Self.call(client, "next")
    server.releaseOne()
    #expect(try await first.value == ["ok"])
    #expect(await eventually { server.waiting == 1 })
    server.releaseOne()
    #expect(try await next.value == ["ok"])
    #expect(await stub.requests.map(\.url.lastPathComponent) == ["first", "next"])
  }
}

/// Records the names of the events it hears.
final class EventRecorder: EventListener {
  private let names = Locked<[String]>([])

  func receive(_ event: CallEvent) throws {
    names.withLock { $0.append(event.kind.name) }
  }

  func count(of name: String) -> Int {
    names.withLock { $0.filter { $0 == name }.count }
  }
}
