import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

/// A client whose calls wait for the network, over a stub, on a `TestClock`, with a
/// `ManualConnectivity` the test sets: what the connectivity suites share.
struct OfflineClient {
  let network: ManualConnectivity
  let stub: StubTransport
  let clock: TestClock
  let client: APIClient

  /// A client with no timeout of its own (calls set theirs), whose stub answers with `answer`
  /// (given the request, its number from 1, and the network, which it may take down).
  /// - Parameters:
  ///   - state: What the network is at first.
  ///   - policy: `false` for a client without a ``ConnectivityPolicy``.
  ///   - retriesWhenOnline: The policy's.
  ///   - middleware: The client's.
  ///   - answer: The stub's answer to the `n`th request.
  init(
    _ state: Connectivity = .offline, policy: Bool = true, retriesWhenOnline: Bool = true,
    middleware: [any Middleware] = [],
    answer:
      @escaping @Sendable (HTTPRequest, Int, ManualConnectivity) async throws
      -> StubResponse = { _, _, _ in .json(["ok"]) }
  ) async {
    network = ManualConnectivity(state)
    stub = StubTransport()
    clock = TestClock()
    await stub.on(
      .any, .handler { [network] request, call in try await answer(request, call, network) })
    var configuration = APIClient.Configuration(
      timeout: nil, middleware: middleware, clock: clock)
    if policy {
      configuration.connectivity = ConnectivityPolicy(
        source: network, retriesWhenOnline: retriesWhenOnline)
    }
    client = APIClient(baseURL: base, transport: stub, configuration: configuration)
  }

  /// How many calls wait for the network now.
  var waiting: Int {
    client.connectivityGate?.waiting ?? 0
  }

  /// Call `path` in a task of its own, with `timeout`, as `method`, tagged `tags`.
  func call(
    _ path: String = "dogs", method: HTTPMethod = .get, timeout: Duration? = nil,
    tags: Set<String> = []
  ) -> Task<[String], any Error> {
    var endpoint = Endpoint<[String]>(method: method, path: path)
    endpoint.timeout = timeout
    endpoint.tags = tags
    return Task { [client] in try await client.send(endpoint) }
  }

  /// The paths the stub was asked for, in order.
  var sent: [String] {
    get async { await stub.requests.map(\.url.lastPathComponent) }
  }
}
