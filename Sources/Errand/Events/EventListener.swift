import Foundation

/// Hears everything that happens during each call of the clients it is registered on
/// (``APIClient/Configuration/eventListeners``): the call's start and end, each attempt, retries,
/// redirects, token refreshes, response heads, body progress and cache outcomes.
///
/// Implement ``receive(_:)`` to see every ``CallEvent``, or only the methods you care about:
/// each has a default that does nothing, and the default ``receive(_:)`` calls the one named
/// after the event.
///
/// ```swift
/// struct SlowCallReporter: EventListener {
///   func callEnded(_ event: CallEvent, status: Int, metrics: TransferMetrics?) {
///     if event.elapsed > .seconds(1) { print("\(event.endpoint) took \(event.elapsed): \(metrics?.summary ?? "")") }
///   }
/// }
/// let client = APIClient(
///   baseURL: base, transport: URLSessionTransport(),
///   configuration: .init(eventListeners: [SlowCallReporter()]))
/// ```
///
/// Threading: a listener never runs on the task that makes the call. Each listener has one
/// thread of its own, shared by every client it is registered on and held only while it has
/// events to hear: it is called once at a time (never from two clients at once), with each
/// client's events in the order they happened, a few milliseconds after they happen (events are
/// handed over in batches, so that a busy client does not wake a thread for each). Listeners
/// are told apart by identity for an instance of a class, and by type for a value (a struct or
/// an enum): values of one type share a thread.
///
/// The listener's thread is never the main thread: hop to the main actor for work on the UI,
/// and keep what the listener does on its own thread short.
///
/// ```swift
/// final class NetworkActivity: EventListener {
///   let indicator: ActivityModel   // a @MainActor class of the app's
///   init(indicator: ActivityModel) { self.indicator = indicator }
///   func callStarted(_ event: CallEvent) {
///     Task { @MainActor in indicator.callsInFlight += 1 }
///   }
///   func callEnded(_ event: CallEvent, status: Int, metrics: TransferMetrics?) {
///     Task { @MainActor in indicator.callsInFlight -= 1 }
///   }
/// }
/// ```
///
/// A slow or blocked listener holds up only its own thread: never the calls, other listeners or
/// the system's shared thread pools, however many clients it is registered on. At most
/// ``APIClient/maximumPendingEvents`` (10,000) of its events wait for it, in memory; beyond that
/// the newest are dropped, and ``APIClient/droppedEventCount(for:)`` counts them. A listener
/// that keeps up misses nothing. What a listener throws is dropped: it cannot change a call's
/// outcome.
public protocol EventListener: Sendable {
  /// Hear an event; by default, calls the method named after its ``CallEvent/kind``.
  func receive(_ event: CallEvent) throws
  /// The call began.
  func callStarted(_ event: CallEvent) throws
  /// The request was built: redacted, without its body.
  func requestBuilt(_ event: CallEvent, request: HTTPRequest) throws
  /// An attempt went to the transport.
  func attemptStarted(_ event: CallEvent, number: Int) throws
  /// The client's call limits hold an attempt back.
  func callQueued(_ event: CallEvent) throws
  /// An attempt that waited goes to the transport.
  func callDequeued(_ event: CallEvent, waited: Duration) throws
  /// A retry will follow after `wait`.
  func retryScheduled(_ event: CallEvent, afterAttempt: Int, reason: String, wait: Duration) throws
  /// A redirect was followed.
  func redirectFollowed(_ event: CallEvent, status: Int, location: String) throws
  /// A redirect was refused.
  func redirectRefused(_ event: CallEvent, reason: String) throws
  /// A report-only pin did not match; the call went on.
  func pinMismatchReported(_ event: CallEvent, mismatch: PinMismatchError) throws
  /// The call waits for a fresh token.
  func tokenRefreshStarted(_ event: CallEvent) throws
  /// The fresh token came, or not.
  func tokenRefreshFinished(_ event: CallEvent, succeeded: Bool) throws
  /// A response's head arrived.
  func responseHead(_ event: CallEvent, status: Int, headers: HTTPHeaders) throws
  /// A streamed body's progress, sampled.
  func bodyProgress(_ event: CallEvent, bytes: Int, chunks: Int) throws
  /// A cache answered, or not.
  func cacheOutcome(_ event: CallEvent, status: CacheStatus) throws
  /// The call returned its value.
  func callEnded(_ event: CallEvent, status: Int, metrics: TransferMetrics?) throws
  /// The call failed: which step, the status or `URLError` code, the attempts made and the
  /// error's description. By default, calls ``callFailed(_:error:)`` with the description.
  func callFailed(_ event: CallEvent, failure: CallFailure) throws
  /// The call failed, told by the error's description (``CallFailure/description``): called by
  /// the default ``callFailed(_:failure:)``, so that a listener that implements this one hears
  /// every failure.
  func callFailed(_ event: CallEvent, error: String) throws
  /// The call was cancelled.
  func callCancelled(_ event: CallEvent) throws
}

extension EventListener {
  /// Calls the method named after the event's kind.
  public func receive(_ event: CallEvent) throws {
    switch event.kind {
    case .callStarted: try callStarted(event)
    case .requestBuilt(let request): try requestBuilt(event, request: request)
    case .attemptStarted(let number): try attemptStarted(event, number: number)
    case .callQueued: try callQueued(event)
    case .callDequeued(let waited): try callDequeued(event, waited: waited)
    case .retryScheduled(let attempt, let reason, let wait):
      try retryScheduled(event, afterAttempt: attempt, reason: reason, wait: wait)
    case .redirectFollowed(let status, let location):
      try redirectFollowed(event, status: status, location: location)
    case .redirectRefused(let reason): try redirectRefused(event, reason: reason)
    case .pinMismatchReported(let mismatch): try pinMismatchReported(event, mismatch: mismatch)
    case .tokenRefreshStarted: try tokenRefreshStarted(event)
    case .tokenRefreshFinished(let succeeded): try tokenRefreshFinished(event, succeeded: succeeded)
    case .responseHead(let status, let headers):
      try responseHead(event, status: status, headers: headers)
    case .bodyProgress(let bytes, let chunks): try bodyProgress(event, bytes: bytes, chunks: chunks)
    case .cacheOutcome(let status): try cacheOutcome(event, status: status)
    case .callEnded(let status, let metrics): try callEnded(event, status: status, metrics: metrics)
    case .callFailed(let failure): try callFailed(event, failure: failure)
    case .callCancelled: try callCancelled(event)
    }
  }

  /// Does nothing.
  public func callStarted(_ event: CallEvent) throws {}
  /// Does nothing.
  public func requestBuilt(_ event: CallEvent, request: HTTPRequest) throws {}
  /// Does nothing.
  public func attemptStarted(_ event: CallEvent, number: Int) throws {}
  /// Does nothing.
  public func callQueued(_ event: CallEvent) throws {}
  /// Does nothing.
  public func callDequeued(_ event: CallEvent, waited: Duration) throws {}
  /// Does nothing.
  public func retryScheduled(
    _ event: CallEvent, afterAttempt: Int, reason: String, wait: Duration
  ) throws {}
  /// Does nothing.
  public func redirectFollowed(_ event: CallEvent, status: Int, location: String) throws {}
  /// Does nothing.
  public func redirectRefused(_ event: CallEvent, reason: String) throws {}
  /// Does nothing.
  public func pinMismatchReported(_ event: CallEvent, mismatch: PinMismatchError) throws {}
  /// Does nothing.
  public func tokenRefreshStarted(_ event: CallEvent) throws {}
  /// Does nothing.
  public func tokenRefreshFinished(_ event: CallEvent, succeeded: Bool) throws {}
  /// Does nothing.
  public func responseHead(_ event: CallEvent, status: Int, headers: HTTPHeaders) throws {}
  /// Does nothing.
  public func bodyProgress(_ event: CallEvent, bytes: Int, chunks: Int) throws {}
  /// Does nothing.
  public func cacheOutcome(_ event: CallEvent, status: CacheStatus) throws {}
  /// Does nothing.
  public func callEnded(_ event: CallEvent, status: Int, metrics: TransferMetrics?) throws {}
  /// Calls ``callFailed(_:error:)`` with the failure's description.
  public func callFailed(_ event: CallEvent, failure: CallFailure) throws {
    try callFailed(event, error: failure.description)
  }
  /// Does nothing.
  public func callFailed(_ event: CallEvent, error: String) throws {}
  /// Does nothing.
  public func callCancelled(_ event: CallEvent) throws {}
}
