#if canImport(Combine)
  import Combine

  extension APIClient {
    /// A publisher that sends the endpoint's request when subscribed, then publishes its value
    /// or fails with its ``APIError``. Cancelling the subscription cancels the request. The call
    /// is in ``inFlight`` from the subscription on, so a ``cancelAll()`` made after ends it.
    /// - Parameter endpoint: What to call and how to read the answer.
    /// - Returns: The publisher; each subscription sends the request again.
    public nonisolated func publisher<Value: Sendable>(for endpoint: Endpoint<Value>)
      -> AnyPublisher<Value, APIError>
    {
      Deferred { () -> Publishers.HandleEvents<Future<Value, APIError>> in
        let running = Locked<Task<Void, Never>?>(nil)
        // Future runs this closure as it is created, so the task exists before anyone can cancel.
        let future = Future<Value, APIError> { promise in
          let fulfil = Fulfil(promise)
          // Listed on subscription, not when the task starts: a `cancelAll()` made after ends it.
          let registration = self.register(endpoint, as: .buffered)
          let task = Task {
            do {
              fulfil(
                .success(
                  try await self.response(
                    for: endpoint, as: Exchange(), registeredAs: registration
                  ).value))
            } catch let error as APIError {
              fulfil(.failure(error))
            } catch {
              fulfil(.failure(APIError(transportError: error, request: nil)))
            }
          }
          running.withLock { $0 = task }
        }
        return future.handleEvents(receiveCancel: { running.withLock { $0 }?.cancel() })
      }
      .eraseToAnyPublisher()
    }
  }

  /// A `Future` promise carried into the task that fulfils it.
  ///
  /// `@unchecked Sendable` is safe: Combine's `Future` promise may be called from any thread, and
  /// the task calls it exactly once. The compiler cannot check it: Combine declares
  /// `Future.Promise` as a plain closure type, not a `@Sendable` one.
  private struct Fulfil<Value>: @unchecked Sendable {
    let promise: (Result<Value, APIError>) -> Void

    init(_ promise: @escaping (Result<Value, APIError>) -> Void) {
      self.promise = promise
    }

    func callAsFunction(_ result: Result<Value, APIError>) {
      promise(result)
    }
  }
#endif
