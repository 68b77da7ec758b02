import Foundation

/// A caller's wait for one exchange's head, which several parties may try to end (the answer, a
/// deadline, a cancellation): the first one does; shared by the package's transports.
///
/// The answer is handed over under a lock both sides take: whoever ends the wait stores the
/// answer under it, and the caller reads it back under it once resumed. So everything the
/// answering thread wrote before (a head and its body, made on libcurl's or URLSession's thread)
/// is visible to the caller by an edge that ThreadSanitizer sees too, even when the answer comes
/// before the caller has suspended.
package final class Waiting: Sendable {
  private struct State: Sendable {
    var continuation: CheckedContinuation<Void, Never>?
    var answer: Result<HTTPResponse, any Error>?
  }

  private let state = Locked(State())

  private init() {}

  /// Run `start` with a new wait, then suspend until someone ends it.
  /// - Parameter start: Shares the wait with whoever will end it; runs at once, on the caller's
  ///   task, and may end the wait itself.
  /// - Returns: The response the wait ended with.
  /// - Throws: The error it ended with.
  package static func wait(_ start: (Waiting) -> Void) async throws -> HTTPResponse {
    let waiting = Waiting()
    await withCheckedContinuation { continuation in
      waiting.state.withLock { $0.continuation = continuation }
      start(waiting)
    }
    let answer = waiting.state.withLock { $0.answer }
    guard let answer else {
      preconditionFailure("a wait was resumed without its answer")
    }
    return try answer.get()
  }

  /// End the wait with `result` unless someone already did.
  /// - Returns: Whether this call ended it.
  @discardableResult
  package func resume(with result: Result<HTTPResponse, any Error>) -> Bool {
    let continuation = state.withLock { state -> CheckedContinuation<Void, Never>?? in
      guard state.answer == nil else { return nil }
      state.answer = result
      defer { state.continuation = nil }
      return .some(state.continuation)
    }
    guard let continuation else { return false }
    continuation?.resume()
    return true
  }

  package func resume(returning response: HTTPResponse) {
    resume(with: .success(response))
  }

  package func resume(throwing error: any Error) {
    resume(with: .failure(error))
  }
}
