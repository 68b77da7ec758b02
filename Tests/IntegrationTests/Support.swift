import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import Testing

struct Dog: Codable, Equatable, Sendable {
  var name: String
}

/// A client over a real `URLSessionTransport`.
func liveClient(_ baseURL: URL, configuration: APIClient.Configuration = APIClient.Configuration())
  -> APIClient
{
  APIClient(baseURL: baseURL, transport: URLSessionTransport(), configuration: configuration)
}

/// `count` bytes of a non-text pattern whose period (251, a prime) does not divide buffer sizes,
/// so that any shifted, lost or repeated block shows. Built by blocks: cheap even at 10 MB.
func patternBytes(_ count: Int) -> Data {
  let block = Data((0..<251).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
  var data = Data(capacity: count + block.count)
  while data.count < count {
    data.append(block)
  }
  return data.prefix(count)
}

/// The error a call threw, as an `APIError`, recording an issue when it threw something else or
/// nothing.
func apiError(_ call: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation)
  async -> APIError?
{
  do {
    try await call()
    Issue.record("expected an APIError, but the call succeeded", sourceLocation: sourceLocation)
  } catch let error as APIError {
    return error
  } catch {
    Issue.record("expected an APIError, got \(error)", sourceLocation: sourceLocation)
  }
  return nil
}

extension APIError {
  /// The underlying `URLError` of a `.transport` error.
  var underlyingURLError: URLError? {
    if case .transport(let underlying) = self { underlying as? URLError } else { nil }
  }

  /// The response of an `.unacceptableStatus` error.
  var unacceptableResponse: HTTPResponse? {
    if case .unacceptableStatus(let response) = self { response } else { nil }
  }

  var isTimedOut: Bool { ContractCase.Failure(self) == .timedOut }

  var isCancelled: Bool { ContractCase.Failure(self) == .cancelled }
}
