import Errand
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// The loopback server's request parser under requests no HTTP client would send: each is
/// answered `400 Bad Request` and the server goes on serving; none crashes the test process.
@Suite(.timeLimit(.minutes(3))) struct LoopbackParserTests {
  static let malformed: [(String, String)] = [
    ("an HTTP/1.1 request without Host", "GET / HTTP/1.1\r\n\r\n"),
    ("two Hosts", "GET / HTTP/1.0\r\nHost: x\r\nHost: x\r\n\r\n"),
    ("a Host that is not host[:port]", "GET / HTTP/1.1\r\nHost: x/y\r\n\r\n"),
    (
      "whitespace after a chunk size without an extension",
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5 \r\nhello\r\n0\r\n\r\n"
    ),
    (
      "a trailer field with a control character",
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: a\u{1}b\r\n\r\n"
    ),
    (
      "an empty chunk size",
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\r\nab\r\n0\r\n\r\n"
    ),
    (
      "a negative chunk size",
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nab\r\n0\r\n\r\n"
    ),
    (
      "a chunk size past Int",
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\nab\r\n0\r\n\r\n"
    ),
    (
      "a chunk size that is not hex",
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"
    ),
    (
      "chunk data without its CRLF",
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcd\r\n0\r\n\r\n"
    ),
    ("a negative Content-Length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\nabc"),
    (
      "a Content-Length past Int",
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n"
    ),
    (
      "two Content-Lengths",
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"
    ),
    (
      "Transfer-Encoding and Content-Length",
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    ),
    ("a header line without a colon", "GET / HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n"),
    ("a request line of two words", "GET /\r\n\r\n"),
  ]

  @Test(arguments: malformed.map(\.0))
  func aMalformedRequestIsAnswered400AndTheServerGoesOn(name: String) async throws {
    let raw = try #require(Self.malformed.first { $0.0 == name }?.1)
    let server = try LoopbackServer { _ in .text("fine") }
    defer { server.stop() }
    let answer = String(
      decoding: try RawClient.exchange(Array(raw.utf8), port: server.port), as: UTF8.self)
    #expect(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(answer)")
    #expect(server.malformedRequests.count == 1)
    #expect(server.requests.isEmpty)
    #expect(try await liveClient(server.baseURL).send(Endpoint<String>(path: "after")) == "fine")
    #expect(server.requests.map(\.path) == ["/after"])
  }

  @Test func aChunkedBodyWithExtensionsAndTrailersIsRead() throws {
    let raw =
      "POST /up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\n"
      + "X-Trailer: t\r\n\r\nGET /next HTTP/1.1\r\n\r\n"
    guard case .complete(let request, let consumed) = RequestParser.parse(Array(raw.utf8)) else {
      Issue.record("not parsed")
      return
    }
    #expect(request.body == Data("abcde".utf8))
    #expect(request.target == "/up")
    #expect(consumed == raw.utf8.count - "GET /next HTTP/1.1\r\n\r\n".utf8.count)
  }

  /// What RFC 9112 allows is read: an HTTP/1.0 request without `Host`, a `Host` with a port or
  /// an IP literal, whitespace between a chunk size and its extension (BWS), a field value that
  /// is not UTF-8 (read as ISO-8859-1).
  @Test func leniencyTheRFCAllowsIsRead() throws {
    let requests: [[UInt8]] = [
      Array("GET / HTTP/1.0\r\n\r\n".utf8),
      Array("GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n".utf8),
      Array("GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n".utf8),
      Array(
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5 ;a=b\r\nhello\r\n0\r\n\r\n"
          .utf8),
    ]
    for request in requests {
      guard case .complete = RequestParser.parse(request) else {
        Issue.record("\(String(decoding: request, as: UTF8.self).debugDescription) did not parse")
        continue
      }
    }
    let latin1 =
      Array("GET / HTTP/1.1\r\nHost: x\r\nX-Name: caf".utf8) + [0xE9] + Array("\r\n\r\n".utf8)
    guard case .complete(let request, _) = RequestParser.parse(latin1) else {
      Issue.record("a Latin-1 value did not parse")
      return
    }
    #expect(request.headers["X-Name"] == "café")
  }

  /// Valid requests of every shape the parser reads: with a length, chunked with extensions and
  /// with a trailer, waiting for `100 Continue`, HTTP/1.0 without `Host`.
  static let validRequests = [
    "POST /a?b=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
    "PUT /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1;x=y\r\n!\r\n0\r\n\r\n",
    "PUT /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-Sum: 1\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nok",
    "GET / HTTP/1.0\r\n\r\n",
  ].map { Array($0.utf8) }

  /// Valid requests cut at every length are incomplete, never malformed; random mutations of them
  /// never crash the parser.
  @Test(arguments: [UInt64(1), 2, 3])
  func theParserSurvivesMutatedRequests(seed: UInt64) {
    let valid = Self.validRequests
    for request in valid {
      guard case .complete = RequestParser.parse(request) else {
        Issue.record("\(String(decoding: request, as: UTF8.self)) did not parse")
        continue
      }
      for cut in 0..<request.count {
        if case .malformed(let reason) = RequestParser.parse(Array(request[..<cut])) {
          Issue.record("a request cut at \(cut) bytes is malformed: \(reason)")
        }
      }
    }
    var generator = SeededGenerator(seed: seed)
    let alphabet = Array("0123456789abcdefx-;: \r\n\t\"".utf8) + [0, 0xFF, 0x80]
    for _ in 0..<TestSize.count(small: 3_000, full: 100_000) {
      var bytes = valid.randomElement(using: &generator) ?? []
      for _ in 0...Int.random(in: 0...4, using: &generator) {
        let index = Int.random(in: 0..<bytes.count, using: &generator)
        switch Int.random(in: 0..<3, using: &generator) {
        case 0: bytes[index] = alphabet.randomElement(using: &generator) ?? 0
        case 1: bytes.insert(alphabet.randomElement(using: &generator) ?? 0, at: index)
        default: bytes.remove(at: index)
        }
        if bytes.isEmpty { bytes = [0] }
      }
      switch RequestParser.parse(bytes) {
      case .complete(let request, let consumed):
        #expect(consumed <= bytes.count)
        #expect(request.body.count <= bytes.count)
      case .incomplete, .malformed:
        break
      }
    }
  }

  /// Requests read in pieces as the loopback server reads them (two on one connection, the first
  /// dropped from the buffer once whole), each parse going on from where the last one stopped,
  /// give at every step what parsing the buffer from its start gives: valid requests (chunked
  /// with extensions and trailers, with a length, waiting for `100 Continue`) and random
  /// mutations of them, cut at random places.
  @Test(arguments: [UInt64(1), 2, 3])
  func parsingInPiecesGivesWhatParsingWholeGives(seed: UInt64) {
    let valid = Self.validRequests
    var generator = SeededGenerator(seed: seed)
    let alphabet = Array("0123456789abcdefx-;: \r\n\t\"".utf8) + [0, 0xFF, 0x80]
    var mismatches: [String] = []
    var whole = 0
    for round in 0..<TestSize.count(small: 2_000, full: 20_000) {
      var bytes =
        (valid.randomElement(using: &generator) ?? [])
        + (valid.randomElement(using: &generator) ?? [])
      if round % 2 == 1 {
        for _ in 0...Int.random(in: 0...3, using: &generator) {
          let index = Int.random(in: 0..<bytes.count, using: &generator)
          bytes[index] = alphabet.randomElement(using: &generator) ?? 0
        }
      }
      var progress = ParseProgress()
      var buffer: [UInt8] = []
      var read = 0
      reading: while read < bytes.count {
        let next = min(bytes.count, read + Int.random(in: 1...12, using: &generator))
        buffer += bytes[read..<next]
        read = next
        let inPieces = RequestParser.parse(buffer, progress: &progress)
        if inPieces != RequestParser.parse(buffer) {
          mismatches.append(String(decoding: buffer, as: UTF8.self).debugDescription)
        }
        switch inPieces {
        case .incomplete:
          continue
        case .malformed:
          break reading
        case .complete(_, let consumed):
          whole += 1
          buffer.removeFirst(consumed)
          progress = ParseProgress()
        }
      }
    }
    #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    #expect(whole > 2_000, "too few requests were whole to compare: \(whole)")
  }
}
