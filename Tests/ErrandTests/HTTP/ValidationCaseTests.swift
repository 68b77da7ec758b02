import Foundation
import Testing

@testable import Errand

/// Request validation reads schemes and framing header names in any case, and only those.
@Suite(.timeLimit(.minutes(3))) struct ValidationCaseTests {
  @Test(arguments: [
    ("http", true), ("https", true), ("HTTP", true), ("hTtPs", true), ("HTTPS", true),
    ("httpx", false), ("htt", false), ("ftp", false), ("httpss", false), ("ws", false),
    ("hxxp", false), ("http2", false),
  ])
  func schemesAreHTTPOrHTTPSInAnyCase(scheme: String, accepted: Bool) throws {
    let url = try #require(URL(string: "\(scheme)://api.example.com/dogs"))
    let problem = HTTPRequest(url: url).validationProblem
    if accepted {
      #expect(problem == nil)
    } else {
      #expect(problem == "the URL's scheme must be http or https, not \"\(scheme)\".")
    }
  }

  @Test(
    arguments: HTTPRequest.framingHeaderNames.sorted().flatMap { name in
      [name, name.uppercased(), name.prefix(1).uppercased() + name.dropFirst()]
    })
  func framingHeadersAreRefusedInAnyCase(name: String) {
    var request = HTTPRequest(url: URL(string: "https://api.example.com/dogs")!)
    request.headers[name] = "1"
    #expect(
      request.validationProblem
        == "the header \"\(name)\" frames the message and is written by the transport from the URL and the body; remove it."
    )
  }

  @Test(arguments: [
    "Content-Lengths", "X-Content-Length", "Hosts", "T", "TEE", "Upgrade-Insecure-Requests",
    "Transfer-Encodings", "Keep-Alive-X", "Proxy-Connection-X", "Trailers", "Content-Type",
  ])
  func namesThatOnlyLookLikeFramingHeadersAreSent(name: String) {
    var request = HTTPRequest(url: URL(string: "https://api.example.com/dogs")!)
    request.headers[name] = "1"
    #expect(request.validationProblem == nil)
  }

  // The fast checks against their definitions (they stand in a switch and in bit masks).

  @Test func tokenBytesAreRFC9110TChars() {
    let tchars = Set("!#$%&'*+-.^_`|~0123456789".utf8)
      .union(UInt8(ascii: "a")...UInt8(ascii: "z")).union(UInt8(ascii: "A")...UInt8(ascii: "Z"))
    let wrong = (0...255).map(UInt8.init).filter {
      HTTPHeaders.isTokenByte($0) != tchars.contains($0)
    }
    #expect(wrong.isEmpty, "bytes judged wrongly: \(wrong)")
  }

  @Test func framingNamesAreFoundAsTheListSaysInAnyCase() {
    var generator = SystemRandomNumberGenerator()
    var names: [String] = []
    for name in HTTPRequest.framingHeaderNames {
      names += [name, name.uppercased()]
      for _ in 0..<64 {
        names.append(
          String(name.map { Bool.random(using: &generator) ? Character($0.uppercased()) : $0 }))
      }
      // Every one-byte change, and one byte more or fewer.
      let bytes = Array(name.utf8)
      for index in bytes.indices {
        for replacement in Array("!-.09AZ_az~^".utf8) + [bytes[index] ^ 0x20, bytes[index] &+ 1] {
          var changed = bytes
          changed[index] = replacement
          names.append(String(decoding: changed, as: UTF8.self))
        }
        names.append(String(decoding: bytes[..<index] + bytes[(index + 1)...], as: UTF8.self))
      }
      names += [name + "s", "x" + name, name + "-"]
    }
    let wrong = names.filter {
      HTTPRequest.isFramingHeaderName($0)
        != HTTPRequest.framingHeaderNames.contains($0.lowercased())
    }
    #expect(wrong.isEmpty, "names judged wrongly: \(wrong.prefix(10))")
  }

  /// Every string of up to five of these bytes (letters of "https" in both cases, and bytes
  /// that differ from them in the bit 0x20 alone), and some longer.
  @Test func httpSchemesAreFoundAsLowercasingFindsThem() {
    let letters = Array("hHtTpPsSx@4\u{8}".utf8)
    var schemes = ["httpss", "HTTPSS", "httpsx", "https:"]
    var last: [[UInt8]] = [[]]
    for _ in 0...5 {
      schemes += last.map { String(decoding: $0, as: UTF8.self) }
      last = last.flatMap { prefix in letters.map { prefix + [$0] } }
    }
    let wrong = schemes.filter {
      HTTPRequest.isHTTPScheme($0) != ["http", "https"].contains($0.lowercased())
    }
    #expect(schemes.count > 200_000)
    #expect(wrong.isEmpty, "schemes judged wrongly: \(wrong.prefix(10))")
  }

}
