import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Probes of the task each call's exchange now runs in, so that `cancelAll()` can cancel it:
/// what the caller's task carries (task-local values, the trace, its priority, its
/// cancellation) must reach the middleware and the transport as before, and nothing of the call
/// may still run once the call has returned.
@Suite(.timeLimit(.minutes(3))) struct CallTaskHostileTests {
  /// A value of the app's own, bound around a call.
  enum Ambient {
    @TaskLocal static var user: String?
  }

  /// What the middleware and the transport saw of their task.
  struct Seen: Sendable, Equatable {
    var user: String?
    var trace: String?
    var endpoint: String?
    var priority: TaskPriority
  }

  /// Records what its task carries, then passes the request on.
  struct Records: Middleware {
    let into: Locked<[Seen]>

    func intercept(
      _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
      into.withLock {
        $0.append(
          Seen(
            user: Ambient.user, trace: TraceContext.current?.traceID,
            endpoint: RequestContext.current?.endpoint, priority: Task.currentPriority))
      }
      return try await next(request)
    }
  }

  /// The caller's task-local values, its trace and its priority reach the middleware and the
  /// transport, for a buffered and a streamed call alike.
  @Test(arguments: [TaskPriority.low, .medium, .high], [false, true])
  func theCallersTaskReachesTheExchange(priority: TaskPriority, streams: Bool) async throws {
    let atTransport = Locked<[String?]>([])
    let stub = StubTransport { _ in
      atTransport.withLock { $0.append(Ambient.user) }
      return .status(200, body: Data("ok".utf8))
    }
    let seen = Locked<[Seen]>([])
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        timeout: nil, middleware: [Records(into: seen), TraceContextMiddleware()]))
    let trace = TraceContext.newTrace()
    let endpoint = Endpoint<Data>(path: "dogs", decoding: .data)
    // Waited for through a continuation: awaiting the task itself would raise its priority.
    let callers = try await withCheckedThrowingContinuation { continuation in
      Task(priority: priority) {
        do {
          let caller = try await Ambient.$user.withValue("user-7") {
            try await TraceContext.$current.withValue(trace) {
              let caller = Task.currentPriority
              if streams {
                _ = try await client.stream(endpoint).collect()
              } else {
                _ = try await client.send(endpoint)
              }
              return caller
            }
          }
          continuation.resume(returning: caller)
        } catch {
          continuation.resume(throwing: error)
        }
      }
    }
    #expect(callers == priority)
    #expect(
      seen.withLock { $0 }
        == [Seen(user: "user-7", trace: trace.traceID, endpoint: "GET dogs", priority: callers)])
    #expect(atTransport.withLock { $0 } == ["user-7"])
    let sent = await stub.requests
    #expect(sent.first?.headers["traceparent"]?.contains(trace.traceID) == true)
  }

  /// Who ends a call, and how its middleware waits.
  enum Ending: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case callerWhileItSleeps, clientWhileItSleeps, callerWhileItFinishesItsWork
    case clientWhileItFinishesItsWork
    var testDescription: String { rawValue }
    var byClient: Bool { self == .clientWhileItSleeps || self == .clientWhileItFinishesItsWork }
    var sleeps: Bool { self == .callerWhileItSleeps || self == .clientWhileItSleeps }
  }

  /// Waits in the chain (on the test clock, or for a gate it does not let a cancellation
  /// interrupt), then notes whether its task was cancelled and that it has left.
  struct Waits: Middleware {
    let sleeps: Bool
    let clock: TestClock
    let gate: AsyncGate
    let state = Locked((entered: false, cancelled: false, left: false))

    func intercept(
      _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
      defer { state.withLock { $0.left = true } }
      state.withLock { $0.entered = true }
      if sleeps {
        try await clock.sleep(for: .seconds(100))
      } else {
        await gate.wait()
      }
      state.withLock { $0.cancelled = Task.isCancelled }
      try Task.checkCancellation()
      return try await next(request)
    }
  }

  /// A call ended by its caller or by its client reaches its exchange's task as a cancellation,
  /// and returns only once its middleware has left: nothing of it runs after it has returned.
  @Test(arguments: Ending.allCases)
  func nothingOfACallRunsAfterItReturns(_ ending: Ending) async throws {
    let clock = TestClock()
    let gate = AsyncGate()
    let waits = Waits(sleeps: ending.sleeps, clock: clock, gate: gate)
    let stub = StubTransport()
    await stub.on(.any, .status(200))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(timeout: nil, middleware: [waits], clock: clock))
    let left = Locked<Bool?>(nil)
    let call = Task {
      defer { left.withLock { $0 = waits.state.withLock { $0.left } } }
      _ = try await client.send(Endpoint<Data>(path: "dogs", decoding: .data))
    }
    defer { call.cancel() }
    if ending.sleeps {
      try #require(await clock.waitForSleeper(dueIn: .seconds(100)))
    } else {
      #expect(await eventually { waits.state.withLock { $0.entered } })
    }
    if ending.byClient {
      #expect(client.cancelAll() == 1)
    } else {
      call.cancel()
    }
    await gate.open()
    await expectCancelled(call)
    #expect(left.withLock { $0 } == true)
    #expect(waits.state.withLock { $0.cancelled } || ending.sleeps)
    #expect(await stub.requests.isEmpty)
    #expect(client.inFlight.isEmpty)
  }

  /// Runs its jobs on a queue of its own. (Task executors are new in macOS 15 and iOS 18.)
  @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
  final class QueueExecutor: TaskExecutor {
    let queue = DispatchQueue(label: "errand.test.executor", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
      let job = UnownedJob(job)
      queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
  }

  /// Notes whether it runs with `executor` as its task's executor preference.
  @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
  struct NotesExecutor: Middleware {
    let executor: UnownedTaskExecutor
    let onIt: Locked<[Bool]>

    func intercept(
      _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
      let preferred = withUnsafeCurrentTask { $0?.unownedTaskExecutor }
      onIt.withLock { $0.append(preferred == executor) }
      return try await next(request)
    }
  }

  /// A transport that notes the task each exchange runs in, and answers at once. It says it
  /// ends its waits when the call's client cancels the call, as Errand's own transports do (it
  /// has none).
  struct NotesTask: ExchangeTransport, CallCancellationAware {
    let tasks: Locked<[Int]>

    func exchange(_ request: HTTPRequest, _ exchange: Exchange) async throws -> HTTPResponse {
      tasks.withLock { $0.append(withUnsafeCurrentTask { $0?.hashValue } ?? 0) }
      return HTTPResponse(status: 200, body: Data("ok".utf8))
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
      try await exchange(request, Exchange())
    }
  }

  /// A call that meets only Errand's own parts runs in its caller's task (no task of its own to
  /// create per call, and what the caller's task carries reaches the transport as it is); one
  /// that meets a middleware of the app's runs in a task of its own, which `cancelAll()` can
  /// cancel, since nothing else would end that middleware's waits.
  @Test(arguments: [false, true]) func whereACallRuns(withTheAppsMiddleware: Bool) async throws {
    let tasks = Locked<[Int]>([])
    let client = APIClient(
      baseURL: base, transport: NotesTask(tasks: tasks),
      configuration: APIClient.Configuration(
        timeout: .seconds(30),
        middleware: withTheAppsMiddleware
          ? [Records(into: Locked([])), RetryMiddleware()] : [RetryMiddleware()]))
    let endpoint = Endpoint<Data>(path: "dogs", decoding: .data)
    _ = try await client.send(endpoint)
    _ = try await client.stream(endpoint).collect()
    let caller = withUnsafeCurrentTask { $0?.hashValue } ?? -1
    let seen = tasks.withLock { $0 }
    #expect(seen.count == 2)
    if withTheAppsMiddleware {
      #expect(!seen.contains(caller), "the call ran in its caller's task")
    } else {
      #expect(seen == [caller, caller], "the call ran in a task of its own")
    }
  }

  /// A task executor preference (SE-0417) set around a call reaches its middleware. Known
  /// issue, not fixed, for a call that meets a middleware or a transport of the app's: its
  /// exchange runs in an unstructured task (so that `cancelAll()` can cancel it), which does not
  /// inherit the preference, and there is no API to read the caller's preference as an executor
  /// to hand on. (A call that meets only Errand's own parts runs in its caller's task:
  /// `whereACallRuns`.) When this is fixed, `withKnownIssue` fails and the test should lose it.
  @Test func theCallersExecutorPreferenceReachesTheMiddleware() async throws {
    guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else { return }
    let executor = QueueExecutor()
    let onIt = Locked<[Bool]>([])
    let stub = StubTransport()
    await stub.on(.any, .status(200))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        timeout: nil,
        middleware: [NotesExecutor(executor: executor.asUnownedTaskExecutor(), onIt: onIt)]))
    let outside = try await withTaskExecutorPreference(executor) {
      _ = try await client.send(Endpoint<Data>(path: "dogs", decoding: .data))
      return withUnsafeCurrentTask { $0?.unownedTaskExecutor } == executor.asUnownedTaskExecutor()
    }
    #expect(outside, "the preference holds in the caller's task")
    withKnownIssue("an unstructured task does not inherit the caller's executor preference") {
      #expect(onIt.withLock { $0 } == [true])
    }
  }
}
