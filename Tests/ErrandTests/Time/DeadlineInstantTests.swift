import ErrandTesting
import Foundation
import TestSupport
import Testing

@_spi(Transports) @testable import Errand

/// A deadline is an instant fixed when its call starts: however often the clock is read, and
/// however far it moves, while the code computes what is left and arms its timer, the timer is
/// armed for that instant. Before the fix the time left was read, then the clock read again to
/// arm the timer: a test clock advanced in between (a loaded machine under ThreadSanitizer, once
/// in a dozen runs) armed it that much later, and the call waited past its deadline for good.
@Suite(.timeLimit(.minutes(3))) struct DeadlineInstantTests {
  /// How a timer is armed from a call's deadline.
  enum Arming: String, CaseIterable {
    /// `RequestDeadline.race`, as a stub or a transport bounds a wait.
    case race
    /// `RequestDeadline.whenExpired`, as a transport arms its own timer.
    case whenExpired
    /// `withDeadline(_:on:)`, a timeout counted from when it is called.
    case withDeadline
  }

  /// Every read of the clock moves it one second on; the timer must still be armed for ten
  /// seconds after the start, and fire when the clock gets there.
  @Test(arguments: Arming.allCases)
  func aTimerIsArmedForTheDeadlineHoweverTheClockMovesMeanwhile(_ arming: Arming) async throws {
    let clock = DriftingClock()
    let start = clock.now
    let deadline = RequestDeadline(timeout: .seconds(10), clock: clock)
    clock.drift(by: .seconds(1))
    let never = TestClock.Instant(offset: .seconds(3600))
    let fired = Locked(false)
    let call = Task {
      switch arming {
      case .race:
        try await deadline.race { try await clock.sleep(until: never) }
      case .whenExpired:
        _ = deadline.whenExpired { fired.withLock { $0 = true } }
        try await clock.sleep(until: never)
      case .withDeadline:
        try await withDeadline(.seconds(10), on: clock) { try await clock.sleep(until: never) }
      }
    }
    defer { call.cancel() }
    try #require(await eventually { clock.sleepers.count == 2 }, "the wait and its timer sleep")
    clock.stopDrifting()
    // `withDeadline` counts from its first read of the clock, which came before any drift.
    let timer = start.advanced(by: .seconds(10))
    // Required: a timer armed later would leave the call below waiting for good.
    try #require(clock.sleepers == [timer, never], "armed for \(clock.sleepers), not \(timer)")
    clock.set(to: timer)
    switch arming {
    case .whenExpired:
      #expect(await eventually { fired.withLock { $0 } }, "the handler ran at the deadline")
    case .race, .withDeadline:
      let error = await #expect(throws: APIError.self) { try await call.value }
      #expect(error?.kind == .timedOut)
    }
  }
}

/// A clock that moves only when told, and, once told to drift, one step further every time it
/// is read: as a loaded machine looks to code that reads it twice.
private final class DriftingClock: Clock, Sendable {
  typealias Instant = TestClock.Instant

  private struct State {
    var now = Instant()
    var step = Duration.zero
    var sleepers: [UUID: (deadline: Instant, wake: CheckedContinuation<Void, any Error>)] = [:]
  }

  private let state = Locked(State())

  var now: Instant {
    state.withLock { state in
      defer { state.now = state.now.advanced(by: state.step) }
      return state.now
    }
  }

  var minimumResolution: Duration { .zero }

  /// The instants the sleepers wake at, earliest first.
  var sleepers: [Instant] {
    state.withLock { $0.sleepers.values.map(\.deadline).sorted() }
  }

  /// Move `step` on at every read from now on.
  func drift(by step: Duration) {
    state.withLock { $0.step = step }
  }

  /// Stop drifting.
  func stopDrifting() {
    state.withLock { $0.step = .zero }
  }

  /// Set the time, waking every sleeper due by then.
  func set(to instant: Instant) {
    let due = state.withLock { state in
      state.now = instant
      let due = state.sleepers.filter { $0.value.deadline <= instant }
      for id in due.keys { state.sleepers[id] = nil }
      return due.values.map(\.wake)
    }
    for wake in due { wake.resume() }
  }

  func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    let id = UUID()
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (wake: CheckedContinuation<Void, any Error>) in
        let outcome = state.withLock { state -> Result<Void, any Error>? in
          if Task.isCancelled { return .failure(CancellationError()) }
          guard deadline > state.now else { return .success(()) }
          state.sleepers[id] = (deadline, wake)
          return nil
        }
        if let outcome { wake.resume(with: outcome) }
      }
    } onCancel: {
      state.withLock { $0.sleepers.removeValue(forKey: id) }?.wake.resume(
        throwing: CancellationError())
    }
  }
}
