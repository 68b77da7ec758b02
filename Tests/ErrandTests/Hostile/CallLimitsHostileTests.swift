import ErrandTesting
import Foundation
import TestSupport
import Testing

@_spi(Transports) @testable import Errand

/// Attacks on `CallLimits`: limits of zero or less, a storm of calls half of which are cancelled
/// while they wait, a waiter that times out, lanes for hosts the client no longer calls, and a
/// hostile server's `Retry-After` and `RateLimit` values (far-future and past dates, numbers
/// too large for an `Int`, windows of no time), a timer task that starts late, a deadline that
/// passes as a call queues, a call cancelled as it gets its slot, a pause from a redirected
/// answer, and a steady stream of higher-priority calls. All on a `TestClock`.
@Suite(.timeLimit(.minutes(3))) struct CallLimitsHostileTests: LimitedCallSuite {
  /// Limits of zero or less mean one: calls still run, one at a time, instead of none ever
  /// starting.
  @Test(arguments: [0, -3])
  func limitsOfZeroOrLessMeanOne(_ limit: Int) async throws {
    let server = CallLimitsTests.Server()
    let client = Self.client(
      await CallLimitsTests.stub(server),
      CallLimits(maximumCalls: limit, maximumCallsPerHost: limit))
    let calls = (0..<3).map { CallLimitsTests.call(client, "dogs/\($0)") }
    for _ in 0..<3 {
      #expect(await eventually { server.waiting == 1 })
      server.releaseOne()
    }
    for call in calls { #expect(try await call.value == ["ok"]) }
    #expect(server.most == 1)
  }

  /// A storm: 200 calls through one slot, every other one cancelled while it waits. No cancelled
  /// call reaches the server, the others go in order, one at a time, and every slot comes back
  /// (the limiter forgets the lane once it is idle).
  @Test func aStormWithHalfCancelledSendsOnlyTheRest() async throws {
    let server = CallLimitsTests.Server()
    let client = Self.client(await CallLimitsTests.stub(server), CallLimits(maximumCalls: 1))
    let count = 200
    let limiter = try #require(client.limiter)
    var calls: [Task<[String], any Error>] = []
    // One at a time, so that the order they queue in is known.
    for index in 0..<count {
      calls.append(CallLimitsTests.call(client, "c\(index)"))
      #expect(await eventually { server.waiting == 1 && limiter.waitingCount == index })
    }
    for index in stride(from: 1, to: count, by: 2) { calls[index].cancel() }
    var released = 0
    while released < count / 2 {
      #expect(await eventually { server.waiting == 1 })
      server.releaseOne()
      released += 1
    }
    for (index, call) in calls.enumerated() {
      let result = await call.result
      if index % 2 == 0 {
        #expect(try result.get() == ["ok"])
      } else if case .failure(let error) = result {
        #expect((error as? APIError)?.kind == .cancelled)
      } else {
        Issue.record("call \(index) was cancelled while it waited, yet it succeeded")
      }
    }
    #expect(server.order == stride(from: 0, to: count, by: 2).map { "c\($0)" })
    #expect(server.most == 1)
    #expect(await eventually { limiter.laneCount == 0 })
  }

  /// A waiter that times out leaves the lane as it was: the next call takes the slot when it
  /// frees.
  @Test func aTimedOutWaiterDoesNotStickTheLane() async throws {
    let clock = TestClock()
    let server = CallLimitsTests.Server()
    let stub = await CallLimitsTests.stub(server)
    let client = Self.client(stub, CallLimits(maximumCallsPerHost: 1), clock: clock)
    let first = Self.get(client, "first")
    #expect(await eventually { server.waiting == 1 })
    let late = Self.get(client, "late", timeout: .seconds(5))
    try #require(await clock.waitForSleeper(dueIn: .seconds(5)))
    await clock.advance(by: .seconds(5))
    let error = await #expect(throws: APIError.self) { _ = try await late.value }
    #expect(error?.kind == .timedOut)
    #expect(error?.context?.rateLimitWait == nil, "a wait for a slot is no rate limit")
    let next = Self.get(client, "next")
    #expect(await eventually { client.inFlight.count == 2 })
    server.releaseOne()
    #expect(try await first.value.status == 200)
    #expect(await eventually { server.waiting == 1 })
    server.releaseOne()
    #expect(try await next.value.status == 200)
    #expect(server.order == ["first", "next"])
  }

  /// Calls to a thousand hosts, one after the other: the limiter keeps nothing for a host once
  /// its calls have ended and it holds nothing back (no pause, no window, a full bucket); with a
  /// rate, a bucket refills with time, and the lanes are swept once they have doubled.
  @Test(arguments: [nil, RequestRate(5, per: .seconds(1))])
  func idleLanesAreForgotten(_ rate: RequestRate?) async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.any, .json(["ok"]))
    let client = Self.client(stub, CallLimits(maximumCallsPerHost: 2, rate: rate), clock: clock)
    for index in 0..<1000 {
      _ = try await Self.get(client, "https://h\(index).example.com/x").value
    }
    let limiter = try #require(client.limiter)
    guard rate != nil else {
      #expect(limiter.laneCount == 0, "no lane kept for a thousand idle hosts")
      return
    }
    // Buckets still refilling hold state; once full, the next sweep forgets them.
    await clock.advance(by: .seconds(1))
    for index in 0..<100 {
      _ = try await Self.get(client, "https://later\(index).example.com/x").value
    }
    #expect(limiter.laneCount <= 100, "the thousand refilled lanes were swept")
  }

  /// Values a hostile or broken server sends, and how long each holds its host: a date far in
  /// the future or a number too large for an `Int` hold it for the longest pause (60 s here),
  /// not forever nor not at all; a date in the past, a negative number or a window of no time
  /// hold nothing.
  enum Hostile: String, CaseIterable, CustomTestStringConvertible {
    case dateFarInTheFuture, delayTooLargeForAnInt, dateInThePast, negativeDelay
    case hugeRemainingNoTime, noneRemainingNoTime, olderFieldsNoTime
    var testDescription: String { rawValue }

    var answer: StubResponse {
      switch self {
      case .dateFarInTheFuture:
        .status(429, headers: ["Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT"])
      case .delayTooLargeForAnInt:
        .status(503, headers: ["Retry-After": "99999999999999999999999"])
      case .dateInThePast: .status(429, headers: ["Retry-After": "Sun, 06 Nov 1994 08:49:37 GMT"])
      case .negativeDelay: .status(429, headers: ["Retry-After": "-30"])
      case .hugeRemainingNoTime: .status(200, headers: ["RateLimit": "\"d\";r=999999999999999;t=0"])
      case .noneRemainingNoTime: .status(200, headers: ["RateLimit": "\"d\";r=0;t=0"])
      case .olderFieldsNoTime:
        .status(200, headers: ["RateLimit-Remaining": "0", "RateLimit-Reset": "0"])
      }
    }

    var holds: Duration? {
      switch self {
      case .dateFarInTheFuture, .delayTooLargeForAnInt: .seconds(60)
      default: nil
      }
    }
  }

  @Test(arguments: Hostile.allCases)
  func hostileServerValuesHoldTheHostBoundedly(_ hostile: Hostile) async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.get, "/v1/first", hostile.answer)
    await stub.on(.get, "/v1/later", .json(["ok"]))
    let client = Self.client(stub, CallLimits(longestPause: .seconds(60)), clock: clock)
    _ = try await Self.get(client, "first").value
    let later = Self.get(client, "later")
    defer { later.cancel() }
    if let holds = hostile.holds {
      try #require(await clock.waitForSleeper(dueIn: holds))
      #expect(await stub.requests.count == 1, "held")
      await clock.advance(by: holds)
    }
    #expect(try await later.value.status == 200)
    #expect(await stub.requests.count == 2)
  }

  static let host = url("https://api.example.com/v1/dogs")

  /// A server's pause ends when it says, however late the task that wakes the waiting calls
  /// starts: its timer counts from when it was armed. (Before the fix it counted from when its
  /// task ran, here 10 s late, and the pause ended at 40 s.)
  @Test func aPauseEndsOnTimeHoweverLateItsTimerTaskStarts() async throws {
    let base = TestClock()
    let clock = SkewedClock(base, lag: .seconds(10))
    clock.markOnTime()
    let limiter = CallLimiter(limits: CallLimits(), clock: clock)
    limiter.observe(HTTPResponse(status: 429, headers: ["Retry-After": "30"]), for: Self.host)
    let queued = Locked(false)
    let waiter = Task {
      clock.markOnTime()
      let (permit, waited) = try await limiter.acquire(
        for: Self.host, priority: .normal, deadline: nil,
        onQueued: { queued.withLock { $0 = true } })
      permit.release()
      return waited
    }
    defer { waiter.cancel() }
    // The clock moves only once the call waits (its wait measured from then): a waiter task
    // that started after the advance would find the pause over and wait for nothing.
    try #require(await eventually { queued.withLock { $0 } }, "the call waits")
    try #require(await base.waitForSleeper(dueIn: .seconds(30)), "woken at 30 s")
    await base.advance(by: .seconds(30))
    #expect(try await waiter.value == .seconds(30))
  }

  /// A waiting call whose deadline has passed by the time it is queued ends at once with
  /// `timedOut`, even when the timer that would end it fires late (here: not until the clock
  /// moves again). Before the fix it waited for the timer, and here for ever.
  @Test func aWaiterWhoseDeadlinePassedAsItQueuedEndsAtOnce() async throws {
    let base = TestClock()
    let clock = SkewedClock(base, pastDeadlinesWait: true)
    let limiter = CallLimiter(limits: CallLimits(maximumCalls: 1), clock: clock)
    let (held, _) = try await limiter.acquire(for: Self.host, priority: .normal, deadline: nil)
    defer { held.release() }
    let deadline = RequestDeadline(timeout: .seconds(5), clock: clock)
    await base.advance(by: .seconds(5))
    let waiter = Task {
      try await limiter.acquire(for: Self.host, priority: .normal, deadline: deadline).permit
    }
    let ended = Locked(false)
    let watcher = Task {
      _ = await waiter.result
      ended.withLock { $0 = true }
    }
    #expect(await eventually { ended.withLock { $0 } }, "ended at once")
    waiter.cancel()
    await watcher.value
    let error = await #expect(throws: APIError.self) { _ = try await waiter.value }
    #expect(error?.kind == .timedOut)
    #expect(limiter.waitingCount == 0)
  }

  /// A call cancelled just as it is given its slot (after the grant, before its task runs on)
  /// sends nothing and gives the slot back at once. Before the fix it went on with the slot.
  @Test func aCallCancelledAsItGetsItsSlotGivesItBack() async throws {
    guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) else { return }
    let limiter = CallLimiter(limits: CallLimits(maximumCalls: 1), clock: TestClock())
    let (held, _) = try await limiter.acquire(for: Self.host, priority: .normal, deadline: nil)
    let executor = HeldExecutor()
    let waiter = Task(executorPreference: executor) {
      try await limiter.acquire(for: Self.host, priority: .normal, deadline: nil).permit
    }
    #expect(await eventually { limiter.waitingCount == 1 })
    executor.hold()
    held.release()
    #expect(await eventually { executor.heldCount == 1 }, "granted, not yet running")
    waiter.cancel()
    executor.release()
    let result = await waiter.result
    #expect(throws: CancellationError.self) { _ = try result.get() }
    if case .success(let permit) = result { permit.release() }
    let (next, waited) = try await limiter.acquire(
      for: Self.host, priority: .normal, deadline: nil)
    #expect(waited == nil, "the slot came back")
    next.release()
  }

  /// A `429` with `Retry-After` that a redirect led to pauses the host that answered, not the
  /// one the request went to first.
  @Test func aPauseFromARedirectedAnswerHoldsTheHostThatAnswered() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    let moved = url("https://other.example.com/moved")
    await stub.on(
      .get, "/v1/first",
      .response(HTTPResponse(status: 429, headers: ["Retry-After": "30"], url: moved)))
    await stub.on(.get, "/v1/later", .json(["ok"]))
    await stub.on(.get, "/moved", .json(["ok"]))
    let client = Self.client(stub, CallLimits(), clock: clock)
    _ = try await Self.get(client, "first").value
    let other = Self.get(client, moved.absoluteString)
    defer { other.cancel() }
    try #require(await clock.waitForSleeper(dueIn: .seconds(30)), "the host that answered waits")
    #expect(try await Self.get(client, "later").value.status == 200, "the first host does not")
    await clock.advance(by: .seconds(30))
    #expect(try await other.value.status == 200)
    #expect(await stub.requests.map(\.url.lastPathComponent) == ["first", "later", "moved"])
  }

  /// Under a steady stream of user-initiated calls through one slot, a background call still
  /// starts: passed over `promotionAfter` times it moves up a level, then again, and then goes
  /// before the user-initiated calls that came after it. Before the fix it never started.
  @Test func aBackgroundCallIsNotStarvedByAStreamOfHigherOnes() async throws {
    let server = CallLimitsTests.Server()
    let client = Self.client(await CallLimitsTests.stub(server), CallLimits(maximumCalls: 1))
    let limiter = try #require(client.limiter)
    var calls = [CallLimitsTests.call(client, "u0", priority: .userInitiated)]
    #expect(await eventually { server.waiting == 1 })
    let background = CallLimitsTests.call(client, "background", priority: .background)
    #expect(await eventually { limiter.waitingCount == 1 })
    let bound = 2 * CallLimiter.promotionAfter + 1
    for round in 1...bound + 1 {
      // Always a user-initiated call waiting beside it when the slot frees.
      calls.append(CallLimitsTests.call(client, "u\(round)", priority: .userInitiated))
      #expect(await eventually { limiter.waitingCount == 2 })
      server.releaseOne()
      #expect(await eventually { server.waiting == 1 })
      if server.order.contains("background") { break }
    }
    let started = server.order.firstIndex(of: "background")
    #expect(started.map { $0 <= bound } == true, "started after \(server.order.count) calls")
    // Cancelled, the waiting calls never start; the one the server holds is let go.
    for call in calls + [background] { call.cancel() }
    #expect(await eventually { limiter.waitingCount == 0 })
    server.releaseAll()
    for call in calls + [background] { _ = await call.result }
  }
}
