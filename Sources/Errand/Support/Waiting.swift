import Foundation

/// A continuation that several parties may try to resume (the answer, a deadline, a
/// cancellation): the first one does; shared by the package's transports.
///
/// `@unchecked Sendable` is safe: the continuation is taken out under the lock before it is
/// resumed, so it is resumed exactly once.
package final class Waiting: @unchecked Sendable {
  private let continuation: Locked<CheckedContinuation<HTTPResponse, any Error>?>

  package init(_ continuation: CheckedContinuation<HTTPResponse, any Error>) {
    self.continuation = Locked(continuation)
  }

  /// Resume with `result` unless someone already did.
  /// - Returns: Whether this call resumed it.
  @discardableResult
  package func resume(with result: Result<HTTPResponse, any Error>) -> Bool {
    let continuation = continuation.withLock { continuation in
      defer { continuation = nil }
      return continuation
    }
    continuation?.resume(with: result)
    return continuation != nil
  }

  package func resume(returning response: HTTPResponse) {
    resume(with: .success(response))
  }

  package func resume(throwing error: any Error) {
    resume(with: .failure(error))
  }
}
