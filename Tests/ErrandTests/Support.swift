import Errand
import ErrandTesting
import Foundation

/// The dog of DESIGN.md's contract.
struct Dog: Codable, Equatable, Sendable {
  var name: String
}

/// A dog as the fixtures describe it.
struct FixtureDog: Codable, Equatable, Sendable {
  var id: Int
  var name: String
  var breed: String
  var age: Int
}

/// A transport for tests that only build requests: sending is a test failure.
struct UnusedTransport: Transport {
  struct SentUnexpectedly: Error {}

  func send(_ request: HTTPRequest) async throws -> HTTPResponse {
    throw SentUnexpectedly()
  }
}

/// A transport that answers with a closure, for the few client tests that precede the stub kit.
struct ClosureTransport: Transport {
  let answer: @Sendable (HTTPRequest) async throws -> HTTPResponse

  func send(_ request: HTTPRequest) async throws -> HTTPResponse {
    try await answer(request)
  }
}

/// A URL from a literal that the test table guarantees is valid.
func url(_ string: String) -> URL {
  guard let url = URL(string: string) else {
    preconditionFailure("test table holds an invalid URL: \(string)")
  }
  return url
}

/// A client for request-building tests.
func makeClient(
  _ base: String = "https://api.example.com/v1",
  configuration: APIClient.Configuration = APIClient.Configuration()
) -> APIClient {
  APIClient(baseURL: url(base), transport: UnusedTransport(), configuration: configuration)
}

extension APIError {
  /// The case name, so tests can compare errors that hold non-Equatable payloads.
  var caseName: String { ContractCase.Failure(self).rawValue }

  /// The reason of an `invalidRequest`, or `nil`.
  var invalidRequestReason: String? {
    if case .invalidRequest(let reason) = self { reason } else { nil }
  }
}
