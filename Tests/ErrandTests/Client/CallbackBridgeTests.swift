import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct CallbackBridgeTests {
  /// Runs the completion, noting whether it ran on `queue` and how many times.
  final class Completion<Value: Sendable>: @unchecked Sendable {
    let key = DispatchSpecificKey<String>()
    let queue = DispatchQueue(label: "errand.tests.response-queue")
    private let lock = NSLock()
    private var results: [(onQueue: Bool, result: Result<Value, APIError>)] = []
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init() {
      queue.setSpecific(key: key, value: "response-queue")
    }

    func record(_ result: Result<Value, APIError>) {
      let onQueue = DispatchQueue.getSpecific(key: key) == "response-queue"
      let waiting = lock.withLock {
        results.append((onQueue, result))
        defer { waiters = [] }
        return waiters
      }
      for waiter in waiting {
        waiter.resume()
      }
    }

    func first() async -> (onQueue: Bool, result: Result<Value, APIError>) {
      await withCheckedContinuation { continuation in
        let ready = lock.withLock {
          if results.isEmpty { waiters.append(continuation) }
          return !results.isEmpty
        }
        if ready { continuation.resume() }
      }
      return lock.withLock { results[0] }
    }

    /// How many times the completion ran, once every block queued on `queue` so far has run.
    func countOnceTheQueueDrains() async -> Int {
      await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
      return lock.withLock { results.count }
    }
  }

  @Test(arguments: [true, false])
  func completionRunsOnTheGivenQueueOnce(succeeds: Bool) async throws {
    let stub = StubTransport { _ in succeeds ? .json([Dog(name: "Rex")]) : .status(500) }
    let client = APIClient(baseURL: url("https://api.example.com"), transport: stub)
    let completion = Completion<[Dog]>()
    client.send(Endpoint<[Dog]>(path: "dogs"), queue: completion.queue) { completion.record($0) }
    let (onQueue, result) = await completion.first()
    #expect(onQueue)
    switch result {
    case .success(let dogs): #expect(succeeds && dogs == [Dog(name: "Rex")])
    case .failure(let error): #expect(!succeeds && error.kind == .unacceptableStatus)
    }
    #expect(await completion.countOnceTheQueueDrains() == 1)
  }

  @Test func cancellingDeliversCancelledOnce() async throws {
    let client = APIClient(
      baseURL: url("https://api.example.com"), transport: StubTransport { _ in .hang })
    let completion = Completion<Void>()
    let handle = client.send(Endpoint<Void>(path: "never"), queue: completion.queue) {
      completion.record($0)
    }
    handle.cancel()
    #expect(handle.isCancelled)
    let (onQueue, result) = await completion.first()
    #expect(onQueue)
    guard case .failure(let error) = result else {
      Issue.record("expected a failure")
      return
    }
    #expect(error.kind == .cancelled)
    #expect(await completion.countOnceTheQueueDrains() == 1)
  }
}
