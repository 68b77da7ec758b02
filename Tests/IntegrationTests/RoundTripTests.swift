import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// Headers and bodies cross `URLSessionTransport` byte for byte, both ways.
@Suite(.timeLimit(.minutes(3))) struct RoundTripTests {
  @Test(arguments: [0, 1, 1_000, 65_537, 10 * 1024 * 1024])
  func requestBodyArrivesByteForByte(size: Int) async throws {
    let server = try LoopbackServer { _ in ScriptedResponse(status: 201) }
    defer { server.stop() }
    let body = patternBytes(size)
    let request = HTTPRequest(
      method: .post, url: server.url("/upload"),
      headers: ["Content-Type": "application/octet-stream"],
      body: body)
    let response = try await URLSessionTransport().send(request)
    #expect(response.status == 201)
    let received = try #require(server.requests.first)
    #expect(received.body.count == size)
    #expect(received.body == body)
    #expect(received.method == "POST")
    #expect(received.target == "/upload")
  }

  @Test(
    arguments: [
      (0, nil), (1, nil), (1_000, nil), (65_537, nil), (10 * 1024 * 1024, nil), (10_000, 1_000),
      (1 * 1024 * 1024, 16_384),
    ] as [(Int, Int?)])
  func responseBodyArrivesByteForByte(size: Int, chunkSize: Int?) async throws {
    let body = patternBytes(size)
    let server = try LoopbackServer { _ in ScriptedResponse(body: body, chunkSize: chunkSize) }
    defer { server.stop() }
    let data = try await liveClient(server.baseURL).send(Endpoint<Data>(path: "download"))
    #expect(data.count == size)
    #expect(data == body)
  }

  @Test func requestHeadersArriveAsSent() async throws {
    let server = try LoopbackServer { _ in ScriptedResponse(status: 204) }
    defer { server.stop() }
    let client = liveClient(
      server.baseURL, configuration: APIClient.Configuration(headers: ["X-Client": "errand-tests"]))
    let endpoint = Endpoint<Void>(
      method: .put, path: "dogs/rex the dog", query: [URLQueryItem(name: "q", value: "a+b&c")],
      headers: [
        "X-Trace": "abc-123", "X-Quoted": "\"v\"; tab\there", "Authorization": "Bearer t0k3n",
      ],
      body: .json(Dog(name: "Rex")))
    try await client.send(endpoint)
    let received = try #require(server.requests.first)
    #expect(received.method == "PUT")
    #expect(received.target == "/dogs/rex%20the%20dog?q=a%2Bb%26c")
    #expect(received.headers["X-Trace"] == "abc-123")
    #expect(received.headers["X-Quoted"] == "\"v\"; tab\there")
    #expect(received.headers["Authorization"] == "Bearer t0k3n")
    #expect(received.headers["X-Client"] == "errand-tests")
    #expect(received.headers["User-Agent"] == "Errand/0.1.0")
    #expect(received.headers["Accept"] == "*/*")
    #expect(received.headers["Content-Type"] == "application/json")
    #expect(received.body == Data(#"{"name":"Rex"}"#.utf8))
  }

  @Test func responseHeadersArriveAsSent() async throws {
    let server = try LoopbackServer { _ in
      ScriptedResponse(
        headers: [
          ("Content-Type", "application/json"), ("X-Request-Id", "r-42"), ("ETag", "\"v1\""),
        ],
        body: Data(#"{"name":"Rex"}"#.utf8))
    }
    defer { server.stop() }
    let full = try await liveClient(server.baseURL).response(for: Endpoint<Dog>(path: "dogs/1"))
    #expect(full.value == Dog(name: "Rex"))
    #expect(full.response.headers["x-request-id"] == "r-42")
    #expect(full.response.headers["ETag"] == "\"v1\"")
    #expect(full.response.headers["Content-Type"] == "application/json")
    #expect(full.response.url == server.url("/dogs/1"))
    #expect(full.request.url == server.url("/dogs/1"))
  }

  @Test func formAndMultipartBodiesArriveExactly() async throws {
    let server = try LoopbackServer { _ in ScriptedResponse(status: 204) }
    defer { server.stop() }
    let client = liveClient(server.baseURL)
    try await client.send(
      Endpoint<Void>(method: .post, path: "form", body: .form([("q", "rex & co")])))
    let form = MultipartForm(
      boundary: "XyZ",
      parts: [.field("name", "Rex"), .file("p", filename: "p.bin", data: patternBytes(300))])
    try await client.send(Endpoint<Void>(method: .post, path: "upload", body: .multipart(form)))
    let requests = server.requests
    #expect(requests.count == 2)
    #expect(requests.first?.body == Data("q=rex+%26+co".utf8))
    #expect(requests.first?.headers["Content-Type"] == "application/x-www-form-urlencoded")
    #expect(requests.last?.body == (try form.encoded()))
    #expect(requests.last?.headers["Content-Type"] == "multipart/form-data; boundary=XyZ")
  }
}
