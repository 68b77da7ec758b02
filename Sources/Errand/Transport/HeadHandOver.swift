import Foundation

/// When a response's head goes to its caller, the one rule every transport of the package
/// keeps: a streamed call's head goes at once; a buffered call's head is held until its body
/// has ended or backs up (or stops itself, over its limit), so a short answer wakes its caller
/// once instead of twice.
///
/// A value the transport keeps with its exchange, changed where the transport changes the rest
/// of it (libcurl's thread, or under the session delegate's lock); the head it returns is
/// handed over by the caller of each method, after any lock is released.
package struct HeadHandOver: Sendable {
  /// Where the exchange stands.
  package enum Phase: Sendable {
    /// No head yet: the caller waits.
    case waiting
    /// A buffered call's head, held until its body ends or backs up.
    case held(HTTPResponse)
    /// The caller has the head, or its wait ended another way.
    case handedOver
  }

  /// Whether the caller reads the body as it arrives.
  package let streams: Bool
  package private(set) var phase = Phase.waiting

  package init(streams: Bool) {
    self.streams = streams
  }

  /// Whether the caller still waits for a head (none has arrived, or it is held).
  package var callerWaits: Bool {
    if case .handedOver = phase { false } else { true }
  }

  /// The head arrived.
  /// - Returns: The head to hand over now (a streamed call's), or `nil` when it is held (or the
  ///   wait has already ended).
  package mutating func arrived(_ head: HTTPResponse) -> HTTPResponse? {
    guard case .waiting = phase else { return nil }
    guard streams else {
      phase = .held(head)
      return nil
    }
    phase = .handedOver
    return head
  }

  /// The body ended, backs up, or stopped itself.
  /// - Returns: The held head, to hand over now; `nil` when none is held.
  package mutating func release() -> HTTPResponse? {
    guard case .held(let head) = phase else { return nil }
    phase = .handedOver
    return head
  }

  /// The wait ended another way (a failure, a deadline, a cancellation): a held head is dropped.
  package mutating func close() {
    phase = .handedOver
  }
}
