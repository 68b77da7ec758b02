import Errand
import ErrandTesting
import Foundation

struct Dog: Codable, Equatable, Sendable {
  var name: String
}

let base = URL(string: "https://api.example.com/v1")!

/// A request to a path under the example API.
func request(
  _ method: HTTPMethod = .get, _ path: String, headers: HTTPHeaders = [:], body: Data? = nil
) -> HTTPRequest {
  HTTPRequest(
    method: method, url: URL(string: "https://api.example.com" + path)!, headers: headers,
    body: body)
}

/// A client over a transport, for the example API.
func client(_ transport: any Transport) -> APIClient {
  APIClient(baseURL: base, transport: transport)
}

extension APIError {
  /// The case name, so tests can compare errors that hold non-Equatable payloads.
  var caseName: String { ContractCase.Failure(self).rawValue }
}
