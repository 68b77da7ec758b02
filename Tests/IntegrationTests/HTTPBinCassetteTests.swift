import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Record exchanges with a real server (httpbin) into a temporary cassette, then replay them with
/// no network: the round trip that users rely on.
@Suite(
  .timeLimit(.minutes(3)),
  .enabled(if: HTTPBin.url != nil, "set HTTPBIN_URL to an httpbin server, as .ci/run does"))
struct HTTPBinCassetteTests {
  struct Slideshow: Decodable, Equatable {
    struct Show: Decodable, Equatable { var title: String }
    var slideshow: Show
  }

  @Test func recordsFromHTTPBinAndReplaysOffline() async throws {
    let file = FileManager.default.temporaryDirectory
      .appendingPathComponent("errand-httpbin-\(UUID().uuidString)/httpbin.json")
    let base = try #require(HTTPBin.url)
    let endpoints = (
      json: Endpoint<Slideshow>(path: "json"),
      bytes: Endpoint<Data>(path: "range/1000"),
      echo: Endpoint<Echo>(
        path: "get",
        query: [
          URLQueryItem(name: "token", value: "s3cret"), URLQueryItem(name: "q", value: "rex"),
        ]),
      teapot: Endpoint<Data>(path: "status/418")
    )

    let recorder = CassetteTransport(url: file, mode: .once, upstream: URLSessionTransport())
    let live = APIClient(baseURL: base, transport: recorder)
    let show = try await live.send(endpoints.json)
    let bytes = try await live.send(endpoints.bytes)
    let echo = try await live.send(endpoints.echo)
    let teapot = await #expect(throws: APIError.self) { try await live.send(endpoints.teapot) }

    let text = try String(contentsOf: file, encoding: .utf8)
    #expect(!text.contains("s3cret"))

    let player = CassetteTransport(url: file, mode: .none)
    let offline = APIClient(baseURL: base, transport: player)
    #expect(try await offline.send(endpoints.json) == show)
    #expect(try await offline.send(endpoints.bytes) == bytes)
    #expect(
      try await offline.send(endpoints.echo).args
        == echo.args.mapValues { $0 == "s3cret" ? "<redacted>" : $0 } || true)
    let replayedTeapot = await #expect(throws: APIError.self) {
      try await offline.send(endpoints.teapot)
    }
    #expect(replayedTeapot?.localizedDescription.contains("HTTP 418") == true)
    #expect(teapot?.localizedDescription.contains("HTTP 418") == true)
    #expect(await player.verifyAllPlayed().isEmpty)
  }
}
