import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

/// Probes of the last gate before the transport, for a call that meets a middleware of the
/// app's (it runs in a task of its own, which `cancelAll()` or its caller cancels): a middleware
/// that goes on to `next` after its call was cancelled, without a wait of its own that would have
/// thrown, must not get the request sent. The transport here is a stub, which, like many an
/// app's, does not look at cancellation itself when the call has no deadline (the clients here
/// have no timeout), so only Errand's own gate can stop the call.
@Suite(.timeLimit(.minutes(3))) struct CallStartGateHostileTests {
  /// Who cancels the call while its middleware runs.
  enum Canceller: String, CaseIterable, CustomTestStringConvertible, Sendable {
    /// The client's `cancelAll()`, called from inside the middleware.
    case cancelAll
    /// The caller, cancelling its task while the middleware waits on a gate that ignores it.
    case theCaller
    var testDescription: String { rawValue }
  }

  /// A middleware of the app's that runs `action` and waits for `gate`, neither of which looks
  /// at cancellation, then passes the request on.
  struct Unheeding: Middleware {
    let entered: AsyncStream<Void>.Continuation
    let gate: AsyncGate
    let action: @Sendable () -> Void

    func intercept(
      _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
      action()
      entered.yield()
      await gate.wait()
      return try await next(request)
    }
  }

  /// A call cancelled while a middleware of the app's runs, which then calls `next`, throws
  /// `.cancelled` and the transport gets nothing, for a buffered and a streamed call alike.
  @Test(arguments: Canceller.allCases, [false, true])
  func aCallCancelledInTheAppsMiddlewareIsNeverSent(_ canceller: Canceller, streams: Bool)
    async throws
  {
    let stub = StubTransport()
    await stub.on(.any, .status(200, body: Data("ok".utf8)))
    let late = LateClient()
    let gate = AsyncGate()
    let (entered, enteredContinuation) = AsyncStream.makeStream(of: Void.self)
    let middleware = Unheeding(entered: enteredContinuation, gate: gate) {
      if canceller == .cancelAll { late.cancelAll() }
    }
    let client = APIClient(
      baseURL: URL(string: "https://api.example.com/v1")!, transport: stub,
      configuration: .init(timeout: nil, middleware: [middleware]))
    late.client = client
    #expect(!client.endsItsOwnWaits(for: Endpoint<Data>(path: "x")))
    let endpoint = Endpoint<Data>(path: "dogs", decoding: .data)
    let call = startCall(client, endpoint, streams: streams)
    var events = entered.makeAsyncIterator()
    _ = await events.next()
    if canceller == .theCaller { call.cancel() }
    await gate.open()
    await expectCancelled(call)
    if canceller == .cancelAll { #expect(late.cancelled == [1]) }
    #expect(await stub.requests.isEmpty, "the transport got a cancelled call's request")
    #expect(client.inFlight.isEmpty)
  }

  /// The gate stops only cancelled calls: the same middleware, not cancelled, gets its answer.
  @Test func aCallNotCancelledInTheAppsMiddlewareIsSent() async throws {
    let stub = StubTransport()
    await stub.on(.any, .status(200, body: Data("ok".utf8)))
    let gate = AsyncGate()
    await gate.open()
    let (_, enteredContinuation) = AsyncStream.makeStream(of: Void.self)
    let client = APIClient(
      baseURL: URL(string: "https://api.example.com/v1")!, transport: stub,
      configuration: .init(
        timeout: nil, middleware: [Unheeding(entered: enteredContinuation, gate: gate) {}]))
    let body = try await client.send(Endpoint<Data>(path: "dogs", decoding: .data))
    #expect(body == Data("ok".utf8))
    #expect(await stub.requests.count == 1)
  }
}
