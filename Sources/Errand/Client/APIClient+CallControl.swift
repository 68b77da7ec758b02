import Foundation

extension APIClient {
  /// The calls this client is running now, oldest first: buffered calls until they return,
  /// streamed ones (downloads and event streams included) until their body has been read to the
  /// end, has failed, or their reader has left.
  ///
  /// ```swift
  /// print(client.inFlight.map(\.description).joined(separator: "\n"))
  /// ```
  public nonisolated var inFlight: [InFlightCall] {
    calls.calls
  }

  /// End every call this client is running, at once: each throws ``APIError/cancelled(_:)``
  /// (a streamed call's reader too), and its transfer is cancelled, as when the calling task is
  /// cancelled. For a sign-out or an account switch.
  ///
  /// Only the calls running now are ended: a call started after this returns runs as usual. A
  /// call whose answer has arrived but not been read into its value yet ends as cancelled too;
  /// one that has returned is not affected. What a call left running in the background (a
  /// cache's revalidation) is not a call, and is not ended.
  ///
  /// ```swift
  /// func signOut() async {
  ///   client.cancelAll()
  ///   cache.removeAll()
  /// }
  /// ```
  /// - Returns: How many calls were ended.
  @discardableResult
  public nonisolated func cancelAll() -> Int {
    calls.cancel { _ in true }
  }

  /// End the calls this client is running whose endpoint carries `tag` (``Endpoint/tags``), as
  /// ``cancelAll()`` ends every call.
  ///
  /// ```swift
  /// let feed = Endpoint<[Post]>(path: "feed").tagged("home")
  /// client.cancelAll(tagged: "home")   // the user left the home screen
  /// ```
  /// - Parameter tag: The tag.
  /// - Returns: How many calls were ended.
  @discardableResult
  public nonisolated func cancelAll(tagged tag: String) -> Int {
    calls.cancel { $0.tags.contains(tag) }
  }

  /// Whether a call to `endpoint` meets only Errand's own middleware and transport, so that it
  /// runs in its caller's task (``run(_:for:as:registeredAs:)``).
  nonisolated func endsItsOwnWaits<Value>(for endpoint: Endpoint<Value>) -> Bool {
    endsItsOwnWaits && endpoint.middleware.allSatisfy { $0 is any CallCancellationAware }
  }

  /// ``run(_:for:as:)`` for a call listed as `registration`, so that ``cancelAll()`` ends it:
  /// in its caller's task, its waits ended through its ``CallCancellation``, when it meets only
  /// Errand's own middleware and transport; else in a task of its own
  /// (``CallRegistration/runInTask(for:_:)``).
  ///
  /// A call its client cancelled before it started (while its request was being built) is not
  /// run: no middleware sees it and nothing is sent. A call its client cancelled throws
  /// ``APIError/cancelled(_:)``, whatever its exchange ended with, as `cancelAll()` counted it.
  nonisolated func run<Value>(
    _ request: HTTPRequest, for endpoint: Endpoint<Value>, as exchange: Exchange,
    registeredAs registration: CallRegistration
  ) async throws -> HTTPResponse {
    guard endsItsOwnWaits(for: endpoint) else {
      return try await registration.runInTask(for: request) { cancellation in
        var exchange = exchange
        exchange.cancellation = cancellation
        return try await self.run(
          request, for: endpoint, as: exchange, described: registration.endpoint)
      }
    }
    // In the caller's task, the usual case: run here, without a closure to carry the call.
    var exchange = exchange
    exchange.cancellation = registration.cancellation
    do {
      if registration.isCancelled { throw CancellationError() }
      return try await run(request, for: endpoint, as: exchange, described: registration.endpoint)
    } catch {
      if registration.isCancelled { throw CallRegistration.cancelled(request) }
      throw error
    }
  }

  /// Register a call to `endpoint` that starts now.
  nonisolated func register<Value>(_ endpoint: Endpoint<Value>, as kind: InFlightCall.Kind)
    -> CallRegistration
  {
    CallRegistration(
      calls, endpoint: endpoint.description(redactedBy: configuration.redaction),
      tags: endpoint.tags, kind: kind)
  }
}
