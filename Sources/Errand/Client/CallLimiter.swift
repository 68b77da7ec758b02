import Foundation

/// Holds a client's exchanges to its ``CallLimits``: a slot per exchange, lanes per origin, and
/// the waiting calls in order of priority, then arrival. Times are durations since the limiter
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
    /// How many calls the server's `RateLimit` allows before its window ends.
    var quota: (remaining: Int, resetAt: Duration)?
    /// The configured rate's bucket.
    var tokens: Double
    var refilledAt: Duration
  }

  private struct Waiter {
    let id: UInt64
    let origin: String
    let priority: CallPriority
    let resume: CheckedContinuation<Void, any Error>
  }

  private struct State {
    var active = 0
    var lanes: [String: Lane] = [:]
    /// Waiting calls, by priority (highest first), then arrival.
    var waiters: [Waiter] = []
    var nextID: UInt64 = 0
    /// How many lanes make the next release sweep the idle ones.
    var sweepAt = 64
    /// The task that looks again when a pause, a window or the rate lets a waiter start.
    var wake: (at: Duration, task: Task<Void, Never>)?
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
    state.withLock { $0.wake?.task }?.cancel()
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
  ///   - onQueued: Called, at once, when the call has to wait (not when it starts at once).
  /// - Returns: The slot, to release when the exchange ends, and how long the call waited for
  ///   it (`nil` when it did not).
  /// - Throws: ``APIError/timedOut(_:)`` when the deadline passes first (at once, with
  ///   ``APIError/Context/rateLimitWait``, when a server's pause or window ends after it), or
  ///   `CancellationError` when the calling task is cancelled or the client cancels the call.
  func acquire(
    for url: URL, priority: CallPriority, deadline: RequestDeadline?,
    endedBy cancellation: CallCancellation? = nil, onQueued: () -> Void = {}
  ) async throws -> (permit: Permit, waited: Duration?) {
    let origin = Self.origin(of: url)
    let id = state.withLock { state in
      defer { state.nextID += 1 }
      return state.nextID
    }
    try refuseHeldPast(deadline, for: url)
    let disarm = deadline?.whenExpired { [self] in
      abandon(id, with: APIError.timedOut)
    }
    // The client cancels the call before it is queued (seen under the lock below) or after
    // (this finds it).
    let disarmCancel = cancellation?.onCancel { [self] in
      abandon(id, with: CancellationError())
    }
    defer {
      disarm?()
      disarmCancel?()
    }
    var queued: Stopwatch?
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (resume: CheckedContinuation<Void, any Error>) in
        let waiter = Waiter(id: id, origin: origin, priority: priority, resume: resume)
        let cancelled = state.withLock { state -> Bool in
          guard !Task.isCancelled, cancellation?.isCancelled != true else { return true }
          let index =
            state.waiters.firstIndex { $0.priority < priority } ?? state.waiters.endIndex
          state.waiters.insert(waiter, at: index)
          return false
        }
        if cancelled {
          resume.resume(throwing: CancellationError())
          return
        }
        if !grant(checking: id) {
          queued = Stopwatch(clock)
          onQueued()
        }
      }
    } onCancel: {
      abandon(id, with: CancellationError())
    }
    return (Permit(self, origin: origin), queued?.elapsed)
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
      lane.pausedUntil == nil, lane.quota == nil
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
  private func wake(at time: Duration) {
    let clock = clock
    let now = epoch.elapsed
    let replaced = state.withLock { state -> Task<Void, Never>? in
      if let wake = state.wake, wake.at <= time { return nil }
      let previous = state.wake?.task
      let task = Task { [weak self] in
        try? await clock.sleep(for: time - now)
        guard !Task.isCancelled, let self else { return }
        self.state.withLock { state in
          if state.wake?.at == time { state.wake = nil }
        }
        self.grant()
      }
      state.wake = (time, task)
      return previous
    }
    replaced?.cancel()
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
    if let quota = lane.quota {
      if quota.resetAt <= now {
        lane.quota = nil
      } else if quota.remaining <= 0 {
        later = max(later ?? quota.resetAt, quota.resetAt)
      }
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
    if let quota = lane.quota { lane.quota = (quota.remaining - 1, quota.resetAt) }
  }

  /// Learn from a response's head what its server allows: a `Retry-After` on a `429` or `503`
  /// pauses the lane; a `RateLimit` field sets how many more calls its window allows.
  func observe(_ head: HTTPResponse, for url: URL) {
    guard limits.followsServerLimits else { return }
    let now = epoch.elapsed
    let pause: Duration? =
      [429, 503].contains(head.status)
      ? head.headers["Retry-After"].flatMap {
        RetryPolicy(maxRetryAfter: limits.longestPause).retryAfter($0, now: Date())
      } : nil
    let quota = ServerRateLimit(head.headers).map { limit in
      (limit.remaining, now + min(limit.reset, limits.longestPause))
    }
    guard pause != nil || quota != nil else { return }
    let origin = Self.origin(of: url)
    state.withLock { state in
      var lane = state.lanes[origin] ?? newLane(now: now)
      if let pause {
        lane.pausedUntil = max(lane.pausedUntil ?? now + pause, now + pause)
      }
      if let quota {
        lane.quota = quota
      }
      state.lanes[origin] = lane
    }
    // A lifted cap (a window with room again) may let waiting calls start.
    grant()
  }
}
