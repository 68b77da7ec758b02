import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// The base URL of an httpbin server, from `HTTPBIN_URL`; `.ci/run` starts one.
enum HTTPBin {
  static let url: URL? = ProcessInfo.processInfo.environment["HTTPBIN_URL"].flatMap {
    URL(string: $0)
  }

  static var client: APIClient {
    liveClient(url ?? URL(string: "http://127.0.0.1:9")!)
  }
}

/// What httpbin echoes back about a request.
struct Echo: Decodable, Sendable {
  var args: [String: String]
  var headers: [String: String]
  var url: String
}

/// The same client and transport against a real server, httpbin, started by `.ci/run`.
@Suite(
  .timeLimit(.minutes(3)),
  .enabled(if: HTTPBin.url != nil, "set HTTPBIN_URL to an httpbin server, as .ci/run does"))
struct HTTPBinTests {
  @Test func getEchoesQueryAndHeaders() async throws {
    let endpoint = Endpoint<Echo>(
      path: "get",
      query: [URLQueryItem(name: "q", value: "rex & co"), URLQueryItem(name: "page", value: "2")],
      headers: ["X-Trace": "abc-123"])
    let echo = try await HTTPBin.client.send(endpoint)
    #expect(echo.args == ["q": "rex & co", "page": "2"])
    #expect(echo.headers["X-Trace"] == "abc-123")
    #expect(echo.headers["User-Agent"] == "Errand/0.1.0")
    #expect(echo.headers["Accept"] == "application/json")
  }

  @Test func jsonDecodes() async throws {
    struct Slideshow: Decodable {
      struct Show: Decodable {
        var title: String
        var slides: [Slide]
      }
      struct Slide: Decodable { var title: String }
      var slideshow: Show
    }
    let show = try await HTTPBin.client.send(Endpoint<Slideshow>(path: "json"))
    #expect(show.slideshow.title == "Sample Slide Show")
    #expect(show.slideshow.slides.map(\.title) == ["Wake up to WonderWidgets!", "Overview"])
  }

  @Test(arguments: [200, 201, 202, 204])
  func successStatuses(status: Int) async throws {
    let full = try await HTTPBin.client.response(for: Endpoint<Data>(path: "status/\(status)"))
    #expect(full.response.status == status)
  }

  @Test(arguments: [400, 401, 403, 404, 418, 429, 500, 502, 503])
  func failureStatuses(status: Int) async throws {
    let error = await #expect(throws: APIError.self) {
      _ = try await HTTPBin.client.send(Endpoint<Data>(path: "status/\(status)"))
    }
    #expect(error?.response?.status == status)
  }

  @Test func headersEchoesWhatWasSent() async throws {
    struct Headers: Decodable { var headers: [String: String] }
    let client = liveClient(
      HTTPBin.url!,
      configuration: APIClient.Configuration(headers: ["X-Client": "errand", "X-Trace": "client"]))
    let echoed = try await client.send(
      Endpoint<Headers>(path: "headers", headers: ["X-Trace": "endpoint"]))
    #expect(echoed.headers["X-Client"] == "errand")
    #expect(echoed.headers["X-Trace"] == "endpoint")
  }

  @Test func bearerAcceptsAToken() async throws {
    struct Bearer: Decodable, Equatable {
      var authenticated: Bool
      var token: String
    }
    let endpoint = Endpoint<Bearer>(path: "bearer", headers: ["Authorization": "Bearer t0k3n"])
    #expect(try await HTTPBin.client.send(endpoint) == Bearer(authenticated: true, token: "t0k3n"))
    let error = await #expect(throws: APIError.self) {
      _ = try await HTTPBin.client.send(Endpoint<Bearer>(path: "bearer"))
    }
    #expect(error?.response?.status == 401)
  }

  @Test func redirectWithinTheOriginKeepsCredentials() async throws {
    let endpoint = Endpoint<Echo>(
      path: "redirect-to", query: [URLQueryItem(name: "url", value: "/get")],
      headers: ["Authorization": "Bearer t0k3n"])
    let full = try await HTTPBin.client.response(for: endpoint)
    #expect(full.value.headers["Authorization"] == "Bearer t0k3n")
    #expect(full.response.url?.path == "/get")
  }

  @Test func redirectToAnotherOriginDropsCredentials() async throws {
    let elsewhere = try LoopbackServer { _ in .text("landed") }
    defer { elsewhere.stop() }
    let endpoint = Endpoint<String>(
      path: "redirect-to",
      query: [URLQueryItem(name: "url", value: elsewhere.url("/landing").absoluteString)],
      headers: ["Authorization": "Bearer t0k3n", "Cookie": "session=s3cret"])
    #expect(try await HTTPBin.client.send(endpoint) == "landed")
    let received = try #require(elsewhere.requests.first)
    #expect(received.headers["Authorization"] == nil)
    #expect(received.headers["Cookie"] == nil)
  }

  @Test(arguments: [0, 1, 1024, 100_000])
  func bytesArriveInFull(count: Int) async throws {
    // httpbin's seeded /bytes shares Python's random state across threads, so only the length is
    // stable under concurrent tests; /range checks the bytes themselves.
    let bytes = try await HTTPBin.client.send(Endpoint<Data>(path: "bytes/\(count)"))
    #expect(bytes.count == count)
  }

  @Test(arguments: [1, 26, 1000, 100_000])
  func rangeArrivesByteForByte(count: Int) async throws {
    let alphabet = Array("abcdefghijklmnopqrstuvwxyz".utf8)
    let expected = Data((0..<count).map { alphabet[$0 % 26] })
    #expect(try await HTTPBin.client.send(Endpoint<Data>(path: "range/\(count)")) == expected)
  }
}
