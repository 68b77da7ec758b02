import Errand
import Foundation
import TestSupport
import Testing

#if os(Linux)
  import ErrandCurl
#endif

/// The production transports that the loopback suites run against: each fault, redirect and
/// stream must end the same way through every one of them.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case urlSession
  #if os(Linux)
    case curl
  #endif

  var testDescription: String { rawValue }

  /// A new transport of this kind.
  func make(trustedRedirectHosts: Set<String> = []) -> any Transport {
    switch self {
    case .urlSession:
      URLSessionTransport(trustedRedirectHosts: trustedRedirectHosts)
    #if os(Linux)
      case .curl:
        CurlTransport(trustedRedirectHosts: trustedRedirectHosts)
    #endif
    }
  }

  /// A client for `baseURL` over a new transport of this kind.
  func client(
    _ baseURL: URL, configuration: APIClient.Configuration = APIClient.Configuration()
  ) -> APIClient {
    APIClient(baseURL: baseURL, transport: make(), configuration: configuration)
  }
}
