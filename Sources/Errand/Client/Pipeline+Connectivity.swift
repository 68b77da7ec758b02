import Foundation

extension Pipeline {
  /// Send a request through the transport (``send(_:as:)``), held while the client's
  /// ``ConnectivityPolicy`` says the network is down; straight through when the client has none.
  func sendWhenOnline(_ request: HTTPRequest, as exchange: Exchange) async throws -> HTTPResponse {
    guard let connectivity else { return try await send(request, as: exchange) }
    return try await connectivity.send(
      request, by: exchange.deadline, endedBy: exchange.cancellation
    ) {
      try await send(request, as: exchange)
    }
  }
}
