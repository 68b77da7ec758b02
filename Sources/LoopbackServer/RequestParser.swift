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
  /// The longest head accepted, in bytes.
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
    guard let headEnd = find(crlfcrlf, in: bytes, from: 0, within: maximumHeadLength + 4) else {
      return bytes.count > maximumHeadLength + 4
        ? .malformed("the head is longer than \(maximumHeadLength) bytes")
        : .incomplete(expectsContinue: false)
    }
    if let problem = lineEndProblem(in: bytes[..<(headEnd + 2)]) {
      return .malformed(problem)
    }
    guard let head = String(bytes: bytes[..<headEnd], encoding: .utf8) else {
      return .malformed("the head is not UTF-8")
    }
    var lines = head.components(separatedBy: "\r\n")
    let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: false)
    guard requestLine.count == 3, isToken(requestLine[0]),
      !requestLine[1].isEmpty,
      requestLine[1].unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }),
      isVersion(requestLine[2])
    else {
      return .malformed("the request line is not \"METHOD target HTTP/version\"")
    }
    var headers = HTTPHeaders()
    for line in lines {
      if line.hasPrefix(" ") || line.hasPrefix("\t") {
        return .malformed("a header line is folded onto the one before (obs-fold)")
      }
      guard let colon = line.firstIndex(of: ":"), isToken(line[..<colon]) else {
        return .malformed("a header line is not \"name: value\"")
      }
      let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
      guard isFieldValue(value) else {
        return .malformed("a header value holds a control character")
      }
      headers.add(String(line[..<colon]), value)
    }
    let bodyStart = headEnd + 4
    let expectsContinue = headers["Expect"]?.lowercased() == "100-continue"
    let framed = body(of: bytes, from: bodyStart, headers: headers)
    switch framed {
    case .incomplete:
      return .incomplete(expectsContinue: expectsContinue)
    case .malformed(let reason):
      return .malformed(reason)
    case .complete(let body, let end):
      let request = RecordedRequest(
        method: String(requestLine[0]), target: String(requestLine[1]), headers: headers,
        body: body, connection: connection)
      return .complete(request, consumed: end)
    }
  }

  private enum Body {
    case incomplete
    case malformed(String)
    case complete(Data, end: Int)
  }

  private static func body(of bytes: [UInt8], from start: Int, headers: HTTPHeaders) -> Body {
    let encodings = headers.values(for: "Transfer-Encoding")
    let lengths = headers.values(for: "Content-Length")
    if !encodings.isEmpty {
      guard lengths.isEmpty else {
        return .malformed("the request has both Transfer-Encoding and Content-Length")
      }
      let codings = encodings.flatMap { $0.split(separator: ",") }
        .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
      guard codings == ["chunked"] else {
        return .malformed("the only transfer coding read is chunked, not \(codings)")
      }
      return chunkedBody(of: bytes, from: start)
    }
    guard !lengths.isEmpty else { return .complete(Data(), end: start) }
    let announced = Set(
      lengths.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
        .map { $0.trimmingCharacters(in: .whitespaces) })
    guard announced.count == 1, let text = announced.first, isDecimal(text),
      let length = Int(text)
    else {
      return .malformed("Content-Length is not one decimal number")
    }
    guard bytes.count - start >= length else { return .incomplete }
    return .complete(Data(bytes[start..<(start + length)]), end: start + length)
  }

  private static func chunkedBody(of bytes: [UInt8], from start: Int) -> Body {
    var index = start
    var chunks: [Range<Int>] = []
    while true {
      guard let lineEnd = find(crlf, in: bytes, from: index, within: maximumChunkLineLength)
      else {
        return bytes.count - index > maximumChunkLineLength
          ? .malformed("a chunk-size line is too long") : .incomplete
      }
      let line = bytes[index..<lineEnd]
      let sizeField = String(decoding: line.prefix { $0 != UInt8(ascii: ";") }, as: UTF8.self)
        .trimmingCharacters(in: .whitespaces)
      guard !sizeField.isEmpty, sizeField.count <= 15, sizeField.allSatisfy(\.isHexDigit),
        let size = Int(sizeField, radix: 16)
      else {
        return .malformed("a chunk size is not a hexadecimal number of at most 15 digits")
      }
      index = lineEnd + 2
      if size == 0 {
        // Trailer fields, if any, up to the empty line.
        while true {
          guard let end = find(crlf, in: bytes, from: index, within: maximumHeadLength) else {
            return bytes.count - index > maximumHeadLength
              ? .malformed("the trailer is too long") : .incomplete
          }
          let isEmptyLine = end == index
          index = end + 2
          if isEmptyLine { break }
        }
        var body = Data(capacity: chunks.reduce(0) { $0 + $1.count })
        for chunk in chunks { body.append(contentsOf: bytes[chunk]) }
        return .complete(body, end: index)
      }
      guard bytes.count - index >= size + 2 else { return .incomplete }
      guard bytes[index + size] == 0x0D, bytes[index + size + 1] == 0x0A else {
        return .malformed("a chunk's data is not followed by CRLF")
      }
      chunks.append(index..<(index + size))
      index += size + 2
    }
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
