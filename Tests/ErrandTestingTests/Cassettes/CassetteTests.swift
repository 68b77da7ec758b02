import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// A fresh folder for one test's cassettes.
func temporaryCassette(_ name: String = "cassette") -> URL {
  FileManager.default.temporaryDirectory
    .appendingPathComponent("errand-tests-\(UUID().uuidString)")
    .appendingPathComponent("\(name).json")
}

/// One kind of body, to record and replay.
struct BodyCase: Sendable, CustomTestStringConvertible {
  var label: String
  var body: Data
  var contentType: String
  var storedAs: String

  var testDescription: String { label }
}

@Suite(.timeLimit(.minutes(3))) struct CassetteTests {
  static let bodies: [BodyCase] = [
    BodyCase(
      label: "compact JSON", body: Data(#"{"name":"Rex","tags":["good",1.50]}"#.utf8),
      contentType: "application/json", storedAs: "json"),
    BodyCase(
      label: "pretty JSON", body: Data("{\n  \"name\" : \"Rex\"\n}".utf8),
      contentType: "application/json", storedAs: "text"),
    BodyCase(
      label: "text", body: Data("plain text, é\nline two".utf8), contentType: "text/plain",
      storedAs: "text"),
    BodyCase(
      label: "binary", body: Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF, 0xFE]),
      contentType: "image/png", storedAs: "base64"),
    BodyCase(
      label: "form", body: Data("a=1&b=two+words".utf8),
      contentType: "application/x-www-form-urlencoded", storedAs: "text"),
    BodyCase(label: "empty", body: Data(), contentType: "text/plain", storedAs: "none"),
  ]

  @Test(arguments: bodies)
  func everyBodyKindReplaysByteForByte(_ bodyCase: BodyCase) async throws {
    let file = temporaryCassette()
    let upstream = StubTransport { request in
      .status(
        200, body: bodyCase.body,
        headers: ["Content-Type": bodyCase.contentType, "X-Echo": "\(request.body?.count ?? 0)"])
    }
    let request = HTTPRequest(
      method: .post,
      url: URL(string: "https://api.example.com/v1/upload?kind=\(bodyCase.storedAs)")!,
      headers: ["Content-Type": bodyCase.contentType],
      body: bodyCase.body.isEmpty ? nil : bodyCase.body)
    let recorder = CassetteTransport(url: file, mode: .all, upstream: upstream)
    let live = try await recorder.send(request)

    let text = try String(contentsOf: file, encoding: .utf8)
    #expect(
      bodyCase.storedAs == "none"
        ? !text.contains("\"body\"") : text.contains("\"\(bodyCase.storedAs)\": "))

    let player = CassetteTransport(url: file, mode: .none)
    let replayed = try await player.send(request)
    #expect(replayed == live)
    #expect(replayed.body == bodyCase.body)
    #expect(await player.verifyAllPlayed().isEmpty)
  }

  @Test func theFileIsPrettyStableAndReadable() async throws {
    let file = temporaryCassette()
    let upstream = StubTransport { _ in .json(["name": "Rex"]) }
    let client = APIClient(
      baseURL: URL(string: "https://api.example.com/v1")!,
      transport: CassetteTransport(url: file, mode: .all, upstream: upstream))
    _ = try await client.send(
      Endpoint<Dog>(path: "dogs/1", query: [URLQueryItem(name: "page", value: "2")]))
    #expect(
      try String(contentsOf: file, encoding: .utf8) == """
        {
          "version": 1,
          "recordedWith": "Errand",
          "exchanges": [
            {
              "request": {
                "method": "GET",
                "url": "https://api.example.com/v1/dogs/1?page=2",
                "headers": [
                  ["Accept", "application/json"],
                  ["User-Agent", "Errand/0.1.0"]
                ]
              },
              "response": {
                "status": 200,
                "headers": [
                  ["Content-Type", "application/json"]
                ],
                "body": {
                  "json": {
                    "name": "Rex"
                  }
                }
              }
            }
          ]
        }

        """)
  }

  @Test func secretsNeverReachTheFile() async throws {
    let file = temporaryCassette()
    let upstream = StubTransport { _ in
      .status(
        200,
        body: Data(
          #"{"access_token":"s3cret-issued","refresh_token":"s3cret-refresh","user":"ann"}"#.utf8),
        headers: ["Set-Cookie": "session=s3cret-cookie", "Content-Type": "application/json"])
    }
    let cassette = CassetteTransport(url: file, mode: .all, upstream: upstream)
    let client = APIClient(baseURL: URL(string: "https://api.example.com")!, transport: cassette)
    let endpoint = Endpoint<Data>(
      method: .post, path: "login", query: [URLQueryItem(name: "api_key", value: "s3cret-query")],
      headers: [
        "Authorization": "Bearer s3cret-token", "Cookie": "c=s3cret-cookie2",
        "X-Api-Key": "s3cret-key",
      ],
      body: .json(["user": "ann", "password": "s3cret-password"]))
    let live = try await client.send(endpoint)
    #expect(live.count > 0)
    let text = try String(contentsOf: file, encoding: .utf8)
    for secret in [
      "s3cret-issued", "s3cret-refresh", "s3cret-cookie", "s3cret-query", "s3cret-token",
      "s3cret-key", "s3cret-password",
    ] {
      #expect(!text.contains(secret), "\(secret) reached the cassette")
    }
    #expect(text.contains(#""password": "<redacted>""#))
    #expect(text.contains("api_key=%3Credacted%3E"))
    #expect(text.contains(#""user": "ann""#))
    // A redacted query value matches any value on replay.
    let replay = APIClient(
      baseURL: URL(string: "https://api.example.com")!,
      transport: CassetteTransport(url: file, mode: .none))
    _ = try await replay.send(endpoint)
  }

  @Test func onceRecordsAMissingCassetteThenReplaysWithoutTheNetwork() async throws {
    let file = temporaryCassette()
    let upstream = StubTransport { _ in .json([Dog(name: "Rex")]) }
    let endpoint = Endpoint<[Dog]>(path: "dogs")
    let base = URL(string: "https://api.example.com/v1")!
    #expect(
      try await APIClient(
        baseURL: base, transport: CassetteTransport(url: file, mode: .once, upstream: upstream)
      ).send(endpoint) == [Dog(name: "Rex")])
    #expect(await upstream.requests.count == 1)
    #expect(
      try await APIClient(
        baseURL: base, transport: CassetteTransport(url: file, mode: .once, upstream: upstream)
      ).send(endpoint) == [Dog(name: "Rex")])
    #expect(await upstream.requests.count == 1)
  }

  @Test func allAlwaysRecordsAndReplacesTheCassette() async throws {
    let file = temporaryCassette()
    let upstream = StubTransport()
    await upstream.on(
      .get, "/v1/dogs", .sequence([.json([Dog(name: "Rex")]), .json([Dog(name: "Bella")])]))
    let base = URL(string: "https://api.example.com/v1")!
    for expected in ["Rex", "Bella"] {
      let client = APIClient(
        baseURL: base, transport: CassetteTransport(url: file, mode: .all, upstream: upstream))
      #expect(try await client.send(Endpoint<[Dog]>(path: "dogs")) == [Dog(name: expected)])
    }
    let replay = APIClient(baseURL: base, transport: CassetteTransport(url: file, mode: .none))
    #expect(try await replay.send(Endpoint<[Dog]>(path: "dogs")) == [Dog(name: "Bella")])
    #expect(await upstream.requests.count == 2)
  }

  @Test func newEpisodesReplaysKnownAndRecordsNew() async throws {
    let file = temporaryCassette()
    let upstream = StubTransport { request in .status(200, body: Data(request.url.path.utf8)) }
    let first = CassetteTransport(url: file, mode: .all, upstream: upstream)
    _ = try await first.send(HTTPRequest(url: URL(string: "https://x.example/a")!))
    let second = CassetteTransport(url: file, mode: .newEpisodes, upstream: upstream)
    #expect(
      try await second.send(HTTPRequest(url: URL(string: "https://x.example/a")!)).body
        == Data("/a".utf8))
    #expect(
      try await second.send(HTTPRequest(url: URL(string: "https://x.example/b")!)).body
        == Data("/b".utf8))
    #expect(await upstream.requests.map(\.url.path) == ["/a", "/b"])
    let replay = CassetteTransport(url: file, mode: .none)
    #expect(
      try await replay.send(HTTPRequest(url: URL(string: "https://x.example/b")!)).body
        == Data("/b".utf8))
  }

  @Test func noneNeverRecords() async throws {
    let file = temporaryCassette()
    let error = try await #require(throws: CassetteError.self) {
      _ = try await CassetteTransport(
        url: file, mode: .none, upstream: StubTransport { _ in .status(200) }
      )
      .send(HTTPRequest(url: URL(string: "https://x.example/a")!))
    }
    #expect(error == .fileNotFound(path: file.path))
    #expect(
      error.description
        == "No cassette at \(file.path). Record one with mode .once or .all and an upstream transport."
    )
  }

  @Test func recordingWithoutUpstreamSaysSo() async throws {
    let file = temporaryCassette()
    let error = try await #require(throws: CassetteError.self) {
      _ = try await CassetteTransport(url: file, mode: .once).send(
        HTTPRequest(url: URL(string: "https://x.example/a")!))
    }
    #expect(error == .noUpstream(path: file.path))
  }
}
