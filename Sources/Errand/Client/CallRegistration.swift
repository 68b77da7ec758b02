import Foundation

/// One call's place in its client's ``CallRegistry``, from its start until it ends: explicitly
/// (``end()``), or when the last value holding it goes (a streamed call's ``ResponseStream``
/// dropped unread).
final class CallRegistration: Sendable {
  private let registry: CallRegistry
  private let id: UInt64
  /// The endpoint, described as it was registered.
  let endpoint: String

  /// Register a call that starts now.
  init(_ registry: CallRegistry, endpoint: String, tags: Set<String>, kind: InFlightCall.Kind) {
    self.registry = registry
    self.endpoint = endpoint
    id = registry.register(endpoint: endpoint, tags: tags, kind: kind)
  }

  deinit {
    registry.remove(id)
  }

  /// Say what ends the call now; runs at once when it was cancelled already.
  func setCancel(_ cancel: @escaping @Sendable () -> Void) {
    registry.setCancel(id, cancel)
  }

  /// Whether the call was cancelled through its client (``APIClient/cancelAll()``).
  var isCancelled: Bool {
    registry.isCancelled(id)
  }

  /// The call ended: it is no longer listed.
  func end() {
    registry.remove(id)
  }

  /// The call ended: it is no longer listed.
  /// - Returns: Whether its client cancelled it first. Checked as it leaves the list, in one
  ///   step: a call ``APIClient/cancelAll()`` counted always learns it, and ends as cancelled.
  func finish() -> Bool {
    registry.finish(id)
  }

  /// The call failed with `error`: it is no longer listed.
  /// - Returns: ``APIError/cancelled(_:)`` when its client cancelled it first (checked as it
  ///   leaves the list, in one step, as ``finish()`` does), else `error`. So a call that
  ///   ``APIClient/cancelAll()`` counted while it failed (as its request was found invalid, or
  ///   just after its exchange ended with another error) ends as cancelled, as counted.
  func ending(with error: any Error, request: HTTPRequest?) -> any Error {
    finish() ? Self.cancelled(request) : error
  }

  /// The call is now known by `endpoint` and `tags`.
  func describe(endpoint: String, tags: Set<String>) {
    registry.describe(id, endpoint: endpoint, tags: tags)
  }

  /// The error a call its client cancelled ends with.
  static func cancelled(_ request: HTTPRequest?) -> APIError {
    APIError(transportError: CancellationError(), request: request)
  }

  /// What ends the waits of the call when it runs in its caller's task: each wait registers
  /// with it, and ``APIClient/cancelAll()`` ends them.
  var cancellation: CallCancellation {
    CallCancellation(registry, id: id)
  }

  /// Run `operation` (the call's exchange, for `request`) in a task of its own, which
  /// ``APIClient/cancelAll()`` cancels, since only cancellation ends a wait of the app's (a call
  /// that meets only Errand's own middleware and transport runs in its caller's task instead,
  /// with ``cancellation``).
  ///
  /// A call its client cancelled before the operation started (while its request was being
  /// built) never runs it: no middleware sees it and nothing is sent, whether or not the
  /// transport looks at cancellation. A call its client cancelled throws
  /// ``APIError/cancelled(_:)``, whatever its exchange ended with, as `cancelAll()` counted it.
  func runInTask(
    for request: HTTPRequest,
    _ operation: @escaping @Sendable (CallCancellation?) async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    let (registry, id) = (registry, id)
    let registered = OneShotSignal()
    let work = Task {
      // Nothing runs before `cancelAll()` can find this task: a middleware of the call's own
      // that cancels it (a sign-out) must cancel it before it goes on to the transport.
      await registered.wait()
      // Read under the registry's lock: a cancel that came before is seen here; one that comes
      // after finds the task through `setCancel` and cancels it.
      if registry.isCancelled(id) { throw CancellationError() }
      return try await operation(nil)
    }
    setCancel { work.cancel() }
    registered.open()
    do {
      return try await withTaskCancellationHandler {
        try await work.value
      } onCancel: {
        work.cancel()
      }
    } catch {
      if isCancelled { throw Self.cancelled(request) }
      throw error
    }
  }
}

/// A signal a task waits for, suspended, until it is given, once and for good; given before the
/// wait, the wait returns at once. It ignores cancellation: whoever gives it does so right away.
private final class OneShotSignal: Sendable {
  private let state = Locked<(given: Bool, waiter: CheckedContinuation<Void, Never>?)>(
    (false, nil))

  /// Wait until the signal is given.
  func wait() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let given = state.withLock { state -> Bool in
        if !state.given { state.waiter = continuation }
        return state.given
      }
      if given { continuation.resume() }
    }
  }

  /// Give the signal, letting the waiting task (if any) go on.
  func open() {
    let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
      state.given = true
      defer { state.waiter = nil }
      return state.waiter
    }
    waiter?.resume()
  }
}
