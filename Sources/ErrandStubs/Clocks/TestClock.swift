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
public final class TestClock: Clock, Sendable {
  /// A point on a test clock: the time since the clock was created.
  public struct Instant: InstantProtocol, Hashable, Sendable {
    /// The time since the clock was created.
    public var offset: Duration

    /// Create an instant.
    /// - Parameter offset: The time since the clock was created.
    public init(offset: Duration = .zero) {
      self.offset = offset
    }

    /// The instant `duration` later, saturated at about ±2.3 × 10^21 years (eight times
    /// `.seconds(Int64.max)`) rather than overflowing `Duration`: a test that advances by
    /// `.seconds(Int64.max)` again and again ("run every timer") keeps going.
    public func advanced(by duration: Duration) -> Instant {
      Instant(offset: Self.saturated(Self.saturated(offset) + Self.saturated(duration)))
    }

    /// The farthest an instant's offset goes either way; twice it still fits a `Duration`.
    private static let farthest = Swift.Duration.seconds(Int64.max) * 8

    private static func saturated(_ duration: Swift.Duration) -> Swift.Duration {
      Swift.min(Swift.max(duration, .zero - farthest), farthest)
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
    /// Tasks in ``waitForSleepers(_:timeout:fileID:filePath:line:column:)`` and
    /// ``waitForSleeper(dueIn:timeout:fileID:filePath:line:column:)``.
    var waiters = ConditionWaiters<State>()
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
        let outcome = state.change(\.waiters) { state -> Result<Void, any Error>? in
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
  /// - Parameter duration: How far to move; a negative duration moves nothing, since a clock
  ///   never goes back (a sleeper already woken would otherwise find itself early, and a timeout
  ///   measured on the clock would grow).
  public func advance(by duration: Duration) async {
    let step = max(duration, .zero)
    // Sleepers further out may come within a waiter's reach.
    let woken = state.change(\.waiters) { state -> [Sleeper] in
      state.now = state.now.advanced(by: step)
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
  ///
  /// Returns as soon as the sleeper that makes up the count registers: it waits for that event,
  /// not for time to pass, so a busy machine makes it slower but never makes it fail. The
  /// timeout only guards against a test that would otherwise hang (the code under test never
  /// sleeps); when it runs out, the running test gets an issue at the caller's line that says
  /// so.
  ///
  /// Advance the clock only after this returned `true`: a sleeper that registers after an
  /// advance counts its time from the new instant and misses that advance. Where sleepers come
  /// and go (a stream's next chunk beside a timeout re-armed for each chunk), a count can be
  /// reached by a sleeper about to leave: wait for the one you mean with
  /// ``waitForSleeper(dueIn:timeout:fileID:filePath:line:column:)``.
  /// - Parameters:
  ///   - count: How many sleepers to wait for.
  ///   - timeout: The longest to wait, in real time: 60 seconds by default.
  ///   - fileID: The caller's file, for the issue recorded when the timeout runs out.
  ///   - filePath: The caller's file path, likewise.
  ///   - line: The caller's line, likewise.
  ///   - column: The caller's column, likewise.
  /// - Returns: `true` when they are there; `false` when the timeout ran out or the waiting
  ///   task was cancelled first.
  @discardableResult
  public func waitForSleepers(
    _ count: Int = 1, timeout: Duration = .seconds(60), fileID: String = #fileID,
    filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async -> Bool {
    await wait(
      for: "\(count) sleeper(s)", timeout: timeout,
      at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    ) { _, deadlines in deadlines.count >= count }
  }

  /// Wait until a task sleeps until exactly `duration` from now: the one sleeper a test means,
  /// however many others come and go.
  ///
  /// ```swift
  /// // A stream whose chunks come every 30 s, read with a 60 s timeout for each chunk: once the
  /// // reader has re-armed its timeout (and so dropped the old one), wait for the stub's sleep.
  /// try #require(await clock.waitForSleeper(dueIn: .seconds(60)))
  /// try #require(await clock.waitForSleeper(dueIn: .seconds(30)))
  /// await clock.advance(by: .seconds(30))
  /// ```
  ///
  /// Returns as soon as that sleeper registers; the timeout only guards against a hang, as in
  /// ``waitForSleepers(_:timeout:fileID:filePath:line:column:)``.
  /// - Parameters:
  ///   - duration: How far from now the sleeper wakes.
  ///   - timeout: The longest to wait, in real time: 60 seconds by default.
  ///   - fileID: The caller's file, for the issue recorded when the timeout runs out.
  ///   - filePath: The caller's file path, likewise.
  ///   - line: The caller's line, likewise.
  ///   - column: The caller's column, likewise.
  /// - Returns: `true` when it is there; `false` when the timeout ran out or the waiting task
  ///   was cancelled first.
  @discardableResult
  public func waitForSleeper(
    dueIn duration: Duration, timeout: Duration = .seconds(60), fileID: String = #fileID,
    filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) async -> Bool {
    await wait(
      for: "a sleeper due in \(duration)", timeout: timeout,
      at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    ) { now, deadlines in deadlines.contains(now.advanced(by: duration)) }
  }

  /// Wait until `condition` holds of the clock's time and its sleepers' deadlines, without
  /// polling (see `ConditionWaiters`), recording an issue at `site` when the timeout runs out.
  private func wait(
    for what: String, timeout: Duration, at site: CallSite,
    until condition: @escaping @Sendable (_ now: Instant, _ deadlines: [Instant]) -> Bool
  ) async -> Bool {
    let arrived = await state.wait(on: \.waiters, timeout: timeout) { state in
      condition(state.now, state.sleepers.map(\.deadline))
    }
    if !arrived && !Task.isCancelled {
      site.recordIssue(
        "TestClock gave up waiting for \(what) after \(timeout) of real time, with "
          + "\(sleeperCount) sleeper(s): the code under test never slept so on this clock (or hangs)."
      )
    }
    return arrived
  }
}
