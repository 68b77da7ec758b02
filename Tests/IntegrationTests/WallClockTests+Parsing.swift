import Foundation
import LoopbackServer
import Testing

/// The loopback server's request parser costs time in proportion to what it reads, however the
/// request arrives: in many small pieces, a long head, a long chunk-size line, a slow trailer.
extension WallClockTests {
  /// The loopback server reads a request in as many pieces as it arrives in time proportional
  /// to its length: a chunked body of 40,000 one-byte chunks, parsed after every 6 bytes, takes
  /// at most 8 times as long as one of 10,000 (each read parsed the buffer from its start:
  /// quadratic, 16 times).
  @Test func aRequestReadInSmallPiecesIsParsedInTimeProportionalToItsLength() {
    func best(_ chunks: Int) -> Duration {
      let head = Array("PUT /up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
      let bytes =
        head + Array(String(repeating: "1\r\nx\r\n", count: chunks).utf8)
        + Array("0\r\n\r\n".utf8)
      var fastest = Duration.seconds(3600)
      for _ in 0..<3 {
        let start = ContinuousClock.now
        var progress = ParseProgress()
        var buffer: [UInt8] = []
        var outcome = ParsedRequest.incomplete(expectsContinue: false)
        for index in stride(from: 0, to: bytes.count, by: 6) {
          buffer += bytes[index..<min(bytes.count, index + 6)]
          outcome = RequestParser.parse(buffer, progress: &progress)
        }
        fastest = min(fastest, ContinuousClock.now - start)
        guard case .complete(let request, _) = outcome else {
          Issue.record("\(chunks) chunks: \(outcome)")
          return fastest
        }
        #expect(request.body.count == chunks)
      }
      return fastest
    }
    let small = best(10_000)
    let large = best(40_000)
    #expect(large < max(small * 8, .milliseconds(50)), "10,000 chunks: \(small), 40,000: \(large)")
    print(
      "wall clock: 10,000 and 40,000 one-byte chunks read 6 bytes at a time: \(small), \(large)")
  }

  /// A trailer arriving one byte at a time: 4 times as long a trailer must take at
  /// most 8 times as long (quadratic: 16 times).
  @Test func aSlowTrailerIsParsedInTimeProportionalToItsLength() {
    func request(_ lines: Int) -> [UInt8] {
      ParseProgressHostileTests.bytes(
        ParseProgressHostileTests.chunkedHead + "1\r\nx\r\n0\r\n"
          + String(repeating: "X-T: 1\r\n", count: lines)
          + "\r\n")
    }
    let (small, smallOutcome) = ParseProgressHostileTests.bestTime(request(250), step: 1)
    let (large, largeOutcome) = ParseProgressHostileTests.bestTime(request(1_000), step: 1)
    guard case .complete = smallOutcome, case .complete = largeOutcome else {
      Issue.record("not parsed: \(smallOutcome), \(largeOutcome)")
      return
    }
    #expect(
      large < max(small * 8, .milliseconds(50)), "2,000-byte trailer: \(small), 8,000: \(large)")
    print("wall clock: trailers of 2,000 and 8,000 bytes read 1 byte at a time: \(small), \(large)")
  }

  /// A head of 60,000 bytes arriving one byte at a time against one of 15,000: at
  /// most 8 times as long.
  @Test func aLongHeadSentOneByteAtATimeIsParsedInTimeProportionalToItsLength() {
    let (small, smallOutcome) = ParseProgressHostileTests.bestTime(
      ParseProgressHostileTests.get(headLength: 15_000), step: 1)
    let (large, largeOutcome) = ParseProgressHostileTests.bestTime(
      ParseProgressHostileTests.get(headLength: 60_000), step: 1)
    guard case .complete = smallOutcome, case .complete = largeOutcome else {
      Issue.record("not parsed: \(smallOutcome), \(largeOutcome)")
      return
    }
    #expect(large < max(small * 8, .milliseconds(50)), "15,000: \(small), 60,000: \(large)")
    print("wall clock: heads of 15,000 and 60,000 bytes read 1 byte at a time: \(small), \(large)")
  }

  /// One 16 KiB chunk whose data arrives 4 bytes at a time, its chunk-size line 4 KiB
  /// long (an extension) against 6 bytes: the request is 1.25 times as long, so it must take at
  /// most 8 times as long (each read parses the whole chunk-size line again: far more).
  @Test func aChunkWithALongSizeLineReadInPiecesIsParsedInTimeProportionalToItsLength() {
    func request(extensionLength: Int) -> [UInt8] {
      let line =
        "4000" + (extensionLength > 0 ? ";" + String(repeating: "e", count: extensionLength) : "")
      return ParseProgressHostileTests.bytes(
        ParseProgressHostileTests.chunkedHead + line + "\r\n"
          + String(repeating: "d", count: 16_384) + "\r\n0\r\n\r\n")
    }
    let (short, shortOutcome) = ParseProgressHostileTests.bestTime(
      request(extensionLength: 0), step: 4)
    let (long, longOutcome) = ParseProgressHostileTests.bestTime(
      request(extensionLength: 4_000), step: 4)
    guard case .complete = shortOutcome, case .complete = longOutcome else {
      Issue.record("not parsed: \(shortOutcome), \(longOutcome)")
      return
    }
    #expect(long < max(short * 8, .milliseconds(50)), "6-byte line: \(short), 4 KiB line: \(long)")
    print(
      "wall clock: a 16 KiB chunk read 4 bytes at a time, 6-byte and 4 KiB size line: \(short), \(long)"
    )
  }
}
