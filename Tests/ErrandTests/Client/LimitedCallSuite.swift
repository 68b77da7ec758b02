import ErrandTesting
import Foundation
import TestSupport

@testable import Errand

/// What the suites of call limits and rate limits share: a client with limits on a stub, and a
/// `GET` that takes any status.
protocol LimitedCallSuite {}

extension LimitedCallSuite {
  static var base: URL { url("https://api.example.com/v1/") }

  /// A client of `stub` with `limits`, no timeout, on `clock`.
  static func client(
    _ stub: StubTransport, _ limits: CallLimits = CallLimits(), clock: TestClock = TestClock()
  ) -> APIClient {
    var configuration = APIClient.Configuration(timeout: nil, clock: clock)
    configuration.callLimits = limits
    return APIClient(baseURL: base, transport: stub, configuration: configuration)
  }

  /// A `GET` of `target` (a path, or an absolute `https` URL) that accepts any status, started.
  static func get(_ client: APIClient, _ target: String, timeout: Duration? = nil)
    -> Task<HTTPResponse, any Error>
  {
    var endpoint = Endpoint<Data>(path: target, decoding: .data).accepting(200..<600)
    if target.hasPrefix("https://") {
      endpoint.url = url(target)
    }
    endpoint.timeout = timeout
    return Task { try await client.response(for: endpoint).response }
  }
}
