import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The session-level delegate of ``URLSessionTransport``: applies ``RedirectPolicy`` and
/// remembers which tasks had a redirect refused. Session-level, because Linux ignores per-task
/// delegates.
///
/// `@unchecked Sendable` is safe: its only mutable state is inside a `Locked`.
final class SessionDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
  private let refused = Locked<[Int: InsecureRedirectError]>([:])

  func urlSession(
    _ session: URLSession, task: URLSessionTask,
    willPerformHTTPRedirection response: HTTPURLResponse,
    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
  ) {
    switch RedirectPolicy.decide(from: response.url ?? task.currentRequest?.url, proposed: request)
    {
    case .follow(let next):
      completionHandler(next)
    case .refuseDowngrade(let from, let to):
      refused.withLock { $0[task.taskIdentifier] = InsecureRedirectError(from: from, to: to) }
      completionHandler(nil)
    }
  }

  /// The refused redirect of a task, if any, forgetting it.
  func takeRefusedRedirect(for taskIdentifier: Int) -> InsecureRedirectError? {
    refused.withLock { $0.removeValue(forKey: taskIdentifier) }
  }
}
