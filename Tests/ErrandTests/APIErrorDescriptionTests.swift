import Errand
import Foundation
import Testing

@Suite struct APIErrorDescriptionTests {
  static let dogsURL = url("https://api.example.com/v1/dogs")

  @Test(arguments: [
    (
      APIError.unacceptableStatus(
        HTTPResponse(status: 500, body: Data("database is down".utf8), url: dogsURL)),
      "The server answered HTTP 500 Internal Server Error from https://api.example.com/v1/dogs. "
        + "Body: database is down"
    ),
    (
      .unacceptableStatus(HTTPResponse(status: 404)),
      "The server answered HTTP 404 Not Found."
    ),
    (
      .unacceptableStatus(HTTPResponse(status: 499, body: Data([0xFF, 0x00, 0x01]))),
      "The server answered HTTP 499 Client Error."
    ),
    (
      .unacceptableStatus(HTTPResponse(status: 401, body: Data("line\u{1B}".utf8))),
      "The server answered HTTP 401 Unauthorized."
    ),
    (.timedOut, "The request timed out."),
    (.cancelled, "The request was cancelled."),
    (.invalidRequest("GET x: bad."), "Cannot form the request: GET x: bad."),
    (
      .transport(
        URLError(.notConnectedToInternet, userInfo: [NSURLErrorFailingURLErrorKey: dogsURL])),
      "The server could not be reached: URLError -1009 (https://api.example.com/v1/dogs): "
        + URLError(.notConnectedToInternet).localizedDescription
    ),
  ])
  func describesWhatWentWrong(error: APIError, expected: String) {
    #expect(error.localizedDescription == expected)
    #expect(error.errorDescription == expected)
  }

  @Test(arguments: [512, 513, 10_000])
  func cutsLongBodiesAt512Bytes(size: Int) {
    let body = Data(String(repeating: "x", count: size).utf8)
    let description = APIError.unacceptableStatus(HTTPResponse(status: 503, body: body))
      .localizedDescription
    let preview = String(repeating: "x", count: 512)
    let expectedTail = size > 512 ? "Body: \(preview)… (\(size) bytes in all)" : "Body: \(preview)"
    #expect(description == "The server answered HTTP 503 Service Unavailable. " + expectedTail)
  }

  @Test func keepsWholeCharactersWhenCuttingUTF8() {
    let body = Data((String(repeating: "x", count: 511) + "é and more").utf8)
    let description = APIError.unacceptableStatus(HTTPResponse(status: 500, body: body))
      .localizedDescription
    #expect(
      description.hasSuffix(
        "Body: \(String(repeating: "x", count: 511))… (\(body.count) bytes in all)"))
  }

  @Test func neverShowsCredentialHeaders() {
    let response = HTTPResponse(
      status: 401, headers: ["Set-Cookie": "id=s3cret", "WWW-Authenticate": "Bearer"],
      body: Data("no".utf8))
    for error in [APIError.unacceptableStatus(response), .decoding(CancellationError(), response)] {
      #expect(!error.localizedDescription.contains("s3cret"))
    }
  }
}
