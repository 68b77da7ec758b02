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
