import Errand
import Foundation

extension StubTransport {
  /// The requests received so far that a matcher accepts, in order.
  /// - Parameter matcher: Which requests to keep.
  /// - Returns: The requests.
  public func requests(matching matcher: RequestMatcher) -> [HTTPRequest] {
    requests.filter(matcher.matches)
  }

  /// The next request not yet handed out by this method, waiting for it to arrive if need be
  /// (OkHttp MockWebServer's `takeRequest`).
  ///
  /// Returns as soon as the request arrives; the timeout only guards against a test that would
  /// otherwise hang.
  /// - Parameter timeout: The longest to wait, in real time: 60 seconds by default.
  /// - Returns: The request.
  /// - Throws: ``StubTimeout`` when no request arrives in time, `CancellationError` when the task
  ///   is cancelled.
  public func nextRequest(timeout: Duration = .seconds(60)) async throws -> HTTPRequest {
    if taken < requests.count {
      taken += 1
      return requests[taken - 1]
    }
    let id = UUID()
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        waiters.append((id, continuation))
        Task { [weak self] in
          try? await Task.sleep(for: timeout.sleepable)
          await self?.expire(id, after: timeout)
        }
      }
    } onCancel: {
      Task { await self.expire(id, with: CancellationError()) }
    }
  }

  /// Add a request to the journal and hand it to the oldest waiter, if any.
  func record(_ request: HTTPRequest) {
    requests.append(request)
    if !waiters.isEmpty {
      taken += 1
      waiters.removeFirst().continuation.resume(returning: request)
    }
  }

  private func expire(_ id: UUID, after timeout: Duration) {
    expire(id, with: StubTimeout(waited: timeout, received: requests.count))
  }

  private func expire(_ id: UUID, with error: any Error) {
    guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
    waiters.remove(at: index).continuation.resume(throwing: error)
  }
}

/// No request arrived while ``StubTransport/nextRequest(timeout:)`` waited.
public struct StubTimeout: Error, CustomStringConvertible, Equatable {
  /// How long it waited.
  public var waited: Duration
  /// How many requests the stub had received in all.
  public var received: Int

  /// Says how long it waited and how many requests had come.
  public var description: String {
    "StubTransport received no new request within \(waited) (\(received) received in all)."
  }
}
