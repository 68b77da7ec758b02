@_spi(Transports) import Errand
import Foundation

extension StubTransport {
  /// Every request received with how the stub answered it, in the order they arrived: the
  /// journal ``har(redaction:)`` exports. A request that failed `HTTPRequest.validate()` is not
  /// in it (nor in ``requests``).
  public var exchanges: [StubExchange] { journal }

  /// Answer as `answer(_:_:)` does, keeping the request and its answer in the journal.
  nonisolated func journaled(
    _ request: HTTPRequest, _ exchange: Exchange
  ) async throws -> HTTPResponse {
    guard request.validationProblem == nil, let read = try? request.readingBodyFile() else {
      return try await answer(request, exchange)
    }
    let slot = await open(read)
    do {
      let response = try await answer(read, exchange)
      await close(slot, with: response)
      return response
    } catch {
      await close(slot, failingWith: error)
      throw error
    }
  }

  private func open(_ request: HTTPRequest) -> Int {
    journal.append(StubExchange(request: request, date: Date()))
    return journal.count - 1
  }

  private func close(_ slot: Int, with response: HTTPResponse) {
    guard journal.indices.contains(slot) else { return }
    var head = response
    journal[slot].streamed = head.bodyStream != nil
    head.bodyStream = nil
    journal[slot].response = head
  }

  private func close(_ slot: Int, failingWith error: any Error) {
    guard journal.indices.contains(slot) else { return }
    journal[slot].error = error
  }
}
