import Foundation
import TestSupport
import Testing

@testable import Errand

/// Hostile probes of the body engine (`HTTPBody` over `BodyBuffer` and `BodyState`): readers
/// that wait forever, writers never resumed, readers and writers on different threads.
/// Each probe asserts the safe (or documented) behaviour, so a failure is a finding.
@Suite(.timeLimit(.minutes(3))) struct BodyHostileTests {
  // MARK: Backpressure

  /// How a paused writer's body ends.
  enum Ending: String, CaseIterable, Sendable {
    case finish, finishThrowing, cancel, collect
  }

  /// `HTTPBody.Writer.whenDrained(_:)`: "Call handler once the reader is less than half a memory
  /// budget behind, or collects the whole body (or the body has ended or been cancelled)". A
  /// handler registered while the reader is behind must run when the body ends.
  @Test(arguments: Ending.allCases)
  func aPendingDrainHandlerRunsWhenTheBodyEnds(_ ending: Ending) async throws {
    let (body, writer) = HTTPBody.makeStream(expectedLength: nil) {}
    #expect(writer.write(Data(count: HTTPBody.memoryBudget)) == .pause)
    let drained = AsyncStream<Void>.makeStream()
    let runs = Locked(0)
    writer.whenDrained {
      runs.withLock { $0 += 1 }
      drained.continuation.finish()
    }
    #expect(runs.withLock { $0 } == 0, "ran while the reader is a budget behind")
    var collecting: Task<Data, any Error>?
    switch ending {
    case .finish: writer.finish()
    case .finishThrowing: writer.finish(throwing: URLError(.networkConnectionLost))
    case .cancel: body.cancel()
    case .collect: collecting = Task { try await body.collect() }
    }
    let ran = await returnsInTime(seconds: 60) {
      for await _ in drained.stream {}
      return true
    }
    #expect(ran, "the handler did not run after \(ending.rawValue)")
    writer.finish()
    _ = try? await collecting?.value
    #expect(runs.withLock { $0 } == (ran ? 1 : 0))
    withExtendedLifetime(body) {}
  }

  // MARK: Readers

  /// Two tasks read one body at once (a second `for try await` over a body already being read):
  /// neither hangs, and no chunk is lost or delivered twice.
  @Test func twoConcurrentReadersNeitherHangNorShareAChunk() async throws {
    for _ in 0..<50 {
      let (body, writer) = HTTPBody.makeStream(expectedLength: nil) {}
      let read = { @Sendable () async -> [UInt32] in
        var markers: [UInt32] = []
        do {
          for try await chunk in body {
            markers.append(chunk.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })
          }
        } catch {}
        return markers
      }
      let first = Task { await read() }
      let second = Task { await read() }
      let writing = Thread {
        for marker in UInt32(0)..<200 {
          _ = writer.write(withUnsafeBytes(of: marker) { Data($0) })
        }
        writer.finish()
      }
      writing.start()
      let ended = await returnsInTime(seconds: 60) {
        _ = await first.value
        _ = await second.value
        return true
      }
      #expect(ended, "a reader never returned")
      guard ended else {
        body.cancel()
        return
      }
      let all = (await first.value) + (await second.value)
      #expect(all.count == 200, "\(all.count) chunks delivered")
      #expect(Set(all).count == all.count, "a chunk was delivered twice")
    }
  }

  /// How a body ends while its reader waits, from another thread.
  enum Interruption: String, CaseIterable, Sendable {
    case finish, fail, cancel, deadline, writeThenFinish
  }

  /// A reader waiting for the next chunk always wakes when the body ends on another thread, at
  /// any moment of its wait.
  @Test(arguments: Interruption.allCases)
  func aWaitingReaderAlwaysWakes(_ interruption: Interruption) async throws {
    for iteration in 0..<300 {
      let (body, writer) = HTTPBody.makeStream(expectedLength: nil) {}
      let reader = Task {
        var count = 0
        do {
          for try await chunk in body { count += chunk.count }
        } catch {}
        return count
      }
      let ending = Thread {
        switch interruption {
        case .finish: writer.finish()
        case .fail: writer.finish(throwing: URLError(.networkConnectionLost))
        case .cancel: body.cancel()
        case .deadline: body.stop(throwing: APIError.timedOut)
        case .writeThenFinish:
          _ = writer.write(Data([1]))
          writer.finish()
        }
      }
      ending.start()
      let woke = await returnsInTime(seconds: 60) {
        _ = await reader.value
        return true
      }
      guard woke else {
        Issue.record("iteration \(iteration): the reader still waits after \(interruption)")
        body.cancel()
        return
      }
    }
  }

  /// A writer on another thread and a slow reader: every byte, in order, through the spill file.
  @Test func aWriterOnAnotherThreadDeliversEveryByteInOrder() async throws {
    let bytes = patternBytes(3 * HTTPBody.memoryBudget + 12_345)
    let (body, writer) = HTTPBody.makeStream(expectedLength: bytes.count) {}
    let writing = Thread {
      var start = 0
      while start < bytes.count {
        let end = min(start + 7919, bytes.count)
        _ = writer.write(bytes[start..<end])
        start = end
      }
      writer.finish()
    }
    writing.start()
    var read = Data()
    var chunks = 0
    for try await chunk in body {
      read.append(chunk)
      chunks += 1
      if chunks % 8 == 0 { await Task.yield() }
    }
    #expect(read.count == bytes.count)
    #expect(read == bytes)
  }
}
