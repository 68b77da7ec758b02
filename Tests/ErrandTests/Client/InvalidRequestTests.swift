import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct InvalidRequestTests {
  /// A method reaches the request line verbatim: anything but a token could smuggle a request.
  @Test(arguments: [
    (
      "GET /x HTTP/1.1\r\nX-Injected: 1\r\n\r\nGET",
      #""GET /x HTTP/1.1\r\nX-Injected: 1\r\n\r\nGET""#
    ),
    ("GET ", #""GET ""#),
    ("", #""""#),
    ("PO\u{0}ST", #""PO\0ST""#),
    ("GÉT", #""GÉT""#),
  ])
  func rejectsMethodsThatAreNotTokens(method: String, shown: String) throws {
    let client = makeClient()
    let endpoint = Endpoint<Data>(method: HTTPMethod(rawValue: method), path: "dogs")
    let error = try #require(throws: APIError.self) { try client.makeRequest(for: endpoint) }
    #expect(
      error.invalidRequestReason
        == "\(shown) dogs: the method is not a valid token (a space, CR or LF could smuggle a second request)."
    )
    #expect(!HTTPMethod(rawValue: method).isValidToken)
  }

  @Test(arguments: ["GET", "PROPFIND", "M-SEARCH", "purge", "X.1_~!#$%&'*+^`|"])
  func acceptsTokenMethods(method: String) throws {
    let request = try makeClient().makeRequest(
      for: Endpoint<Data>(method: HTTPMethod(rawValue: method), path: "dogs"))
    #expect(request.method.rawValue == method)
  }

  @Test(arguments: [
    (
      "dogs/../admin",
      "GET dogs/../admin: the path segment \"..\" would leave the endpoint's path; use a full path."
    ),
    (
      "../secrets",
      "GET ../secrets: the path segment \"..\" would leave the endpoint's path; use a full path."
    ),
    (
      "dogs/./1",
      "GET dogs/./1: the path segment \".\" would leave the endpoint's path; use a full path."
    ),
    (
      "dogs/..",
      "GET dogs/..: the path segment \"..\" would leave the endpoint's path; use a full path."
    ),
  ])
  func rejectsDotSegments(path: String, reason: String) throws {
    let error = try #require(throws: APIError.self) {
      try makeClient().makeRequest(for: Endpoint<Data>(path: path))
    }
    #expect(error.invalidRequestReason == reason)
  }

  @Test(arguments: [
    ("dogs", "https://api.example.com/v1/dogs"),
    ("/v1/dogs/...", "https://api.example.com/v1/v1/dogs/..."),
    ("rex.jpg", "https://api.example.com/v1/rex.jpg"),
  ])
  func acceptsDotsInsideSegments(path: String, expected: String) throws {
    #expect(
      try makeClient().makeRequest(for: Endpoint<Data>(path: path)).url.absoluteString == expected)
  }

  @Test(arguments: ["api.example.com/v1", "/v1", "file:///tmp/x", "ftp://files.example.com/v1"])
  func rejectsBaseURLsThatAreNotHTTPWithAHost(base: String) throws {
    let error = try #require(throws: APIError.self) {
      try makeClient(base).makeRequest(for: Endpoint<Data>(path: "dogs"))
    }
    #expect(
      error.invalidRequestReason
        == "GET dogs: the base URL \"\(base)\" needs an http or https scheme and a host, such as https://api.example.com."
    )
  }

  @Test(arguments: [
    ("HTTP://api.example.com/v1", "http://api.example.com/v1/dogs"),
    ("HttpS://api.example.com", "https://api.example.com/dogs"),
  ])
  func schemesCompareWithoutCaseAndAreWrittenInLowercase(base: String, built: String) throws {
    let request = try makeClient(base).makeRequest(for: Endpoint<Data>(path: "dogs"))
    #expect(request.url.absoluteString == built)
    let absolute = try makeClient().makeRequest(for: Endpoint<Data>(url: url(base)))
    #expect(absolute.url.scheme == built.prefix { $0 != ":" }.description)
  }

  @Test(arguments: [Duration.zero, .seconds(-1)])
  func rejectsTimeoutsThatAreNotPositive(timeout: Duration) throws {
    let error = try #require(throws: APIError.self) {
      try makeClient().makeRequest(for: Endpoint<Data>(path: "dogs", timeout: timeout))
    }
    #expect(error.invalidRequestReason == "GET dogs: the timeout must be positive, not \(timeout).")
  }

  @Test(arguments: [
    (Duration?.none, Duration?.none, Duration?.none),
    (.seconds(30), nil, .seconds(30)),
    (.seconds(30), .milliseconds(500), .milliseconds(500)),
    (nil, .seconds(5), .seconds(5)),
  ])
  func usesTheEndpointTimeoutElseTheClients(
    client: Duration?, endpoint: Duration?, expected: Duration?
  ) throws {
    let client = makeClient(configuration: APIClient.Configuration(timeout: client))
    let request = try client.makeRequest(for: Endpoint<Data>(path: "dogs", timeout: endpoint))
    #expect(request.timeout == expected)
  }

  @Test func describesTheProblemToAPerson() throws {
    let error = try #require(throws: APIError.self) {
      try makeClient().makeRequest(for: Endpoint<Data>(path: "dogs", headers: ["X-A": "1\n"]))
    }
    #expect(
      error.localizedDescription
        == "Cannot form the request: GET dogs: the value of header \"X-A\" contains a line feed "
        + "(U+000A); header values must not contain control characters.")
  }
}
