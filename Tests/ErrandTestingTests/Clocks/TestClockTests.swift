import ErrandTesting
import Testing

@Suite(.timeLimit(.minutes(2))) struct TestClockTests {
  @Test func aSleepStartedInACancelledTaskThrowsAndLeavesNoSleeper() async {
    let clock = TestClock()
    let task = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      try await clock.sleep(for: .seconds(1))
    }
    await #expect(throws: CancellationError.self) { try await task.value }
    #expect(clock.sleeperCount == 0)
  }

  @Test func advancingWakesOnlyTheSleepersThatAreDue() async throws {
    let clock = TestClock()
    let early = Task { try await clock.sleep(for: .seconds(1)) }
    let late = Task { try await clock.sleep(for: .seconds(10)) }
    try #require(await clock.waitForSleepers(2))
    await clock.advance(by: .seconds(1))
    try await early.value
    #expect(clock.sleeperCount == 1)
    late.cancel()
    await #expect(throws: CancellationError.self) { try await late.value }
    #expect(clock.sleeperCount == 0)
  }
}
