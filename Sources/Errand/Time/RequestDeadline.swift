import Foundation

/// When a call gives up: its timeout on the client's clock, counted from when the call starts.
/// Every exchange of the call (retries included) and every wait a transport bounds with it share
/// the one deadline.
///
/// A class, for it is immutable and every exchange and context of the call carries it: copying
/// them retains it, instead of copying its clock and instant.
@_spi(Transports) public final class RequestDeadline: Sendable {
  /// How long the whole call may take, retries and their waits included.
  public let timeout: Duration
  /// Started when the call starts, on the same clock.
  private let stopwatch: Stopwatch

  init(timeout: Duration, clock: any Clock<Duration>) {
    self.timeout = timeout
    stopwatch = Stopwatch(clock)
  }

  /// How much of the timeout is left; zero or less once the deadline has passed.
  public var remaining: Duration {
    timeout - stopwatch.elapsed
  }

  /// Run `handler` when the deadline passes, unless the returned function is called first.
  ///
  /// On the continuous clock this is an entry in one process-wide timer; on any other clock, a
  /// task that sleeps on it.
  /// - Parameter handler: What to run at the deadline; it runs once at most, on no particular
  ///   thread.
  /// - Returns: What cancels the timer; call it once the answer is in.
  public func whenExpired(_ handler: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
    stopwatch.whenElapsed(timeout, handler)
  }

  /// Run `operation` in a task of its own, returning when it finishes, when the deadline passes
  /// (``APIError/timedOut(_:)``) or when the calling task is cancelled (`CancellationError`),
  /// whichever comes first; the operation is then cancelled.
  ///
  /// For waits a transport cannot end itself: a delay, a handler, another transport.
  /// - Parameter operation: The work to bound.
  /// - Returns: What the operation returns.
  /// - Throws: What the operation throws, ``APIError/timedOut(_:)`` or `CancellationError`.
  public func race<Value: Sendable>(
    _ operation: @escaping @Sendable () async throws -> Value
  ) async throws -> Value {
    try await withDeadline(timeout, after: stopwatch, operation)
  }

  /// ``race(_:)``, ended with `CancellationError` too when the call's client cancels the call.
  package func race<Value: Sendable>(
    endedBy cancellation: CallCancellation?,
    _ operation: @escaping @Sendable () async throws -> Value
  ) async throws -> Value {
    try await withDeadline(timeout, after: stopwatch, endedBy: cancellation, operation)
  }

  /// The timeout, in whole seconds, that a transport hands the engine underneath (URLSession's
  /// `timeoutInterval`, libcurl's connect and low-speed limits): at least a second (Linux reads
  /// whole seconds), rounded up, at most about 24 days (libcurl counts milliseconds in an
  /// `Int32`). When the transport enforces the exact deadline itself, the engine's timer is only
  /// a backstop, one second later, so that it never wins the race: on Linux it fires up to a
  /// millisecond early.
  /// - Parameters:
  ///   - timeout: The request's timeout.
  ///   - enforcedByTransport: Whether the transport ends the wait at the deadline itself.
  /// - Returns: The engine's timeout in seconds.
  public static func backstopSeconds(for timeout: Duration, enforcedByTransport: Bool) -> Int {
    let seconds =
      Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
    let backstop = max(1, seconds.rounded(.up)) + (enforcedByTransport ? 1 : 0)
    return Int(min(backstop, Double(Int32.max / 1000)))
  }
}

extension RequestDeadline: CustomStringConvertible, CustomReflectable {
  /// The timeout and how much of it is left, for example
  /// `RequestDeadline(timeout: 30.0 seconds, remaining: 29.9 seconds)`.
  public var description: String {
    "RequestDeadline(timeout: \(timeout), remaining: \(remaining))"
  }

  /// The timeout and how much of it is left.
  public var customMirror: Mirror {
    Mirror(self, children: ["timeout": timeout, "remaining": remaining], displayStyle: .struct)
  }
}
