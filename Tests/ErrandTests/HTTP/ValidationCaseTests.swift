import Errand
import Foundation
import Testing

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
}
