import ErrandTesting
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct TestClockTests {
  @Test func aSleepStartedInACancelledTaskThrowsAndLeavesNoSleeper() async {
    let clock = TestClock()
    let task = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      try await clock.sleep(for: .seconds(1))
    }
    await #expect(throws: CancellationError.self) { try await task.cancellableValue }
    #expect(clock.sleeperCount == 0)
  }

  @Test func advancingWakesOnlyTheSleepersThatAreDue() async throws {
    let clock = TestClock()
    let early = Task { try await clock.sleep(for: .seconds(1)) }
    let late = Task { try await clock.sleep(for: .seconds(10)) }
    try #require(await clock.waitForSleepers(2))
    await clock.advance(by: .seconds(1))
    try await early.cancellableValue
    #expect(clock.sleeperCount == 1)
    late.cancel()
    await #expect(throws: CancellationError.self) { try await late.cancellableValue }
    #expect(clock.sleeperCount == 0)
  }

  @Test func waitingForSleepersEndsWhenTheLastOneRegisters() async throws {
    let clock = TestClock()
    let waiter = Task { await clock.waitForSleepers(2) }
    let first = Task { try await clock.sleep(for: .seconds(1)) }
    let second = Task { try await clock.sleep(for: .seconds(2)) }
    #expect(await waiter.cancellableValue)
    #expect(clock.sleeperCount == 2)
    await clock.advance(by: .seconds(2))
    try await first.cancellableValue
    try await second.cancellableValue
  }

  /// Only a sleeper due exactly then counts, and an advance can bring one there.
  @Test func waitingForASleeperDueInADurationIgnoresTheOthers() async throws {
    let clock = TestClock()
    let late = Task { try await clock.sleep(for: .seconds(60)) }
    try #require(await clock.waitForSleepers(1))
    await withKnownIssue("no sleeper is due in 30 s") {
      #expect(await clock.waitForSleeper(dueIn: .seconds(30), timeout: .milliseconds(20)) == false)
    }
    let soon = Task { try await clock.sleep(for: .seconds(30)) }
    #expect(await clock.waitForSleeper(dueIn: .seconds(30)))
    await clock.advance(by: .seconds(30))
    try await soon.cancellableValue
    #expect(await clock.waitForSleeper(dueIn: .seconds(30)))
    late.cancel()
    await #expect(throws: CancellationError.self) { try await late.cancellableValue }
  }

  @Test func aWaitThatRunsOutRecordsAnIssueAndACancelledOneDoesNot() async {
    let clock = TestClock()
    await withKnownIssue("nothing ever sleeps on this clock") {
      #expect(await clock.waitForSleepers(timeout: .milliseconds(20)) == false)
    }
    let cancelled = Task { await clock.waitForSleepers() }
    cancelled.cancel()
    #expect(await cancelled.cancellableValue == false)
  }
}
