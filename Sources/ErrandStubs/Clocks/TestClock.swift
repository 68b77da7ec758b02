import Errand
import Foundation

/// A clock that moves only when the test says so, for delays that take no wall time.
///
/// ```swift
/// let clock = TestClock()
/// let stub = StubTransport(clock: clock)
/// await stub.on(.get, "/v1/slow", StubResponse.json(dog).delayed(by: .seconds(30)))
/// let call = Task { try await client.send(Endpoint<Dog>(path: "slow")) }
/// await clock.waitForSleepers()       // the stub is now waiting on the clock
/// await clock.advance(by: .seconds(30))
/// let dog = try await call.value      // answered at once
/// ```
///
/// `@unchecked Sendable` is safe: all mutable state (the time and the sleepers) lives in a
/// `Locked`, and continuations are resumed outside the lock, each exactly once.
public final class TestClock: Clock, @unchecked Sendable {
  /// A point on a test clock: the time since the clock was created.
  public struct Instant: InstantProtocol, Hashable, Sendable {
    /// The time since the clock was created.
    public var offset: Duration

    /// Create an instant.
    /// - Parameter offset: The time since the clock was created.
    public init(offset: Duration = .zero) {
      self.offset = offset
    }

    /// The instant `duration` later.
    public func advanced(by duration: Duration) -> Instant {
      Instant(offset: offset + duration)
    }

    /// The time from this instant to `other`.
    public func duration(to other: Instant) -> Duration {
      other.offset - offset
    }

    /// Whether this instant comes first.
    public static func < (lhs: Instant, rhs: Instant) -> Bool {
      lhs.offset < rhs.offset
    }
  }

  private struct Sleeper {
    var id: UUID
    var deadline: Instant
    var continuation: CheckedContinuation<Void, any Error>
  }

  private struct State {
    var now = Instant()
    var sleepers: [Sleeper] = []
  }

  private let state = Locked(State())

  /// Create a clock at offset zero.
  public init() {}

  /// The current instant; it moves only through ``advance(by:)``.
  public var now: Instant {
    state.withLock { $0.now }
  }

  /// The smallest step, zero.
  public var minimumResolution: Duration { .zero }

  /// How many tasks are sleeping on this clock.
  public var sleeperCount: Int {
    state.withLock { $0.sleepers.count }
  }

  /// Suspend until the clock is advanced to `deadline`, or throw `CancellationError` when the
  /// task is cancelled.
  /// - Parameters:
  ///   - deadline: The instant to wake at.
  ///   - tolerance: Ignored.
  /// - Throws: `CancellationError` when the task is cancelled before or while it sleeps.
  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    let id = UUID()
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Void, any Error>) in
        let outcome = state.withLock { state -> Result<Void, any Error>? in
          // Checked under the lock that the cancellation handler takes, so a sleep that starts
          // in a cancelled task never stays registered.
          if Task.isCancelled { return .failure(CancellationError()) }
          guard deadline > state.now else { return .success(()) }
          state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
          return nil
        }
        if let outcome {
          continuation.resume(with: outcome)
        }
      }
    } onCancel: {
      let cancelled = state.withLock { state -> Sleeper? in
        guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
        return state.sleepers.remove(at: index)
      }
      cancelled?.continuation.resume(throwing: CancellationError())
    }
  }

  /// Move the clock forward and wake every sleeper whose deadline has come.
  /// - Parameter duration: How far to move.
  public func advance(by duration: Duration) async {
    let woken = state.withLock { state -> [Sleeper] in
      state.now = state.now.advanced(by: duration)
      let now = state.now
      let due = state.sleepers.filter { $0.deadline <= now }
      state.sleepers.removeAll { $0.deadline <= now }
      return due
    }
    for sleeper in woken {
      sleeper.continuation.resume()
    }
    await Task.yield()
  }

  /// Wait until at least `count` tasks sleep on this clock, so that an advance reaches them.
  /// - Parameters:
  ///   - count: How many sleepers to wait for.
  ///   - timeout: The longest to wait, in real time.
  /// - Returns: `true` when they are there.
  @discardableResult
  public func waitForSleepers(_ count: Int = 1, timeout: Duration = .seconds(5)) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while sleeperCount < count {
      guard ContinuousClock.now < deadline else { return false }
      try? await Task.sleep(for: .milliseconds(1))
    }
    return true
  }
}
