import Foundation
import Testing

@testable import Errand

/// The body's state machine on its own: each event is a call, each effect a value to inspect; no
/// threads, no tasks. A reader's wake is a number.
@Suite(.timeLimit(.minutes(3))) struct BodyStateTests {
  typealias State = BodyState<Int>

  /// Counts how often the transfer was told to stop.
  final class Stops: Sendable {
    let count = Locked(0)
    var onCancel: @Sendable () -> Void { { self.count.withLock { $0 += 1 } } }
    var value: Int { count.withLock { $0 } }
  }

  static func chunk(_ count: Int) -> Data { Data(repeating: 7, count: count) }

  @Test func aWaitingReaderIsWokenWithTheChunkAndTakesItOnce() throws {
    var state = State(expectedLength: nil, limit: nil, onCancel: {})
    let (waited, effects) = state.awaitNext(1)
    #expect(waited == .waiting(wait: 1))
    #expect(effects.wake == nil)
    let (outcome, written) = state.write(Data("ab".utf8))
    #expect(outcome == .proceed)
    #expect(written.wake == 1)
    #expect(try state.takeAnswer().get() == Data("ab".utf8))
    // Taken once: nothing is left for a second take.
    #expect(throws: CancellationError.self) { try state.takeAnswer().get() }
  }

  @Test func queuedChunksAreTakenWithoutWaitingThenTheEnd() throws {
    var state = State(expectedLength: 4, limit: nil, onCancel: {})
    _ = state.write(Data("ab".utf8))
    _ = state.write(Data("cd".utf8))
    #expect(state.finish(throwing: nil).wake == nil)
    #expect(try state.takeNext().0?.get() == Data("ab".utf8))
    #expect(try state.takeNext().0?.get() == Data("cd".utf8))
    let end = try #require(state.takeNext().0)
    #expect(try end.get() == nil)
  }

  /// Over the limit, whether announced, crossed by a write, or lowered below what arrived: the
  /// body ends with the size error, the transfer is told to stop exactly once, a waiting reader
  /// is woken with the error, and later writes answer `stop`.
  @Test(arguments: ["announced", "written", "lowered"])
  func aBodyOverItsLimitEndsWithTheSizeErrorAndStopsOnce(how: String) throws {
    let stops = Stops()
    var state = State(
      expectedLength: how == "announced" ? 11 : nil, limit: 10, onCancel: stops.onCancel)
    var effects = State.Effects()
    switch how {
    case "written":
      _ = state.awaitNext(1)
      _ = state.write(Self.chunk(6))  // woken with it
      _ = try state.takeAnswer().get()
      _ = state.awaitNext(2)
      let (outcome, crossed) = state.write(Self.chunk(5))
      #expect(outcome == .stop)
      effects = crossed
      #expect(effects.wake == 2)
    case "lowered":
      _ = state.write(Self.chunk(6))
      effects = state.limit(to: 5, expectedLength: nil)
      #expect(state.queue.unread == 0)
    default:
      #expect(state.isStopped)
    }
    effects.stopTransfer?()
    #expect(stops.value == (how == "announced" ? 0 : 1))
    let error = try #require(throws: URLError.self) {
      if how == "written" { try state.takeAnswer().get() } else { try state.takeNext().0?.get() }
    }
    #expect(error.code == .dataLengthExceedsMaximum)
    #expect(state.write(Self.chunk(1)).0 == .stop)
    #expect(state.stop(throwing: URLError(.timedOut)).stopTransfer == nil)
  }

  @Test func cancellingWakesTheReaderStopsTheTransferOnceAndDropsWhatIsQueued() {
    let stops = Stops()
    var state = State(expectedLength: nil, limit: nil, onCancel: stops.onCancel)
    _ = state.write(Self.chunk(100))
    let drained = Locked(0)
    _ = state.whenDrained { drained.withLock { $0 += 1 } }  // run at once: not behind
    var effects = state.cancel()
    #expect(state.queue.unread == 0)
    #expect(effects.wake == nil)
    effects.stopTransfer?()
    #expect(stops.value == 1)
    #expect(state.cancel().stopTransfer == nil)
    #expect(state.write(Self.chunk(1)).0 == .stop)
    #expect(state.awaitNext(3).0 == .refused)
    // A reader waiting when the body is cancelled is woken with CancellationError.
    var waited = State(expectedLength: nil, limit: nil, onCancel: {})
    _ = waited.awaitNext(4)
    effects = waited.cancel()
    #expect(effects.wake == 4)
    #expect(throws: CancellationError.self) { try waited.takeAnswer().get() }
  }

  /// The writer is told to pause at a memory budget unread, and resumed once the reader is less
  /// than half a budget behind (or collects, or the body ends).
  @Test(arguments: ["reads", "collects", "ends"])
  func aPausedWriterIsResumedWhenTheReaderCatchesUp(how: String) throws {
    var state = State(expectedLength: nil, limit: nil, onCancel: {})
    let piece = HTTPBody.memoryBudget / 4
    var outcomes: [HTTPBody.WriteOutcome] = []
    for _ in 0..<4 { outcomes.append(state.write(Self.chunk(piece)).0) }
    #expect(outcomes == [.proceed, .proceed, .proceed, .pause])
    let resumed = Locked(0)
    #expect(state.whenDrained { resumed.withLock { $0 += 1 } }.drained.isEmpty)
    var effects = State.Effects()
    switch how {
    case "reads":
      // Three quarters, then half a budget unread: still behind; then a quarter: caught up.
      #expect(state.takeNext().1.drained.isEmpty)
      #expect(state.takeNext().1.drained.isEmpty)
      #expect(resumed.withLock { $0 } == 0)
      effects = state.takeNext().1
    case "collects":
      effects = state.awaitWhole(9).1
    default:
      effects = state.stop(throwing: URLError(.networkConnectionLost))
    }
    #expect(effects.drained.count == 1)
    for handler in effects.drained { handler() }
    #expect(resumed.withLock { $0 } == 1)
  }

  @Test func aCollectingReaderGetsEveryLaterChunkAppendedAndIsWokenOnceAtTheEnd() throws {
    var state = State(expectedLength: nil, limit: nil, onCancel: {})
    _ = state.write(Data("a".utf8))
    #expect(state.awaitWhole(5).0 == .waiting(wait: nil))
    #expect(state.write(Data("b".utf8)).1.wake == nil)
    #expect(state.write(Data("c".utf8)).1.wake == nil)
    #expect(state.awaitNext(6).0 == .refused)
    #expect(state.finish(throwing: nil).wake == 5)
    #expect(try state.takeAnswer().get() == Data("abc".utf8))
  }

  @Test func aBodyThatHasEndedIsTakenWholeWithoutWaiting() throws {
    var state = State(expectedLength: nil, limit: nil, onCancel: {})
    _ = state.write(Data("whole".utf8))
    #expect(state.takeWholeIfEnded() == nil)
    _ = state.finish(throwing: nil)
    #expect(try state.takeWholeIfEnded()?.get() == Data("whole".utf8))
  }

  /// An idle timer ends only the wait it was armed for.
  @Test func anIdleTimerEndsOnlyItsOwnWait() throws {
    var state = State(expectedLength: nil, limit: nil, onCancel: {})
    _ = state.awaitNext(1)
    let kept = state.keepIdleTimer({}, for: 1)
    #expect(kept)
    _ = state.write(Data("x".utf8))
    _ = try state.takeAnswer().get()
    _ = state.awaitNext(2)
    let keptForAnEndedWait = state.keepIdleTimer({}, for: 1)
    #expect(!keptForAnEndedWait)
    #expect(state.expire(1).wake == nil)
    #expect(state.expire(2).wake == 2)
    let error = try #require(throws: APIError.self) { try state.takeAnswer().get() }
    guard case .timedOut = error else {
      Issue.record("expected .timedOut, got \(error)")
      return
    }
  }
}
