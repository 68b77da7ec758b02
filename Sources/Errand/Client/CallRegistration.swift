import Foundation

/// One call's place in its client's ``CallRegistry``, from its start until it ends: explicitly
/// (``end()``), or when the last value holding it goes (a streamed call's ``ResponseStream``
/// dropped unread).
final class CallRegistration: Sendable {
  private let registry: CallRegistry
  private let id: UInt64

  /// Register a call that starts now.
  init(_ registry: CallRegistry, endpoint: String, tags: Set<String>, kind: InFlightCall.Kind) {
    self.registry = registry
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

  /// Run `operation` (the call's exchange) in a task that ``APIClient/cancelAll()`` can cancel,
  /// as the caller's own cancellation does.
  func run(_ operation: @escaping @Sendable () async throws -> HTTPResponse) async throws
    -> HTTPResponse
  {
    let work = Task(operation: operation)
    setCancel { work.cancel() }
    return try await withTaskCancellationHandler {
      try await work.value
    } onCancel: {
      work.cancel()
    }
  }
}
