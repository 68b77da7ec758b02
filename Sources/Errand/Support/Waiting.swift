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
  private enum State: Sendable {
    /// Nobody has ended the wait; the caller's continuation, once it suspends.
    case waiting(CheckedContinuation<Void, Never>?)
    /// Ended: the answer, for the caller to take.
    case answered(Result<HTTPResponse, any Error>)
    /// The caller took the answer (and holds the only reference to its body).
    case taken
  }

  private let state = Locked(State.waiting(nil))

  private init() {}

  /// Run `start` with a new wait, then suspend until someone ends it.
  /// - Parameter start: Shares the wait with whoever will end it; runs at once, on the caller's
  ///   task, and may end the wait itself.
  /// - Returns: The response the wait ended with.
  /// - Throws: The error it ended with.
  package static func wait(_ start: (Waiting) -> Void) async throws -> HTTPResponse {
    let waiting = Waiting()
    await withCheckedContinuation { continuation in
      waiting.state.withLock { $0 = .waiting(continuation) }
      start(waiting)
    }
    let answer = waiting.state.withLock { state -> Result<HTTPResponse, any Error>? in
      guard case .answered(let answer) = state else { return nil }
      state = .taken
      return answer
    }
    guard let answer else {
      preconditionFailure("a wait was resumed without its answer")
    }
    return try answer.get()
  }

  /// End the wait with `result` unless someone already did.
  /// - Returns: Whether this call ended it.
  @discardableResult
  package func resume(with result: Result<HTTPResponse, any Error>) -> Bool {
    let ended = state.withLock { state -> CheckedContinuation<Void, Never>?? in
      guard case .waiting(let continuation) = state else { return nil }
      state = .answered(result)
      return .some(continuation)
    }
    guard let ended else { return false }
    ended?.resume()
    return true
  }

  package func resume(returning response: HTTPResponse) {
    resume(with: .success(response))
  }

  package func resume(throwing error: any Error) {
    resume(with: .failure(error))
  }
}
