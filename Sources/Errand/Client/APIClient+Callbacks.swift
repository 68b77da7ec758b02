import Foundation

/// A request started with a completion handler; cancel it to stop waiting.
public final class RequestHandle: Sendable {
  private let task: Task<Void, Never>

  init(_ task: Task<Void, Never>) {
    self.task = task
  }

  /// Cancel the request; its completion then runs once with ``APIError/cancelled(_:)``, unless it
  /// already ran.
  public func cancel() {
    task.cancel()
  }

  /// Whether ``cancel()`` was called.
  public var isCancelled: Bool {
    task.isCancelled
  }
}

extension APIClient {
  /// Send an endpoint's request and call `completion` on `queue` with the result, exactly once,
  /// for code that does not use `async` yet.
  ///
  /// The call is in ``inFlight`` from the moment this returns, so a ``cancelAll()`` made after
  /// it ends it.
  ///
  /// ```swift
  /// let handle = client.send(Endpoint<[Dog]>(path: "dogs"), queue: .main) { result in
  ///   switch result {
  ///   case .success(let dogs): show(dogs)
  ///   case .failure(let error): show(error.localizedDescription)
  ///   }
  /// }
  /// ```
  /// - Parameters:
  ///   - endpoint: What to call and how to read the answer.
  ///   - queue: Where `completion` runs.
  ///   - completion: Receives the value or the ``APIError``.
  /// - Returns: A handle that cancels the request.
  @discardableResult
  public nonisolated func send<Value: Sendable>(
    _ endpoint: Endpoint<Value>, queue: DispatchQueue,
    completion: @escaping @Sendable (Result<Value, APIError>) -> Void
  ) -> RequestHandle {
    // Listed now, not when its task starts: a `cancelAll()` made once this returns ends it.
    let registration = register(endpoint, as: .buffered)
    return RequestHandle(
      Task {
        let result: Result<Value, APIError>
        do {
          result = .success(
            try await response(for: endpoint, as: Exchange(), registeredAs: registration).value)
        } catch let error as APIError {
          result = .failure(error)
        } catch {
          result = .failure(APIError(transportError: error, request: nil))
        }
        queue.async { completion(result) }
      })
  }
}
