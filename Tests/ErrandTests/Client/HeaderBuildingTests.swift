import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// One header expectation: a client and endpoint, a header name and the value it should have.
struct HeaderCase: Sendable, CustomTestStringConvertible {
  var label: String
  var configuration = APIClient.Configuration()
  var build: @Sendable (APIClient) throws -> HTTPRequest
  var name: String
  var expected: String?

  var testDescription: String { label }
}

@Suite(.timeLimit(.minutes(3))) struct HeaderBuildingTests {
  static let cases: [HeaderCase] = [
    HeaderCase(
      label: "JSON endpoints accept JSON",
      build: { try $0.makeRequest(for: Endpoint<Dog>(path: "d")) },
      name: "Accept", expected: "application/json"),
    HeaderCase(
      label: "Data endpoints accept anything",
      build: { try $0.makeRequest(for: Endpoint<Data>(path: "d")) }, name: "Accept", expected: "*/*"
    ),
    HeaderCase(
      label: "User-Agent names Errand",
      build: { try $0.makeRequest(for: Endpoint<Void>(path: "d")) },
      name: "User-Agent", expected: "Errand/0.1.0"),
    HeaderCase(
      label: "User-Agent can be turned off",
      configuration: APIClient.Configuration(userAgent: nil),
      build: { try $0.makeRequest(for: Endpoint<Void>(path: "d")) }, name: "User-Agent",
      expected: nil),
    HeaderCase(
      label: "client default headers are sent",
      configuration: APIClient.Configuration(headers: ["X-Client": "errand-tests"]),
      build: { try $0.makeRequest(for: Endpoint<Void>(path: "d")) }, name: "x-client",
      expected: "errand-tests"),
    HeaderCase(
      label: "endpoint headers win over client headers",
      configuration: APIClient.Configuration(headers: ["X-Trace": "client"]),
      build: {
        try $0.makeRequest(for: Endpoint<Void>(path: "d", headers: ["X-Trace": "endpoint"]))
      },
      name: "X-Trace", expected: "endpoint"),
    HeaderCase(
      label: "endpoint headers win whatever their case",
      configuration: APIClient.Configuration(headers: ["x-trace": "client"]),
      build: {
        try $0.makeRequest(for: Endpoint<Void>(path: "d", headers: ["X-TRACE": "endpoint"]))
      },
      name: "X-Trace", expected: "endpoint"),
    HeaderCase(
      label: "endpoint Accept wins over the strategy's",
      build: {
        try $0.makeRequest(for: Endpoint<Dog>(path: "d", headers: ["Accept": "application/xml"]))
      },
      name: "Accept", expected: "application/xml"),
    HeaderCase(
      label: "client User-Agent header wins over the default",
      configuration: APIClient.Configuration(headers: ["User-Agent": "DogPatch/2"]),
      build: { try $0.makeRequest(for: Endpoint<Void>(path: "d")) }, name: "User-Agent",
      expected: "DogPatch/2"),
    HeaderCase(
      label: "JSON bodies set Content-Type",
      build: {
        try $0.makeRequest(
          for: Endpoint<Void>(method: .post, path: "d", body: .json(Dog(name: "Rex"))))
      },
      name: "Content-Type", expected: "application/json"),
    HeaderCase(
      label: "endpoint Content-Type wins over the body's",
      build: {
        try $0.makeRequest(
          for: Endpoint<Void>(
            method: .post, path: "d", headers: ["Content-Type": "application/vnd.dog+json"],
            body: .json(Dog(name: "Rex"))))
      }, name: "Content-Type", expected: "application/vnd.dog+json"),
    HeaderCase(
      label: "requests without a body have no Content-Type",
      build: { try $0.makeRequest(for: Endpoint<Void>(path: "d")) }, name: "Content-Type",
      expected: nil),
    HeaderCase(
      label: "a tab inside a value is allowed",
      build: { try $0.makeRequest(for: Endpoint<Void>(path: "d", headers: ["X-Note": "a\tb"])) },
      name: "X-Note", expected: "a\tb"),
  ]

  @Test(arguments: cases)
  func setsHeader(_ headerCase: HeaderCase) throws {
    let client = APIClient(
      baseURL: url("https://api.example.com"), transport: .unimplemented(),
      configuration: headerCase.configuration)
    let request = try headerCase.build(client)
    #expect(request.headers[headerCase.name] == headerCase.expected)
  }

  @Test func overriddenHeadersAppearOnce() throws {
    let client = makeClient(configuration: APIClient.Configuration(headers: ["X-Trace": "client"]))
    let request = try client.makeRequest(
      for: Endpoint<Dog>(path: "d", headers: ["x-trace": "endpoint"]))
    #expect(request.headers.values(for: "X-Trace") == ["endpoint"])
    #expect(
      request.headers
        == ["Accept": "application/json", "User-Agent": "Errand/0.1.0", "x-trace": "endpoint"])
  }

  @Test(
    arguments: [
      (
        ["X-Trace": "abc\r\nX-Injected: 1"] as HTTPHeaders,
        "GET dogs: the value of header \"X-Trace\" contains a carriage return (U+000D); "
          + "header values must not contain control characters."
      ),
      (
        ["X-Trace": "abc\nSet-Cookie: a=b"],
        "GET dogs: the value of header \"X-Trace\" contains a line feed (U+000A); "
          + "header values must not contain control characters."
      ),
      (
        ["X-Trace": "abc\0"],
        "GET dogs: the value of header \"X-Trace\" contains a NUL character (U+0000); "
          + "header values must not contain control characters."
      ),
      (
        ["X-Trace": "abc\u{1B}[31m"],
        "GET dogs: the value of header \"X-Trace\" contains the control character U+001B; "
          + "header values must not contain control characters."
      ),
      (
        ["X-Trace": "abc\u{7F}"],
        "GET dogs: the value of header \"X-Trace\" contains the control character U+007F; "
          + "header values must not contain control characters."
      ),
      (["X Trace": "abc"], "GET dogs: the header name \"X Trace\" is not a valid token."),
      (["X-Trace:": "abc"], "GET dogs: the header name \"X-Trace:\" is not a valid token."),
      (["X\r\nY": "abc"], "GET dogs: the header name \"X\\r\\nY\" is not a valid token."),
      (["": "abc"], "GET dogs: the header name \"\" is not a valid token."),
      (["Dög": "abc"], "GET dogs: the header name \"Dög\" is not a valid token."),
    ] as [(HTTPHeaders, String)])
  func rejectsInvalidEndpointHeaders(headers: HTTPHeaders, reason: String) throws {
    let error = try #require(throws: APIError.self) {
      try makeClient().makeRequest(for: Endpoint<Data>(path: "dogs", headers: headers))
    }
    #expect(error.invalidRequestReason == reason)
  }

  @Test func rejectsInvalidClientHeaders() throws {
    let client = makeClient(configuration: APIClient.Configuration(headers: ["X-Key": "k\r\n"]))
    let error = try #require(throws: APIError.self) {
      try client.makeRequest(for: Endpoint<Void>(method: .delete, path: "dogs/1"))
    }
    #expect(
      error.invalidRequestReason
        == "DELETE dogs/1: the value of header \"X-Key\" contains a carriage return (U+000D); "
        + "header values must not contain control characters.")
  }
}
