import Errand
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct HTTPBodyTests {
  /// A reader that has not started yet costs no more than the memory budget: the rest waits in a
  /// temporary file and comes back byte for byte, in order.
  @Test(arguments: [1_000, 64 * 1024, 1_000_000])
  func bytesBeyondTheMemoryBudgetComeBackInOrder(chunkSize: Int) async throws {
    let total = 3 * HTTPBody.memoryBudget + 12_345
    let bytes = patternBytes(total)
    let (body, writer) = HTTPBody.makeStream(expectedLength: total) {}
    var offset = 0
    while offset < total {
      let end = min(offset + chunkSize, total)
      writer.write(bytes[offset..<end])
      offset = end
    }
    writer.finish()
    #expect(try await body.collect() == bytes)
  }

  /// A reader that keeps up gets the chunks as written; one half a memory budget behind or more
  /// gets the queued chunks merged (up to 256 KB at a time), in order, nothing lost.
  @Test(arguments: [
    (30_000, 10_000), (HTTPBody.memoryBudget / 2 + 50_000, 260_000),
    (HTTPBody.memoryBudget + 50_000, 260_000),
  ])
  func aReaderFarBehindGetsLargerChunks(total: Int, firstChunk: Int) async throws {
    let bytes = patternBytes(total)
    let (body, writer) = HTTPBody.makeStream(expectedLength: total) {}
    var offset = 0
    while offset < total {
      let end = min(offset + 10_000, total)
      writer.write(bytes[offset..<end])
      offset = end
    }
    writer.finish()
    var iterator = body.makeAsyncIterator()
    let first = try #require(try await iterator.next())
    #expect(first.count == firstChunk)
    var received = first
    while let chunk = try await iterator.next() {
      received.append(chunk)
    }
    #expect(received == bytes)
  }

  @Test func readingWhileWritingKeepsTheOrder() async throws {
    let bytes = patternBytes(5 * HTTPBody.memoryBudget)
    let (body, writer) = HTTPBody.makeStream(expectedLength: nil) {}
    let producer = Task {
      var offset = 0
      while offset < bytes.count {
        let end = min(offset + 50_000, bytes.count)
        writer.write(bytes[offset..<end])
        offset = end
        if offset % 500_000 < 50_000 { await Task.yield() }
      }
      writer.finish()
    }
    var collected = Data()
    for try await chunk in body {
      collected.append(chunk)
    }
    await producer.value
    #expect(collected == bytes)
  }

  @Test func theErrorThatEndsTheTransferReachesTheReaderAfterTheChunks() async throws {
    let (body, writer) = HTTPBody.makeStream(expectedLength: nil) {}
    writer.write(Data("ab".utf8))
    writer.finish(throwing: URLError(.networkConnectionLost))
    var iterator = body.makeAsyncIterator()
    #expect(try await iterator.next() == Data("ab".utf8))
    let error = await #expect(throws: URLError.self) { try await iterator.next() }
    #expect(error?.code == .networkConnectionLost)
  }

  @Test func droppingTheBodyBeforeTheEndStopsTheTransferOnce() async throws {
    let stops = Locked(0)
    do {
      let (body, writer) = HTTPBody.makeStream(expectedLength: nil) { stops.withLock { $0 += 1 } }
      writer.write(Data("a".utf8))
      var iterator = body.makeAsyncIterator()
      _ = try await iterator.next()
      #expect(!writer.isStopped)
      body.cancel()
      #expect(writer.isStopped)
    }
    #expect(stops.withLock { $0 } == 1)
  }

  @Test func aFinishedBodyStopsNothing() async throws {
    let stops = Locked(0)
    do {
      let (body, writer) = HTTPBody.makeStream(expectedLength: nil) { stops.withLock { $0 += 1 } }
      writer.write(Data("a".utf8))
      writer.finish()
      _ = body
    }
    #expect(stops.withLock { $0 } == 0)
  }

  @Test(arguments: [(5, nil as Int?), (5, 5), (4, nil), (4, 5)])
  func collectStopsAtTheLimit(limit: Int, expectedLength: Int?) async throws {
    let (body, writer) = HTTPBody.makeStream(expectedLength: expectedLength) {}
    writer.write(Data("abc".utf8))
    writer.write(Data("de".utf8))
    writer.finish()
    if limit >= 5 {
      #expect(try await body.collect(upTo: limit) == Data("abcde".utf8))
    } else {
      let error = await #expect(throws: URLError.self) { try await body.collect(upTo: limit) }
      #expect(error?.code == .dataLengthExceedsMaximum)
    }
  }

  /// The body answers each write: go on, pause (the reader is a memory budget behind), or stop
  /// (the reader left, or the body ended).
  @Test(arguments: ["reader left", "body finished"])
  func eachWriteIsAnsweredProceedPauseOrStop(ending: String) async throws {
    let (body, writer) = HTTPBody.makeStream(expectedLength: nil) {}
    #expect(writer.write(Data(count: 1000)) == .proceed)
    #expect(writer.write(Data(count: HTTPBody.memoryBudget - 2000)) == .proceed)
    #expect(writer.write(Data(count: 1000)) == .pause)
    #expect(writer.write(Data(count: 1)) == .pause)
    if ending == "reader left" {
      body.cancel()
    } else {
      writer.finish()
    }
    #expect(writer.write(Data(count: 1)) == .stop)
    #expect(writer.isStopped)
  }

  /// The size limit is the body's: the write that crosses it is refused with `stop`, the
  /// transfer is stopped once, and the reader gets what came before, then the size error.
  @Test func theWriteThatCrossesTheLimitStopsTheTransferOnce() async throws {
    let stops = Locked(0)
    let (body, writer) = HTTPBody.makeStream(expectedLength: nil, limit: 10) {
      stops.withLock { $0 += 1 }
    }
    #expect(writer.write(Data("abcdef".utf8)) == .proceed)
    #expect(writer.write(Data("ghij".utf8)) == .proceed)
    #expect(writer.write(Data("k".utf8)) == .stop)
    #expect(writer.write(Data("l".utf8)) == .stop)
    writer.finish()
    #expect(stops.withLock { $0 } == 1)
    var iterator = body.makeAsyncIterator()
    #expect(try await iterator.next() == Data("abcdef".utf8))
    #expect(try await iterator.next() == Data("ghij".utf8))
    let error = await #expect(throws: URLError.self) { try await iterator.next() }
    #expect(error?.code == .dataLengthExceedsMaximum)
  }

  /// A body announced longer than its limit has ended before the first byte: the transport sees
  /// it stopped, and the reader gets the size error.
  @Test func aBodyAnnouncedLongerThanItsLimitHasEndedAtOnce() async throws {
    let (body, writer) = HTTPBody.makeStream(expectedLength: 11, limit: 10) {}
    #expect(writer.isStopped)
    #expect(writer.write(Data("a".utf8)) == .stop)
    let error = await #expect(throws: URLError.self) { try await body.collect() }
    #expect(error?.code == .dataLengthExceedsMaximum)
  }

  /// A collecting reader takes what is queued, resumes a writer paused for it, and gets every
  /// later chunk appended, however far past the memory budget, with no pause asked.
  @Test func aCollectingReaderResumesAPausedWriterAndTakesEverything() async throws {
    let bytes = patternBytes(3 * HTTPBody.memoryBudget)
    let (body, writer) = HTTPBody.makeStream(expectedLength: nil) {}
    #expect(writer.write(bytes[..<HTTPBody.memoryBudget]) == .pause)
    let (drained, drain) = AsyncStream<Void>.makeStream()
    writer.whenDrained { drain.yield() }
    let collecting = Task { try await body.collect() }
    for await _ in drained { break }
    var outcomes: Set<HTTPBody.WriteOutcome> = []
    var offset = HTTPBody.memoryBudget
    while offset < bytes.count {
      let end = min(offset + 100_000, bytes.count)
      outcomes.insert(writer.write(bytes[offset..<end]))
      offset = end
    }
    writer.finish()
    #expect(try await collecting.value == bytes)
    #expect(outcomes == [.proceed])
  }
}
