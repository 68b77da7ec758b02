import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct StubTransportTests {
  @Test func answersTheMatchingRouteAndRecordsTheRequest() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs", .json([Dog(name: "Rex")]))
    await stub.on(.post, "/v1/dogs", .status(201))
    let client = APIClient(baseURL: base, transport: stub)
    #expect(try await client.send(Endpoint<[Dog]>(path: "dogs")) == [Dog(name: "Rex")])
    try await client.send(
      Endpoint<Void>(method: .post, path: "dogs", body: .json(Dog(name: "Bella"))))
    let sent = await stub.requests
    #expect(
      sent.map(\.description) == [
        "GET https://api.example.com/v1/dogs", "POST https://api.example.com/v1/dogs",
      ])
    #expect(sent.last?.body == Data(#"{"name":"Bella"}"#.utf8))
  }

  @Test func firstRegisteredRouteWins() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs", .status(200, body: Data("first".utf8)))
    await stub.on(.get, "/v1/dogs", .status(200, body: Data("second".utf8)))
    let text = try await APIClient(baseURL: base, transport: stub).send(
      Endpoint<String>(path: "dogs"))
    #expect(text == "first")
  }

  @Test(arguments: [400, 401, 404, 500, 503])
  func statusResponsesKeepTheirBodyAndHeaders(status: Int) async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/dogs", .status(status, body: Data("nope".utf8), headers: ["Retry-After": "3"]))
    let response = try await stub.send(HTTPRequest(url: base.appendingPathComponent("dogs")))
    #expect(response.status == status)
    #expect(response.body == Data("nope".utf8))
    #expect(response.headers["retry-after"] == "3")
    #expect(response.url == base.appendingPathComponent("dogs"))
  }

  @Test func errorsAreThrownAsGiven() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/offline", .error(URLError(.notConnectedToInternet)))
    let error = try await #require(throws: URLError.self) {
      _ = try await stub.send(HTTPRequest(url: base.appendingPathComponent("offline")))
    }
    #expect(error.code == .notConnectedToInternet)
  }

  @Test func fullResponsesAreSentAsGiven() async throws {
    let stub = StubTransport()
    let canned = HTTPResponse(
      status: 202, headers: ["ETag": "v1"], body: Data([1, 2, 3]),
      url: URL(string: "https://cdn.example.com/x"))
    await stub.on(.get, "/v1/x", .response(canned))
    #expect(try await stub.send(HTTPRequest(url: base.appendingPathComponent("x"))) == canned)
  }

  @Test func handlerAnswersWhatNoRouteMatches() async throws {
    let echo = StubTransport { request in .status(201, body: request.body ?? Data(), headers: [:]) }
    let response = try await echo.send(
      HTTPRequest(method: .put, url: base, body: Data("hello".utf8)))
    #expect(response.status == 201)
    #expect(response.body == Data("hello".utf8))
  }

  @Test func unmatchedRequestNamesTheRequestAndTheRoutes() async throws {
    let stub = StubTransport()
    let line = #line + 1
    await stub.on(.get, "/v1/dogs", .status(200))
    await stub.on(.delete, "/v1/dogs/1", .status(204))
    let request = HTTPRequest(
      method: .post, url: URL(string: "https://api.example.com/v1/cats?x=1")!,
      headers: ["Authorization": "Bearer s3cret", "Accept": "application/json"])
    let error = try await #require(throws: UnmatchedRequest.self) {
      _ = try await stub.send(request)
    }
    #expect(
      error.description == """
        StubTransport has no route for POST https://api.example.com/v1/cats?x=1
        headers:
          Authorization: <redacted>
          Accept: application/json
        closest routes:
          GET /v1/dogs (registered at StubTransportTests.swift:\(line))
            - method: expected GET, sent POST
            - path: expected /v1/dogs, sent /v1/cats
          DELETE /v1/dogs/1 (registered at StubTransportTests.swift:\(line + 1))
            - method: expected DELETE, sent POST
            - path: expected /v1/dogs/1, sent /v1/cats
        """)
    #expect(await stub.requests == [request])
  }

  @Test func unmatchedRequestWithoutRoutesSaysSo() async throws {
    let error = try await #require(throws: UnmatchedRequest.self) {
      _ = try await StubTransport().send(HTTPRequest(url: URL(string: "https://x.example/a")!))
    }
    #expect(
      error.description
        == "StubTransport has no route for GET https://x.example/a\nno routes are registered")
  }

  @Test func unencodableJSONIsThrownWhenAsked() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/nan", .json([Double.nan]))
    await #expect(throws: EncodingError.self) {
      _ = try await stub.send(HTTPRequest(url: URL(string: "https://api.example.com/v1/nan")!))
    }
  }
}
