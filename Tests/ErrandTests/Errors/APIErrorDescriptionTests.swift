import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct APIErrorDescriptionTests {
  static let dogsURL = url("https://api.example.com/v1/dogs")

  @Test(arguments: [
    (
      APIError.unacceptableStatus(
        HTTPResponse(status: 500, body: Data("database is down".utf8), url: dogsURL)),
      "The server answered https://api.example.com/v1/dogs with HTTP 500 Internal Server Error. "
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
      "The server could not be reached for https://api.example.com/v1/dogs: "
        + "the device is not connected to the internet (URLError -1009)."
    ),
  ])
  func describesWhatWentWrong(error: APIError, expected: String) {
    #expect(error.localizedDescription == expected)
    #expect(error.errorDescription == expected)
  }

  @Test(arguments: [
    (
      URLError(
        .cannotConnectToHost, userInfo: [NSURLErrorFailingURLErrorKey: url("http://127.0.0.1:9/x")]),
      "The server could not be reached for http://127.0.0.1:9/x: nothing accepted the connection at "
        + "127.0.0.1:9 (URLError -1004)."
    ),
    (
      URLError(.networkConnectionLost),
      "The request failed: the connection was lost before the response was complete "
        + "(URLError -1005)."
    ),
    (
      URLError(
        .cannotFindHost, userInfo: [NSURLErrorFailingURLErrorKey: url("https://nowhere.invalid/")]),
      "The server could not be reached for https://nowhere.invalid/: the host name nowhere.invalid "
        + "could not be found (URLError -1003)."
    ),
  ])
  func describesNetworkFailuresInPlainWords(error: URLError, expected: String) {
    #expect(APIError.transport(error).localizedDescription == expected)
  }

  @Test func namesTheMethodAndURLOfTheRequest() async throws {
    let client = APIClient(
      baseURL: url("https://api.example.com/v1"),
      transport: StubTransport { _ in .status(404, body: Data("no such dog".utf8)) }
    )
    let error = await #expect(throws: APIError.self) {
      try await client.send(Endpoint<Dog>(path: "dogs/7"))
    }
    #expect(
      error?.localizedDescription
        == "The server answered GET https://api.example.com/v1/dogs/7 with HTTP 404 Not Found. Body: no such dog"
    )
  }

  @Test func namesTheRequestOfATransportFailure() async throws {
    let client = APIClient(
      baseURL: url("https://api.example.com/v1"),
      transport: StubTransport { _ in throw URLError(.networkConnectionLost) })
    let error = await #expect(throws: APIError.self) {
      try await client.send(Endpoint<Void>(method: .delete, path: "dogs/7"))
    }
    #expect(
      error?.localizedDescription
        == "The request failed for DELETE https://api.example.com/v1/dogs/7: the connection "
        + "was lost before the response was complete (URLError -1005).")
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

@Suite(.timeLimit(.minutes(3))) struct URLRedactionTests {
  @Test(arguments: [
    ("https://ann:s3cret@api.example.com/v1/dogs", "GET https://redacted@api.example.com/v1/dogs"),
    ("https://api.example.com/v1/dogs", "GET https://api.example.com/v1/dogs"),
    // An API key as the user name (a common style) is user info too: hidden whole.
    ("https://sk_live_4242@api.example.com/v1", "GET https://redacted@api.example.com/v1"),
    ("https://:s3cret@api.example.com/v1", "GET https://redacted@api.example.com/v1"),
  ])
  func requestDescriptionsHideURLUserInfo(address: String, expected: String) {
    #expect(HTTPRequest(url: url(address)).description == expected)
  }

  @Test func errorDescriptionsHideURLPasswords() {
    let response = HTTPResponse(status: 500, url: url("https://ann:s3cret@api.example.com/x"))
    let failure = URLError(
      .networkConnectionLost,
      userInfo: [NSURLErrorFailingURLErrorKey: url("https://ann:s3cret@x.example/")])
    for error in [
      APIError.unacceptableStatus(response), .decoding(CancellationError(), response),
      .transport(failure),
    ] {
      #expect(!error.localizedDescription.contains("s3cret"), "\(error.localizedDescription)")
    }
  }
}
