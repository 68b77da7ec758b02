import Errand
import Foundation
import LoopbackServer
import Testing

/// Hostile review of commit a4bd977 (`ParseProgress`): a request parsed in pieces, each parse
/// going on from where the last one stopped, must give what parsing it whole gives, at every
/// step, and the server's verdict must not depend on how the client's bytes were split into
/// reads. A failing probe is a finding.
@Suite(.timeLimit(.minutes(3))) struct ParseProgressHostileTests {
  // MARK: - Helpers

  static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

  /// What a parse gives, readably.
  static func describe(_ outcome: ParsedRequest) -> String {
    switch outcome {
    case .incomplete(let expectsContinue): "incomplete(continue: \(expectsContinue))"
    case .malformed(let reason): "malformed(\(reason))"
    case .complete(let request, let consumed):
      "complete(\(request.method) \(request.target), body \(request.body.count) bytes, "
        + "headers \(request.headers.count), consumed \(consumed))"
    }
  }

  /// Feeds `bytes` cut at every prefix length in `lengths` (growing), comparing each parse in
  /// pieces with the parse from scratch; the prefix lengths where they differ.
  static func mismatches(_ bytes: [UInt8], lengths: some Sequence<Int>) -> [String] {
    var progress = ParseProgress()
    var found: [String] = []
    for length in lengths {
      let prefix = Array(bytes[..<length])
      let inPieces = RequestParser.parse(prefix, progress: &progress)
      let whole = RequestParser.parse(prefix)
      if inPieces != whole {
        found.append("\(length): in pieces \(describe(inPieces)), whole \(describe(whole))")
      }
      if case .complete = inPieces { break }
      if case .malformed = inPieces { break }
    }
    return found
  }

  /// Reads `bytes` as `Connection.run` does (incremental parse, progress reset after each whole
  /// request, stop at the first malformed one), the client's bytes arriving in reads that end
  /// at `cuts`: the verdicts, in order.
  static func serve(_ bytes: [UInt8], cuts: [Int]) -> [String] {
    var verdicts: [String] = []
    var buffer: [UInt8] = []
    var progress = ParseProgress()
    var read = 0
    for end in (cuts.filter { $0 > 0 && $0 < bytes.count }.sorted()) + [bytes.count] {
      guard end > read else { continue }
      buffer += bytes[read..<end]
      read = end
      parsing: while true {
        switch RequestParser.parse(buffer, progress: &progress) {
        case .incomplete:
          break parsing
        case .malformed(let reason):
          verdicts.append("malformed(\(reason))")
          return verdicts
        case .complete(let request, let consumed):
          verdicts.append(describe(.complete(request, consumed: consumed)))
          buffer.removeFirst(consumed)
          progress = ParseProgress()
        }
      }
    }
    if !buffer.isEmpty { verdicts.append("incomplete, \(buffer.count) bytes left") }
    return verdicts
  }

  /// The cuts in `cuts` for which serving `bytes` in two reads gives another verdict than
  /// serving it in one.
  static func splitDependence(_ bytes: [UInt8], cuts: some Sequence<Int>) -> [String] {
    let whole = serve(bytes, cuts: [])
    return cuts.compactMap { cut in
      let split = serve(bytes, cuts: [cut])
      return split == whole ? nil : "cut at \(cut): \(split) instead of \(whole)"
    }
  }

  static let chunkedHead = "PUT /up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"

  /// A GET whose head (from its first byte to the start of its final CRLF CRLF) is `length`
  /// bytes long.
  static func get(headLength length: Int) -> [UInt8] {
    let start = "GET /big HTTP/1.1\r\nHost: x\r\nX-Pad: "
    return bytes(start + String(repeating: "a", count: length - start.utf8.count) + "\r\n\r\n")
  }

  // MARK: - Piecewise against whole, pure parser

  @Test func theHeadEndSplitAtEveryOffsetParsesAsWhole() {
    let request = Self.bytes(
      "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET /b HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    for first in 0...request.count {
      let found = Self.mismatches(request, lengths: [first, request.count].filter { $0 > 0 })
      #expect(found.isEmpty, "\(found)")
    }
    #expect(Self.mismatches(request, lengths: 1...request.count).isEmpty)
    #expect(Self.splitDependence(request, cuts: 1..<request.count).isEmpty)
  }

  /// Heads at the limit (65,536 bytes with the final CRLFCRLF: 65,532 before it) and over it:
  /// every prefix near the end, in pieces and whole, agree; and the verdict does not depend on
  /// where the client's bytes were split.
  @Test(arguments: [65_531, 65_532, 65_533, 65_536, 65_541])
  func aHeadAtTheLimitGivesOneVerdictHoweverItIsSplit(headLength: Int) {
    let request = Self.get(headLength: headLength)
    let near = (request.count - 12)...request.count
    #expect(Self.mismatches(request, lengths: near).isEmpty)
    let found = Self.splitDependence(request, cuts: near.dropLast())
    #expect(found.isEmpty, "head of \(headLength) bytes: \(found.prefix(4))")
  }

  /// The limit is the documented one: a head of `maximumHeadLength` bytes, its final CRLFCRLF
  /// included, is read; one byte more is refused, whole or read a byte at a time near its end.
  @Test(arguments: [0, 1])
  func theHeadLimitIsExact(over: Int) {
    let limit = RequestParser.maximumHeadLength
    #expect(limit == 65_536)
    let request = Self.get(headLength: limit - 4 + over)
    #expect(request.count == limit + over)
    var progress = ParseProgress()
    var verdict = RequestParser.parse([], progress: &progress)
    for length in (request.count - 8)...request.count {
      verdict = RequestParser.parse(Array(request[..<length]), progress: &progress)
    }
    for outcome in [verdict, RequestParser.parse(request)] {
      switch outcome {
      case .complete(let parsed, let consumed):
        #expect(over == 0, "a head of \(request.count) bytes was read")
        #expect(consumed == request.count && parsed.target == "/big")
      case .malformed(let reason):
        #expect(over == 1, "a head of \(request.count) bytes was refused: \(reason)")
        #expect(reason == "the head is longer than 65536 bytes")
      case .incomplete:
        Issue.record("a whole head of \(request.count) bytes is still incomplete")
      }
    }
  }

  @Test func aHeadSentOneByteAtATimeParsesAsWhole() {
    let request = Self.get(headLength: 20_000)
    #expect(Self.mismatches(request, lengths: 1...request.count).isEmpty)
    #expect(Self.serve(request, cuts: Array(1..<request.count)) == Self.serve(request, cuts: []))
  }

  @Test(arguments: [
    "GET / HTTP/1.1\r\nHost: x\rX: y\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: x\nX: y\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: x\r\n\r\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: x\r\n\n\r\n\r\n",
    "GET / HTTP/1.1\r\r\nHost: x\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: x\r\n\r",
    "\r\n\r\n",
    "\r\r\n\r\n",
  ])
  func aCROrAnLFAloneInTheHeadGivesOneVerdict(text: String) {
    let request = Self.bytes(text)
    #expect(Self.mismatches(request, lengths: 1...request.count).isEmpty)
    #expect(Self.splitDependence(request, cuts: 1..<request.count).isEmpty)
    #expect(Self.serve(request, cuts: Array(1..<request.count)) == Self.serve(request, cuts: []))
  }

  /// A chunk-size line of exactly 4 KiB (the longest accepted) and one byte longer, cut
  /// anywhere near its end.
  @Test(arguments: [4_095, 4_096, 4_097])
  func aChunkSizeLineAtTheLimitGivesOneVerdictHoweverItIsSplit(lineLength: Int) {
    let line = "1;" + String(repeating: "e", count: lineLength - 2)
    let request = Self.bytes(Self.chunkedHead + line + "\r\nx\r\n0\r\n\r\n")
    let lineEnd = Self.chunkedHead.utf8.count + lineLength
    let near = (lineEnd - 3)...(lineEnd + 3)
    #expect(Self.mismatches(request, lengths: 1...request.count).isEmpty)
    let found = Self.splitDependence(request, cuts: near)
    #expect(found.isEmpty, "chunk-size line of \(lineLength) bytes: \(found)")
  }

  @Test(arguments: [
    "5;a=b;c=\"d;e\"\r\nhello\r\n0\r\n\r\n",
    "5 ;a\r\nhello\r\n1\t;b\r\n!\r\n0;z\r\nT: 1\r\nU: 2\r\n\r\n",
    "0\r\nX-Sum: 1\r\n\r\n",
    "0\r\nX-Sum: 1\r\nbad line\r\n\r\n",
    "0\r\nX: a\rb\r\n\r\n",
    "0\r\n X: folded\r\n\r\n",
    "3\r\nabcX\r\n0\r\n\r\n",
    "FFFFFFFFFFFFFFF\r\nab",
    "1000000000000000\r\n",
    "0\r\n\r",
  ])
  func chunkExtensionsAndTrailersGiveOneVerdictHoweverTheyAreSplit(body: String) {
    let request = Self.bytes(Self.chunkedHead + body + "GET /after HTTP/1.1\r\nHost: x\r\n\r\n")
    #expect(Self.mismatches(request, lengths: 1...request.count).isEmpty)
    #expect(Self.splitDependence(request, cuts: 1..<request.count).isEmpty)
    for step in 1...5 {
      let cuts = Array(stride(from: step, to: request.count, by: step))
      #expect(Self.serve(request, cuts: cuts) == Self.serve(request, cuts: []), "step \(step)")
    }
  }

  /// A trailer whose final empty line starts exactly 64 KiB after the trailer's start (the
  /// longest accepted), cut anywhere near its end.
  @Test func aTrailerAtTheLimitGivesOneVerdictHoweverItIsSplit() {
    let before = Self.chunkedHead + "1\r\nx\r\n0\r\n"
    let line = "X-T: " + String(repeating: "t", count: 65_536 - 2 - 5)
    let request = Self.bytes(before + line + "\r\n\r\n")
    guard case .complete = RequestParser.parse(request) else {
      Issue.record("whole: \(Self.describe(RequestParser.parse(request)))")
      return
    }
    let near = (request.count - 6)..<request.count
    #expect(Self.mismatches(request, lengths: near).isEmpty)
    let found = Self.splitDependence(request, cuts: near)
    #expect(found.isEmpty, "\(found)")
  }

  @Test func contentLengthAndTransferEncodingBothAreRefusedHoweverSplit() {
    let request = Self.bytes(
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "3\r\nabc\r\n0\r\n\r\n")
    #expect(Self.mismatches(request, lengths: 1...request.count).isEmpty)
    #expect(Self.splitDependence(request, cuts: 1..<request.count).isEmpty)
    #expect(Self.serve(request, cuts: []).first?.hasPrefix("malformed") == true)
  }

  @Test func expectContinueArrivingInPiecesIsReportedAsWhole() {
    let request = Self.bytes(
      "POST /c HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "2\r\nok\r\n0\r\nT: 1\r\n\r\n")
    #expect(Self.mismatches(request, lengths: 1...request.count).isEmpty)
  }

  /// Two or three requests on one keep-alive connection, the last malformed, read in pieces of
  /// every size from 1 to 9 bytes: the same verdicts as read whole.
  @Test(arguments: [
    "GET / HTTP/1.1\r\n\r\n",
    "POST /3 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
    "POST /3 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    "POST /3 HTTP/1.1\r\nHost: x\r\nContent-Length: 1, 2\r\n\r\nab",
    "POST /3 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nno colon\r\n\r\n",
  ])
  func pipelinedRequestsWhoseLastIsMalformedGiveOneVerdict(last: String) {
    let first = "POST /1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
    let second =
      "PUT /2 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;e\r\nabc\r\n0\r\nT: 1\r\n\r\n"
    for text in [first + last, first + second + last] {
      let request = Self.bytes(text)
      let whole = Self.serve(request, cuts: [])
      #expect(whole.last?.hasPrefix("malformed") == true, "\(whole)")
      for step in 1...9 {
        let cuts = Array(stride(from: step, to: request.count, by: step))
        #expect(Self.serve(request, cuts: cuts) == whole, "step \(step)")
      }
    }
  }

  /// A `ParseProgress` used again after its parse said malformed, or after the request was
  /// whole, must not crash (index out of range) on a buffer as long or longer.
  @Test func progressAfterAVerdictDoesNotCrash() {
    let requests = [
      Self.bytes(Self.chunkedHead + "3\r\nabcX\r\n0\r\n\r\n"),
      Self.bytes(Self.chunkedHead + "3\r\nabc\r\n0\r\n\r\n"),
      Self.get(headLength: 65_541),
    ]
    for request in requests {
      var progress = ParseProgress()
      for length in 1...request.count {
        _ = RequestParser.parse(Array(request[..<length]), progress: &progress)
      }
      _ = RequestParser.parse(request + Self.bytes("1\r\nz\r\n"), progress: &progress)
    }
  }

  // MARK: - Cost (the wall-clock probes are in WallClockTests+Parsing.swift)

  /// Best of three runs of parsing `bytes` after every `step` bytes.
  static func bestTime(_ bytes: [UInt8], step: Int) -> (Duration, ParsedRequest) {
    var fastest = Duration.seconds(3_600)
    var outcome = ParsedRequest.incomplete(expectsContinue: false)
    for _ in 0..<3 {
      let start = ContinuousClock.now
      var progress = ParseProgress()
      var buffer: [UInt8] = []
      buffer.reserveCapacity(bytes.count)
      for index in stride(from: 0, to: bytes.count, by: step) {
        buffer += bytes[index..<min(bytes.count, index + step)]
        outcome = RequestParser.parse(buffer, progress: &progress)
      }
      fastest = min(fastest, ContinuousClock.now - start)
    }
    return (fastest, outcome)
  }

  // MARK: - Over a socket

  /// A head at the parser's limit (65,536 bytes), its final CRLF CRLF split across two writes: the server must
  /// answer 200, as it does when the request comes in one write. (Between the writes the client
  /// reads for one second: a bounded read for an answer that must not come, so that the server
  /// reads the first part alone.)
  @Test func overASocketAHeadAtTheLimitSplitInItsEndIsServed() throws {
    let server = try LoopbackServer { _ in .text("fine") }
    defer { server.stop() }
    let request = Self.get(headLength: RequestParser.maximumHeadLength - 4)
    let client = try RawConnection(port: server.port)
    defer { client.close() }
    #expect(client.send(Array(request[..<(request.count - 3)])))
    let early = String(decoding: client.receive(atLeast: 1, timeout: .seconds(1)), as: UTF8.self)
    #expect(
      early.isEmpty, "answered before the head was whole: \(early.prefix(60).debugDescription)")
    _ = client.send(Array(request[(request.count - 3)...]))
    let answer = String(decoding: early.utf8 + client.receiveAll(), as: UTF8.self)
    #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(answer.prefix(80).debugDescription)")
    #expect(server.requests.map(\.target) == ["/big"])
    #expect(server.malformedRequests.isEmpty, "\(server.malformedRequests)")
  }

  /// Many one-byte chunks, each byte in its own write.
  @Test func overASocketManyTinyChunksSentByteByByteAreRecorded() throws {
    let server = try LoopbackServer { _ in .text("fine") }
    defer { server.stop() }
    let count = 1_500
    let request = Self.bytes(
      Self.chunkedHead + String(repeating: "1;x\r\nz\r\n", count: count) + "0\r\nT: 1\r\n\r\n")
    let client = try RawConnection(port: server.port)
    defer { client.close() }
    for byte in request { #expect(client.send([byte])) }
    let answer = String(decoding: client.receiveAll(), as: UTF8.self)
    #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(answer.prefix(80).debugDescription)")
    #expect(server.requests.first?.body == Data(repeating: UInt8(ascii: "z"), count: count))
  }

  /// `Expect: 100-continue`, the head sent a byte per write: `100 Continue` once the head is
  /// whole, then the body a byte per write; the request recorded whole, answered once.
  @Test func overASocketExpectContinueInPiecesIsAnsweredOnce() throws {
    let server = try LoopbackServer { _ in .text("fine") }
    defer { server.stop() }
    let head = Self.bytes(
      "POST /c HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n")
    let body = Self.bytes("3;a=b\r\nabc\r\n2\r\nde\r\n0\r\nX-T: 1\r\n\r\n")
    let client = try RawConnection(port: server.port)
    defer { client.close() }
    for byte in head { #expect(client.send([byte])) }
    let interim = "HTTP/1.1 100 Continue\r\n\r\n"
    let first = client.receive(atLeast: interim.utf8.count, timeout: .seconds(30))
    #expect(String(decoding: first, as: UTF8.self) == interim)
    for byte in body { #expect(client.send([byte])) }
    let answer = String(decoding: client.receiveAll(), as: UTF8.self)
    #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(answer.prefix(80).debugDescription)")
    #expect(!answer.contains("100 Continue"))
    #expect(server.requests.map(\.body) == [Data("abcde".utf8)])
  }

  /// Three requests on one keep-alive connection, a byte per write, the third malformed: two
  /// answers 200, then 400; two requests recorded, with their bodies.
  @Test func overASocketThreePipelinedRequestsTheLastMalformed() throws {
    let server = try LoopbackServer { _ in .text("fine").keepingConnectionOpen() }
    defer { server.stop() }
    let request = Self.bytes(
      "POST /1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
        + "PUT /2 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;e\r\nabc\r\n0\r\nT: 1\r\n\r\n"
        + "POST /3 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n")
    let client = try RawConnection(port: server.port)
    defer { client.close() }
    for byte in request { _ = client.send([byte]) }
    let answer = String(decoding: client.receiveAll(), as: UTF8.self)
    #expect(
      answer.components(separatedBy: "HTTP/1.1 200 OK\r\n").count - 1 == 2,
      "\(answer.debugDescription)")
    #expect(answer.contains("HTTP/1.1 400 Bad Request\r\n"), "\(answer.debugDescription)")
    #expect(server.requests.map(\.target) == ["/1", "/2"])
    #expect(server.requests.map(\.body) == [Data("hello".utf8), Data("abc".utf8)])
    #expect(server.malformedRequests.count == 1)
  }
}
