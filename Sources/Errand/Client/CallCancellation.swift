import Foundation

/// How ``APIClient/cancelAll()`` ends one call that runs in its caller's task: each of the
/// call's waits that Errand runs (its transport's, its call limits', its backoff's, its token
/// refresh's, its body's) registers what ends it here, as it registers what ends it at the
/// deadline.
///
/// A client runs a call this way, without a task of its own, when the call meets only Errand's
/// own middleware and transports (``CallCancellationAware``); a call that meets code of the
/// app's, which Errand cannot end, runs in a task that `cancelAll()` cancels.
package struct CallCancellation: Sendable {
  private let registry: CallRegistry
  private let id: UInt64

  init(_ registry: CallRegistry, id: UInt64) {
    self.registry = registry
    self.id = id
  }

  /// Whether the call's client has cancelled it.
  package var isCancelled: Bool {
    registry.isCancelled(id)
  }

  /// Run `end` when the call's client cancels it (at once when it has), unless the returned
  /// function is called first.
  /// - Parameter end: What ends the wait, with `CancellationError`; it runs once at most, on no
  ///   particular thread.
  /// - Returns: What forgets `end`; call it once the wait is over.
  package func onCancel(_ end: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
    registry.onCancel(id, end)
  }
}

/// A middleware or transport of Errand's own whose every wait ends when the call's client
/// cancels the call (``CallCancellation``), so that a call meeting only such parts needs no task
/// of its own for ``APIClient/cancelAll()`` to end it.
package protocol CallCancellationAware {}
