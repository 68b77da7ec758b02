import Foundation

/// Holds a client's exchanges to its ``CallLimits``: a slot per exchange, lanes per origin, and
/// the waiting calls in order of priority, then arrival. A waiting call that calls of a higher
/// priority have passed ``promotionAfter`` times is promoted one level, so that a steady stream
/// of higher calls cannot hold it back for ever. Times are durations since the limiter
/// was made, on the client's clock, so that a `TestClock` drives pauses and rates in tests.
///
/// One lock guards the state; what a change decides (the waiters to resume, when to look again)
/// is done after releasing it.
final class CallLimiter: Sendable {
  let limits: CallLimits
  private let clock: any Clock<Duration>
  private let epoch: Stopwatch
  private let state = Locked(State())

  /// What holds one origin's calls back.
  struct Lane: Sendable {
    var active = 0
    /// Until when a server's `Retry-After` pauses it.
    var pausedUntil: Duration?
    /// How many calls each of the server's `RateLimit` policies allows before its window ends.
    var quotas: [(remaining: Int, resetAt: Duration)] = []
    /// The configured rate's bucket.
    var tokens: Double
    var refilledAt: Duration
  }

  private struct Waiter {
    let id: UInt64
    let origin: String
    var priority: CallPriority
    let resume: CheckedContinuation<Void, any Error>
    /// How many calls of a higher priority started while it waited at this one.
    var passedOver = 0
  }

  /// How many calls of a higher priority may start ahead of a waiting call before it is
  /// promoted one level (``CallPriority``).
  static let promotionAfter = 8

  private struct State {
    var active = 0
    var lanes: [String: Lane] = [:]
    /// Waiting calls, by priority (highest first), then arrival.
    var waiters: [Waiter] = []
    var nextID: UInt64 = 0
    /// How many lanes make the next release sweep the idle ones.
    var sweepAt = 64
    /// What looks again when a pause, a window or the rate lets a waiter start: when, and what
    /// cancels it.
    var wake: (at: Duration, cancel: @Sendable () -> Void)?

    /// Queue `waiter` by priority, then arrival (its number).
    mutating func insert(_ waiter: Waiter) {
      let index =
        waiters.firstIndex {
          $0.priority < waiter.priority || ($0.priority == waiter.priority && $0.id > waiter.id)
        } ?? waiters.endIndex
      waiters.insert(waiter, at: index)
    }

    /// Move waiter `id` up to `priority`, if it waits at a lower one.
    mutating func raise(_ id: UInt64, to priority: CallPriority) {
      guard let index = waiters.firstIndex(where: { $0.id == id }),
        waiters[index].priority < priority
      else { return }
      var waiter = waiters.remove(at: index)
      waiter.priority = priority
      waiter.passedOver = 0
      insert(waiter)
    }

    /// Calls of `priorities` started: every waiter they passed counts it, and one passed over
    /// ``CallLimiter/promotionAfter`` times moves up a level.
    mutating func passed(by priorities: [CallPriority]) {
      guard let highest = priorities.max() else { return }
      var promoted: [(UInt64, CallPriority)] = []
      for index in waiters.indices where waiters[index].priority < highest {
        waiters[index].passedOver += priorities.count { $0 > waiters[index].priority }
        if waiters[index].passedOver >= CallLimiter.promotionAfter,
          let next = CallPriority(rawValue: waiters[index].priority.rawValue + 1)
        {
          promoted.append((waiters[index].id, next))
        }
      }
      for (id, priority) in promoted { raise(id, to: priority) }
    }
  }

  /// When a lane lets a call start.
  enum Start: Equatable {
    case now
    /// At this time (a pause, a window or the rate).
    case at(Duration)
    /// When one of its calls ends.
    case whenASlotFrees
  }

  init(limits: CallLimits, clock: any Clock<Duration>) {
    self.limits = limits
    self.clock = clock
    epoch = Stopwatch(clock)
  }

  deinit {
    state.withLock { $0.wake?.cancel }?()
  }

  /// How many origins the limiter keeps state for (for tests).
  var laneCount: Int {
    state.withLock { $0.lanes.count }
  }

  /// How many calls wait for a slot (for tests).
  var waitingCount: Int {
    state.withLock { $0.waiters.count }
  }

  /// A call's hold on a slot, given back once (``release()``).
  final class Permit: Sendable {
    private let limiter: CallLimiter
    private let origin: String
    private let released = Locked(false)

    fileprivate init(_ limiter: CallLimiter, origin: String) {
      self.limiter = limiter
      self.origin = origin
    }

    /// The exchange has ended: its slot goes to the next waiting call.
    func release() {
      let first = released.withLock { released in
        defer { released = true }
        return !released
      }
      if first { limiter.release(origin) }
    }

    deinit {
      release()
    }
  }

  /// The origin of `url` as a lane's key: scheme, host and port.
  static func origin(of url: URL) -> String {
    let scheme = url.scheme?.lowercased() ?? ""
    let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : 0)
    return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
  }

  /// Wait for a slot for a call to `url`, within `deadline`.
  /// - Parameters:
  ///   - url: Where the call goes: its origin is its lane.
  ///   - priority: Where it waits.
  ///   - deadline: The call's deadline.
  ///   - cancellation: How the call's client cancels it, when it runs in its caller's task.
  ///   - callers: The callers of a shared exchange: it waits at their highest priority, moving
  ///     up when a caller of a higher one joins (`priority` is then not used).
  ///   - onQueued: Called, at once, when the call has to wait (not when it starts at once).
  /// - Returns: The slot, to release when the exchange ends, and how long the call waited for
  ///   it (`nil` when it did not).
  /// - Throws: ``APIError/timedOut(_:)`` when the deadline passes first (at once, with
  ///   ``APIError/Context/rateLimitWait``, when a server's pause or window ends after it), or
  ///   `CancellationError` when the calling task is cancelled or the client cancels the call,
  ///   even as the slot comes (the slot is then given back).
  func acquire(
    for url: URL, priority: CallPriority, deadline: RequestDeadline?,
    endedBy cancellation: CallCancellation? = nil, raisedBy callers: SharedCallers? = nil,
    onQueued: () -> Void = {}
  ) async throws -> (permit: Permit, waited: Duration?) {
    let origin = Self.origin(of: url)
    let id = state.withLock { state in
      defer { state.nextID += 1 }
      return state.nextID
    }
    try refuseHeldPast(deadline, for: url)
    // The waiter is queued before its deadline is armed, and the deadline is checked once
    // armed: a deadline that passes at any point finds the waiter to end.
    var disarm: (@Sendable () -> Void)?
    defer {
      disarm?()
      _ = callers?.onRaise(nil)
    }
    // The client cancels the call before it is queued (seen under the lock below) or after
    // (this finds it).
    let disarmCancel = cancellation?.onCancel { [self] in
      abandon(id, with: CancellationError())
    }
    defer { disarmCancel?() }
    var queued: Stopwatch?
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (resume: CheckedContinuation<Void, any Error>) in
        let priority =
          callers?.onRaise { [weak self] raised in
            self?.state.withLock { $0.raise(id, to: raised) }
          } ?? priority
        let waiter = Waiter(id: id, origin: origin, priority: priority, resume: resume)
        let cancelled = state.withLock { state -> Bool in
          guard !Task.isCancelled, cancellation?.isCancelled != true else { return true }
          state.insert(waiter)
          return false
        }
        if cancelled {
          resume.resume(throwing: CancellationError())
          return
        }
        if !grant(checking: id) {
          queued = Stopwatch(clock)
          onQueued()
          if let deadline {
            disarm = deadline.whenExpired { [self] in abandon(id, with: APIError.timedOut) }
            if deadline.remaining <= .zero { abandon(id, with: APIError.timedOut) }
          }
        }
      }
    } onCancel: {
      abandon(id, with: CancellationError())
    }
    let permit = Permit(self, origin: origin)
    // Cancelled as the slot came: nothing is sent, and the slot goes to the next call.
    if Task.isCancelled || cancellation?.isCancelled == true {
      permit.release()
      throw CancellationError()
    }
    return (permit, queued?.elapsed)
  }

  /// Fail at once, saying why, when a server's pause or window (or the rate) holds `url`'s host
  /// back until after `deadline`.
  /// - Throws: ``APIError/timedOut(_:)`` with ``APIError/Context/rateLimitWait``.
  func refuseHeldPast(_ deadline: RequestDeadline?, for url: URL) throws {
    guard let remaining = deadline?.remaining, let wait = timeHeld(Self.origin(of: url)),
      wait > remaining
    else { return }
    var context = APIError.Context()
    context.rateLimitWait = wait
    throw APIError.timedOut(context)
  }

  /// How long `origin`'s lane is held back by time alone (a pause, a window), if it is.
  private func timeHeld(_ origin: String) -> Duration? {
    let now = epoch.elapsed
    return state.withLock { state -> Duration? in
      guard var lane = state.lanes[origin] else { return nil }
      defer { state.lanes[origin] = lane }
      if case .at(let time) = self.start(&lane, now: now, ignoringSlots: true) {
        return time - now
      }
      return nil
    }
  }

  /// End a waiting call's wait with `error`, if it still waits.
  private func abandon(_ id: UInt64, with error: any Error) {
    let waiter = state.withLock { state -> Waiter? in
      guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
      return state.waiters.remove(at: index)
    }
    waiter?.resume.resume(throwing: error)
  }

  /// A slot of `origin`'s was given back. A lane that no longer holds anything back is
  /// forgotten (a new one is the same), so that a client calling many hosts keeps no state for
  /// those it has done with: at once for this lane, and for the others in a sweep each time the
  /// lanes have doubled.
  private func release(_ origin: String) {
    let now = epoch.elapsed
    state.withLock { state in
      state.active -= 1
      state.lanes[origin]?.active -= 1
      if var lane = state.lanes[origin], isIdle(&lane, now: now) {
        state.lanes[origin] = nil
      }
      if state.lanes.count >= state.sweepAt {
        state.lanes = state.lanes.filter { _, lane in
          var lane = lane
          return !isIdle(&lane, now: now)
        }
        state.sweepAt = max(64, state.lanes.count * 2)
      }
    }
    _ = grant()
  }

  /// Whether `lane` holds nothing back at `now`: no call, no pause, no window, a full bucket.
  private func isIdle(_ lane: inout Lane, now: Duration) -> Bool {
    guard lane.active == 0, start(&lane, now: now, ignoringSlots: true) == .now,
      lane.pausedUntil == nil, lane.quotas.isEmpty
    else { return false }
    return limits.rate.map { lane.tokens >= Double($0.count) } ?? true
  }

  /// Start every waiting call that may start now, in order; arrange to look again when a pause,
  /// a window or the rate next lets one start.
  /// - Returns: Whether the call `checking` started (or no longer waits).
  @discardableResult
  private func grant(checking id: UInt64? = nil) -> Bool {
    let now = epoch.elapsed
    let (started, wakeAt, stillWaits) = state.withLock {
      state -> ([Waiter], Duration?, Bool) in
      var started: [Waiter] = []
      var wakeAt: Duration?
      defer { state.passed(by: started.map(\.priority)) }
      var index = 0
      while index < state.waiters.count {
        if let most = limits.maximumCalls, state.active >= most { break }
        let waiter = state.waiters[index]
        var lane = state.lanes[waiter.origin] ?? newLane(now: now)
        let start = self.start(&lane, now: now)
        if start == .now {
          take(&lane)
          state.active += 1
          started.append(state.waiters.remove(at: index))
        } else {
          if case .at(let time) = start { wakeAt = min(wakeAt ?? time, time) }
          index += 1
        }
        state.lanes[waiter.origin] = lane
      }
      let stillWaits = id.map { id in state.waiters.contains { $0.id == id } } ?? false
      return (started, wakeAt, stillWaits)
    }
    for waiter in started { waiter.resume.resume() }
    if let wakeAt { wake(at: wakeAt) }
    return !stillWaits
  }

  /// Look again at `time` (unless a look is due sooner already).
  ///
  /// `time` is an instant on the limiter's epoch (``Stopwatch/whenElapsed(_:_:)``), never a
  /// delay from whenever the timer is armed, so that a pause ends on time however late this
  /// runs or a task starts.
  private func wake(at time: Duration) {
    let (due, replaced) = state.withLock { state -> (Bool, (@Sendable () -> Void)?) in
      if let wake = state.wake, wake.at <= time { return (false, nil) }
      // Taken now, so that a concurrent look for a later time arms no second timer.
      defer { state.wake = (time, {}) }
      return (true, state.wake?.cancel)
    }
    guard due else { return }
    replaced?()
    let cancel = epoch.whenElapsed(time) { [weak self] in
      guard let self else { return }
      self.state.withLock { state in
        if state.wake?.at == time { state.wake = nil }
      }
      self.grant()
    }
    // Fired already, or replaced by a look due sooner: nothing to keep.
    let unneeded = state.withLock { state -> Bool in
      guard state.wake?.at == time else { return true }
      state.wake = (time, cancel)
      return false
    }
    if unneeded { cancel() }
  }

  private func newLane(now: Duration) -> Lane {
    Lane(tokens: Double(limits.rate?.count ?? 0), refilledAt: now)
  }

  /// When `lane` lets a call start, its bucket refilled to `now`; expired pauses and windows
  /// are cleared.
  private func start(_ lane: inout Lane, now: Duration, ignoringSlots: Bool = false) -> Start {
    var later: Duration?
    if let paused = lane.pausedUntil {
      if paused <= now { lane.pausedUntil = nil } else { later = paused }
    }
    lane.quotas.removeAll { $0.resetAt <= now }
    for quota in lane.quotas where quota.remaining <= 0 {
      later = max(later ?? quota.resetAt, quota.resetAt)
    }
    if let rate = limits.rate {
      let perToken = rate.interval / rate.count
      let refill = (now - lane.refilledAt) / perToken
      lane.tokens = min(Double(rate.count), lane.tokens + refill)
      lane.refilledAt = now
      if lane.tokens < 1 {
        let time = now + perToken * (1 - lane.tokens)
        later = max(later ?? time, time)
      }
    }
    if let later { return .at(later) }
    if !ignoringSlots, let most = limits.maximumCallsPerHost, lane.active >= most {
      return .whenASlotFrees
    }
    return .now
  }

  /// A call starts on `lane`.
  private func take(_ lane: inout Lane) {
    lane.active += 1
    if limits.rate != nil { lane.tokens -= 1 }
    for index in lane.quotas.indices { lane.quotas[index].remaining -= 1 }
  }

  /// Learn from a response's head what its server allows: a `Retry-After` on a `429` or `503`
  /// pauses the lane; a `RateLimit` field sets how many more calls each of its policies allows
  /// before its window ends (every policy counts).
  /// - Parameters:
  ///   - head: The response's head.
  ///   - url: The URL that answered (after redirects, the last).
  func observe(_ head: HTTPResponse, for url: URL) {
    guard limits.followsServerLimits else { return }
    let now = epoch.elapsed
    let pause: Duration? =
      [429, 503].contains(head.status)
      ? head.headers["Retry-After"].flatMap {
        RetryPolicy(maxRetryAfter: limits.longestPause).retryAfter($0, now: Date())
      } : nil
    let quotas = ServerRateLimit.policies(head.headers).compactMap { limit in
      limit.reset.map { (limit.remaining, now + min($0, limits.longestPause)) }
    }
    guard pause != nil || !quotas.isEmpty else { return }
    let origin = Self.origin(of: url)
    state.withLock { state in
      var lane = state.lanes[origin] ?? newLane(now: now)
      if let pause {
        lane.pausedUntil = max(lane.pausedUntil ?? now + pause, now + pause)
      }
      if !quotas.isEmpty {
        lane.quotas = quotas
      }
      state.lanes[origin] = lane
    }
    // A lifted cap (a window with room again) may let waiting calls start.
    grant()
  }
}
