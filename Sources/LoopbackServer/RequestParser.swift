import Errand
import Foundation

/// What the bytes a client sent so far hold.
package enum ParsedRequest: Equatable, Sendable {
  /// Not a whole request yet; `expectsContinue` once the head is in and asks for
  /// `100 Continue`.
  case incomplete(expectsContinue: Bool)
  /// Not HTTP/1.1 as the server reads it: answered `400 Bad Request`, and the connection closed.
  case malformed(String)
  /// A whole request, and how many bytes it took.
  case complete(RecordedRequest, consumed: Int)
}

/// Reads one HTTP/1.1 request from the start of a buffer, strictly: anything it cannot frame
/// for certain (a chunk size that is empty, negative or too large, a `Content-Length` that is not
/// one decimal number, both `Transfer-Encoding` and `Content-Length`, a header line without a
/// colon) is malformed, never a crash. Pure, so that it can be fuzzed.
package enum RequestParser {
  /// The longest head accepted, in bytes: from the request line to the empty line that ends the
  /// head, that line's CRLF included.
  package static let maximumHeadLength = 64 * 1024
  /// The longest chunk-size line accepted, extensions included.
  static let maximumChunkLineLength = 4 * 1024

  private static let crlf: [UInt8] = [0x0D, 0x0A]
  private static let crlfcrlf: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A]

  /// Parse the request at the start of `bytes`.
  /// - Parameters:
  ///   - bytes: What the client sent so far.
  ///   - connection: Which connection it came on, for the recorded request.
  /// - Returns: Incomplete, malformed (with why), or the request and its length.
  package static func parse(_ bytes: [UInt8], connection: Int = 1) -> ParsedRequest {
    var progress = ParseProgress()
    return parse(bytes, connection: connection, progress: &progress)
  }

  /// ``parse(_:connection:)``, going on from where the parse of a shorter start of the same
  /// bytes stopped (`progress`, which it updates), so that a request read in many pieces costs
  /// time in proportion to its length: the head is searched for and read once, a chunked body's
  /// chunks once each. The outcome is the one ``parse(_:connection:)`` gives for `bytes`.
  /// - Parameters:
  ///   - bytes: What the client sent so far: the bytes the last parse with `progress` saw, and
  ///     any that came after them.
  ///   - connection: Which connection it came on, for the recorded request.
  ///   - progress: Where the last parse stopped; new for each request.
  /// - Returns: Incomplete, malformed (with why), or the request and its length.
  package static func parse(
    _ bytes: [UInt8], connection: Int = 1, progress: inout ParseProgress
  ) -> ParsedRequest {
    let head: ParseProgress.Head
    if let known = progress.head {
      head = known
    } else {
      switch self.head(of: bytes, searchedTo: &progress.headSearched) {
      case .incomplete:
        return .incomplete(expectsContinue: false)
      case .malformed(let reason):
        return .malformed(reason)
      case .head(let parsed):
        head = parsed
        progress.head = parsed
      }
    }
    switch body(of: bytes, from: head.bodyStart, headers: head.headers, progress: &progress) {
    case .incomplete:
      return .incomplete(expectsContinue: head.expectsContinue)
    case .malformed(let reason):
      return .malformed(reason)
    case .complete(let body, let end):
      let request = RecordedRequest(
        method: head.method, target: head.target, headers: head.headers, body: body,
        connection: connection, version: head.version)
      return .complete(request, consumed: end)
    }
  }

  private enum HeadOutcome {
    case incomplete
    case malformed(String)
    case head(ParseProgress.Head)
  }

  /// The head at the start of `bytes`, searched for from `searchedTo` (where an earlier search
  /// of a shorter start of them stopped), which it moves on when the head is not whole yet.
  private static func head(of bytes: [UInt8], searchedTo: inout Int) -> HeadOutcome {
    // Where the head's final CRLFCRLF may start at the latest, for the head to end by
    // `maximumHeadLength`.
    let lastStart = maximumHeadLength - crlfcrlf.count
    let from = min(searchedTo, lastStart)
    guard let headEnd = find(crlfcrlf, in: bytes, from: from, within: lastStart - from) else {
      // The next search starts where the end of the head could still begin.
      searchedTo = max(0, bytes.count - (crlfcrlf.count - 1))
      // Too long once the whole window the head may end in has arrived without its end.
      return bytes.count >= maximumHeadLength
        ? .malformed("the head is longer than \(maximumHeadLength) bytes") : .incomplete
    }
    if let problem = lineEndProblem(in: bytes[..<(headEnd + 2)]) {
      return .malformed(problem)
    }
    let lines = split(bytes[..<headEnd])
    guard let line = String(bytes: lines[0], encoding: .utf8) else {
      return .malformed("the request line is not UTF-8")
    }
    let requestLine = line.split(separator: " ", omittingEmptySubsequences: false)
    guard requestLine.count == 3, isToken(requestLine[0]),
      !requestLine[1].isEmpty,
      requestLine[1].unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }),
      isVersion(requestLine[2])
    else {
      return .malformed("the request line is not \"METHOD target HTTP/version\"")
    }
    let (headers, problem) = fields(lines.dropFirst())
    if let problem {
      return .malformed(problem)
    }
    if let problem = hostProblem(headers, version: requestLine[2]) {
      return .malformed(problem)
    }
    return .head(
      ParseProgress.Head(
        method: String(requestLine[0]), target: String(requestLine[1]),
        version: String(requestLine[2]), headers: headers, bodyStart: headEnd + 4,
        expectsContinue: headers["Expect"]?.lowercased() == "100-continue"))
  }

  private enum Body {
    case incomplete
    case malformed(String)
    case complete(Data, end: Int)
  }

  private static func body(
    of bytes: [UInt8], from start: Int, headers: HTTPHeaders, progress: inout ParseProgress
  ) -> Body {
    let encodings = headers.values(for: "Transfer-Encoding")
    let lengths = headers.values(for: "Content-Length")
    if !encodings.isEmpty {
      guard lengths.isEmpty else {
        return .malformed("the request has both Transfer-Encoding and Content-Length")
      }
      let codings = encodings.flatMap { $0.split(separator: ",") }
        .map { withoutOWS($0).lowercased() }
      guard codings == ["chunked"] else {
        return .malformed("the only transfer coding read is chunked, not \(codings)")
      }
      return chunkedBody(of: bytes, from: start, progress: &progress)
    }
    guard !lengths.isEmpty else { return .complete(Data(), end: start) }
    let announced = Set(
      lengths.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
        .map { withoutOWS($0) })
    guard announced.count == 1, let text = announced.first, isDecimal(text),
      let length = Int(text)
    else {
      return .malformed("Content-Length is not one decimal number")
    }
    guard bytes.count - start >= length else { return .incomplete }
    return .complete(Data(bytes[start..<(start + length)]), end: start + length)
  }

  /// A chunked body from `start`, or from where an earlier parse of a shorter start of the same
  /// bytes stopped (`progress`, which it moves on when the body is not whole yet): in a chunk-size
  /// line, a chunk's data or the trailer, each byte looked at once however the bytes arrive.
  private static func chunkedBody(
    of bytes: [UInt8], from start: Int, progress: inout ParseProgress
  ) -> Body {
    // Taken out of `progress`, so that appending to its chunks does not copy them.
    var state = progress.chunked ?? ParseProgress.Chunked(at: start)
    progress.chunked = nil
    func incomplete() -> Body {
      progress.chunked = state
      return .incomplete
    }
    while true {
      switch state.step {
      case .sizeLine:
        guard
          let lineEnd = lineEnd(in: bytes, state: &state, within: maximumChunkLineLength)
        else {
          // Too long once the whole window a line may end in has arrived without its CRLF.
          return bytes.count - state.index >= maximumChunkLineLength + crlf.count
            ? .malformed("a chunk-size line is too long") : incomplete()
        }
        guard let size = chunkSize(bytes[state.index..<lineEnd]) else {
          return .malformed("a chunk size is not a hexadecimal number of at most 15 digits")
        }
        state.move(to: lineEnd + 2)
        state.step = size == 0 ? .trailer(start: state.index) : .data(size: size)
      case .data(let size):
        guard bytes.count - state.index >= size + 2 else { return incomplete() }
        guard bytes[state.index + size] == 0x0D, bytes[state.index + size + 1] == 0x0A else {
          return .malformed("a chunk's data is not followed by CRLF")
        }
        state.chunks.append(state.index..<(state.index + size))
        state.move(to: state.index + size + 2)
        state.step = .sizeLine
      case .trailer(let trailerStart):
        // Trailer fields, if any, up to the empty line: checked as the head's fields are.
        let within = maximumHeadLength - (state.index - trailerStart)
        guard let end = lineEnd(in: bytes, state: &state, within: within) else {
          return bytes.count - trailerStart >= maximumHeadLength + crlf.count
            ? .malformed("the trailer is too long") : incomplete()
        }
        guard end == state.index else {
          state.trailer.append(state.index..<end)
          state.move(to: end + 2)
          continue
        }
        let trailer = state.trailer.map { bytes[$0] }
        if trailer.contains(where: { $0.contains(0x0D) || $0.contains(0x0A) }) {
          return .malformed("the trailer holds a CR or an LF that does not end a line")
        }
        if let problem = fields(trailer).problem {
          return .malformed("in the trailer, \(problem)")
        }
        var body = Data(capacity: state.chunks.reduce(0) { $0 + $1.count })
        for chunk in state.chunks { body.append(contentsOf: bytes[chunk]) }
        return .complete(body, end: end + 2)
      }
    }
  }

  /// Where the CRLF that ends the line at `state.index` starts, when it has arrived within
  /// `within` bytes of the line's start: searched from where the last search stopped, which it
  /// moves on when the line is not whole yet (its CR may be the last byte so far).
  private static func lineEnd(
    in bytes: [UInt8], state: inout ParseProgress.Chunked, within: Int
  ) -> Int? {
    let from = max(state.index, state.searched)
    let found = find(crlf, in: bytes, from: from, within: state.index + within - from)
    if found == nil {
      state.searched = max(state.index, bytes.count - (crlf.count - 1))
    }
    return found
  }

  /// The size a chunk-size line announces (RFC 9112, section 7.1): 1 to 15 hexadecimal digits,
  /// then optionally whitespace (BWS) and `;` extensions without control characters; `nil` for
  /// anything else (a sign, a space before the digits, whitespace with no extension after it).
  private static func chunkSize(_ line: ArraySlice<UInt8>) -> Int? {
    let semicolon = line.firstIndex(of: UInt8(ascii: ";"))
    var digits = line[..<(semicolon ?? line.endIndex)]
    if semicolon != nil {
      while let last = digits.last, last == 0x20 || last == 0x09 { digits.removeLast() }
      guard
        line[(semicolon ?? line.endIndex)...].allSatisfy({
          $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F)
        })
      else { return nil }
    }
    let isHex: (UInt8) -> Bool = {
      (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0)
    }
    guard !digits.isEmpty, digits.count <= 15, digits.allSatisfy(isHex) else { return nil }
    return Int(String(decoding: digits, as: UTF8.self), radix: 16)
  }

  /// The lines of a head (without its final CRLF), split at each CRLF.
  private static func split(_ head: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
    var lines: [ArraySlice<UInt8>] = []
    var start = head.startIndex
    var index = head.startIndex
    while index + 1 < head.endIndex {
      if head[index] == 0x0D, head[index + 1] == 0x0A {
        lines.append(head[start..<index])
        index += 2
        start = index
      } else {
        index += 1
      }
    }
    lines.append(head[start..<head.endIndex])
    return lines
  }

  /// The fields of header (or trailer) lines, or why they are not fields: a line folded onto
  /// the one before, a line without a colon or whose name is not a token, a value with a control
  /// character. A value is trimmed of spaces and tabs only (OWS), and read as UTF-8, or as
  /// ISO-8859-1 when it is not UTF-8 (obs-text, RFC 9110 section 5.5).
  private static func fields(_ lines: some Sequence<ArraySlice<UInt8>>) -> (
    headers: HTTPHeaders, problem: String?
  ) {
    var headers = HTTPHeaders()
    for line in lines {
      if line.first == 0x20 || line.first == 0x09 {
        return (headers, "a header line is folded onto the one before (obs-fold)")
      }
      guard let colon = line.firstIndex(of: UInt8(ascii: ":")),
        isToken(String(decoding: line[..<colon], as: UTF8.self))
      else {
        return (headers, "a header line is not \"name: value\"")
      }
      var value = line[(colon + 1)...]
      while let first = value.first, first == 0x20 || first == 0x09 { value.removeFirst() }
      while let last = value.last, last == 0x20 || last == 0x09 { value.removeLast() }
      guard value.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
        return (headers, "a header value holds a control character")
      }
      let text =
        String(bytes: value, encoding: .utf8) ?? String(bytes: value, encoding: .isoLatin1) ?? ""
      headers.add(String(decoding: line[..<colon], as: UTF8.self), text)
    }
    return (headers, nil)
  }

  /// Why the `Host` fields of a request are refused (RFC 9112, section 3.2): none in an
  /// HTTP/1.1 request, more than one, or one whose value is not `host[:port]`; `nil` when fine.
  private static func hostProblem(_ headers: HTTPHeaders, version: Substring) -> String? {
    let hosts = headers.values(for: "Host")
    guard let host = hosts.first else {
      return version >= "HTTP/1.1" ? "an HTTP/1.1 request has no Host" : nil
    }
    guard hosts.count == 1 else { return "the request has more than one Host" }
    return isHostValue(host) ? nil : "the Host is not host[:port]"
  }

  /// Whether `text` is `uri-host [ ":" port ]` (RFC 3986): an IP literal in brackets, or a
  /// registered name or IPv4 address (unreserved characters, sub-delimiters, `%HH`), then
  /// optionally a colon and digits.
  static func isHostValue(_ text: String) -> Bool {
    let bytes = Array(text.utf8)
    let isAlphanumeric: (UInt8) -> Bool = {
      (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
    }
    let isHex: (UInt8) -> Bool = {
      (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0)
    }
    let nameBytes = Set("-._~!$&'()*+,;=".utf8)
    var index = 0
    if bytes.first == UInt8(ascii: "[") {
      guard let close = bytes.firstIndex(of: UInt8(ascii: "]")), close > 1,
        bytes[1..<close].allSatisfy({
          isAlphanumeric($0) || nameBytes.contains($0) || $0 == UInt8(ascii: ":")
        })
      else { return false }
      index = close + 1
    } else {
      while index < bytes.count, bytes[index] != UInt8(ascii: ":") {
        if bytes[index] == UInt8(ascii: "%") {
          guard index + 2 < bytes.count, isHex(bytes[index + 1]), isHex(bytes[index + 2])
          else { return false }
          index += 3
        } else {
          guard isAlphanumeric(bytes[index]) || nameBytes.contains(bytes[index]) else {
            return false
          }
          index += 1
        }
      }
    }
    guard index < bytes.count else { return true }
    return bytes[index] == UInt8(ascii: ":")
      && bytes[(index + 1)...].allSatisfy { (0x30...0x39).contains($0) }
  }

  /// `text` without the spaces and tabs (OWS, RFC 9110 section 5.6.3) around it; no other
  /// whitespace is taken away.
  private static func withoutOWS(_ text: Substring) -> String {
    var text = text
    while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
    while let last = text.last, last == " " || last == "\t" { text.removeLast() }
    return String(text)
  }

  /// Why the line ends of a head (with the CRLF that ends its last line) are not all CRLF (a CR
  /// or an LF alone, which servers and proxies split differently), or `nil` when they are.
  private static func lineEndProblem(in head: ArraySlice<UInt8>) -> String? {
    var previous: UInt8 = 0
    for (offset, byte) in head.enumerated() {
      let next = offset + 1 < head.count ? head[head.startIndex + offset + 1] : 0
      if byte == 0x0D, next != 0x0A { return "the head holds a CR that does not end a line" }
      if byte == 0x0A, previous != 0x0D { return "the head holds an LF without its CR" }
      previous = byte
    }
    return nil
  }

  /// Whether `text` is a token (RFC 9110, section 5.6.2): a method or a field name.
  package static func isToken(_ text: some StringProtocol) -> Bool {
    !text.isEmpty
      && text.utf8.allSatisfy { byte in
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
          UInt8(ascii: "A")...UInt8(ascii: "Z"):
          true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
      }
  }

  /// Whether `text` may be a field's value: no control character but the horizontal tab.
  package static func isFieldValue(_ text: some StringProtocol) -> Bool {
    text.utf8.allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }
  }

  /// Whether `text` is `HTTP/` and a one-digit major and minor version.
  private static func isVersion(_ text: Substring) -> Bool {
    let bytes = Array(text.utf8)
    return bytes.count == 8 && text.hasPrefix("HTTP/") && bytes[6] == UInt8(ascii: ".")
      && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[5])
      && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[7])
  }

  private static func isDecimal(_ text: String) -> Bool {
    !text.isEmpty && text.count <= 18 && text.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
  }

  /// Where `pattern` starts in `bytes` at or after `start`, looking no further than `within`
  /// bytes past `start`; `nil` when it is not there.
  private static func find(_ pattern: [UInt8], in bytes: [UInt8], from start: Int, within: Int)
    -> Int?
  {
    let end = min(bytes.count, start + within + pattern.count)
    guard end - start >= pattern.count else { return nil }
    var index = start
    while index + pattern.count <= end {
      if bytes[index] == pattern[0], bytes[index..<(index + pattern.count)].elementsEqual(pattern) {
        return index
      }
      index += 1
    }
    return nil
  }
}
