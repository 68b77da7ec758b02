import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// A server that echoes what it was sent must not get the request's secrets written to disk.
@Suite(.timeLimit(.minutes(3))) struct CassetteSecretsTests {
  @Test func echoedSecretsAndSecretLocationsNeverReachTheFile() async throws {
    let file = temporaryCassette()
    let upstream = StubTransport { request in
      let echo =
        #"{"headers":{"Authorization":"\#(request.headers["Authorization"] ?? "")"},"#
        + #""note":"your key is k3y-s3cret-value","args":"t0ken-s3cret"}"#
      return .status(
        302, body: Data(echo.utf8),
        headers: [
          "Content-Type": "application/json", "Content-Length": String(echo.utf8.count),
          "Location": "https://cdn.example.com/file?token=t0ken-s3cret",
          "X-Echo": "Bearer abcd-s3cret",
        ])
    }
    let cassette = CassetteTransport(url: file, mode: .once, upstream: upstream)
    let client = APIClient(baseURL: base, transport: cassette)
    _ = try await client.response(
      for: Endpoint<Data>(
        path: "echo", query: [URLQueryItem(name: "token", value: "t0ken-s3cret")],
        headers: ["Authorization": "Bearer abcd-s3cret", "X-API-Key": "k3y-s3cret-value"],
        decoding: .data, acceptableStatusCodes: 200..<400))
    let text = try String(contentsOf: file, encoding: .utf8)
    for secret in ["abcd-s3cret", "k3y-s3cret-value", "t0ken-s3cret"] {
      #expect(!text.contains(secret), "\(secret) reached the cassette:\n\(text)")
    }
    let replayed = try await APIClient(
      baseURL: base, transport: CassetteTransport(url: file, mode: .none)
    ).response(
      for: Endpoint<Data>(
        path: "echo", query: [URLQueryItem(name: "token", value: "anything")],
        decoding: .data, acceptableStatusCodes: 200..<400))
    #expect(replayed.response.headers["Content-Length"] == String(replayed.value.count))
    #expect(replayed.response.headers["Location"]?.contains("token=<redacted>") == true)
  }
}

/// A `Set-Cookie` a cassette hid (`Set-Cookie: <redacted>`) holds no cookie: a replay leaves it
/// out, so a client's jar does not store `<redacted>` as a cookie with no name, whether the
/// cassette answers whole or streamed, or its HAR export answers as stub routes.
@Suite(.timeLimit(.minutes(3))) struct CassetteRedactedCookieTests {
  enum Replay: String, CaseIterable { case send, stream, harStub }

  @Test(arguments: Replay.allCases)
  func aRedactedSetCookieIsNotReplayedAsACookie(_ replay: Replay) async throws {
    let file = temporaryCassette()
    let upstream = StubTransport { _ in
      .status(
        200, body: Data("ok".utf8),
        headers: HTTPHeaders([
          .init(name: "Set-Cookie", value: "session=s3cret; Path=/"),
          .init(name: "X-Kept", value: "yes"),
        ]))
    }
    let endpoint = Endpoint<Data>(path: "login", decoding: .data)
    _ = try await APIClient(
      baseURL: base, transport: CassetteTransport(url: file, mode: .all, upstream: upstream)
    ).send(endpoint)
    let written = try String(contentsOf: file, encoding: .utf8)
    #expect(written.contains("<redacted>"))
    #expect(!written.contains("s3cret"))

    let jar = CookieJar()
    var configuration = APIClient.Configuration()
    configuration.cookieJar = jar
    let transport: any Transport
    switch replay {
    case .send, .stream:
      transport = CassetteTransport(url: file, mode: .none)
    case .harStub:
      let stub = StubTransport()
      try await stub.on(har: try HAR(cassetteAt: file))
      transport = stub
    }
    let client = APIClient(baseURL: base, transport: transport, configuration: configuration)
    let headers: HTTPHeaders
    if replay == .stream {
      let stream = try await client.stream(endpoint)
      _ = try await stream.collect()
      headers = stream.response.headers
    } else {
      headers = try await client.response(for: endpoint).response.headers
    }
    #expect(headers["X-Kept"] == "yes")
    #expect(headers["Set-Cookie"] == nil)
    #expect(jar.allCookies.isEmpty, "stored: \(jar.allCookies)")
  }
}
