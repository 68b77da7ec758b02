import Foundation

#if canImport(FoundationNetworking)

  /// The queue that runs ``URLSessionTransport``'s session delegate callbacks.
  ///
  /// On Linux, URLSession hands every delegate callback (each chunk of every body, each response,
  /// each completion) to its delegate queue with `addOperation(_:)`, and an `OperationQueue` wraps
  /// each block in an operation and schedules it: tens of microseconds of processor time per
  /// request. This queue runs the blocks on one serial Dispatch queue instead, in the order they
  /// were added, as a serial operation queue would. Operations added as `Operation` objects still
  /// go through `OperationQueue`.
  ///
  /// Linux only: on Apple platforms the session keeps its own delegate queue.
  ///
  /// `@unchecked Sendable` is safe: the only state added to `OperationQueue` (itself thread-safe)
  /// is an immutable reference to a Dispatch queue. The compiler cannot check it: a subclass
  /// restates the `@unchecked Sendable` conformance it inherits from `OperationQueue`, since
  /// only classes without a superclass (or with `NSObject`) are checked.
  final class DelegateQueue: OperationQueue, @unchecked Sendable {
    private let serial = DispatchQueue(label: "errand.url-session.delegate")

    override init() {
      super.init()
      maxConcurrentOperationCount = 1
    }

    override func addOperation(_ block: @escaping @Sendable () -> Void) {
      serial.async(execute: block)
    }
  }
#endif
