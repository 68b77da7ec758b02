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

@Suite(.timeLimit(.minutes(2))) struct CassetteTests {
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

@Suite(.timeLimit(.minutes(2))) struct CassetteMatchingTests {
  /// A cassette holding one GET of `/dogs?a=1&b=2` with a header and a JSON body.
  private func recorded() async throws -> URL {
    let file = temporaryCassette()
    let recorder = CassetteTransport(
      url: file, mode: .all, upstream: StubTransport { _ in .status(204) })
    _ = try await recorder.send(
      HTTPRequest(
        method: .post, url: URL(string: "https://x.example/dogs?a=1&b=2")!,
        headers: ["X-Version": "2", "Content-Type": "application/json"],
        body: Data(#"{"a":1,"b":2}"#.utf8)))
    return file
  }

  @Test(
    arguments: [
      (
        "same request", "POST", "https://x.example/dogs?a=1&b=2", ["X-Version": "2"],
        #"{"a":1,"b":2}"#, CassetteTransport.Matching.default, true
      ),
      ("query in another order", "POST", "https://x.example/dogs?b=2&a=1", [:], "", .default, true),
      ("another query value", "POST", "https://x.example/dogs?a=1&b=3", [:], "", .default, false),
      (
        "an extra query item", "POST", "https://x.example/dogs?a=1&b=2&c=3", [:], "", .default,
        false
      ),
      ("another method", "PUT", "https://x.example/dogs?a=1&b=2", [:], "", .default, false),
      ("another path", "POST", "https://x.example/cats?a=1&b=2", [:], "", .default, false),
      (
        "another host, same path", "POST", "https://y.example/dogs?a=1&b=2", [:], "", .default, true
      ),
      ("method and path only", "POST", "https://x.example/dogs", [:], "", [.method, .path], true),
      (
        "headers required and present", "POST", "https://x.example/dogs?a=1&b=2",
        ["X-Version": "2", "Content-Type": "application/json"], "", [.method, .path, .headers], true
      ),
      (
        "headers required and different", "POST", "https://x.example/dogs?a=1&b=2",
        ["X-Version": "3", "Content-Type": "application/json"], "", [.method, .headers], false
      ),
      (
        "body required, same JSON reordered", "POST", "https://x.example/dogs", [:],
        #"{"b":2,"a":1}"#, [.body], true
      ),
      (
        "body required and different", "POST", "https://x.example/dogs", [:], #"{"a":1}"#, [.body],
        false
      ),
    ] as [(String, String, String, HTTPHeaders, String, CassetteTransport.Matching, Bool)])
  func matchesAsConfigured(
    label: String, method: String, address: String, headers: HTTPHeaders, body: String,
    matching: CassetteTransport.Matching, matches: Bool
  ) async throws {
    let player = CassetteTransport(url: try await recorded(), mode: .none, matching: matching)
    let request = HTTPRequest(
      method: HTTPMethod(rawValue: method), url: URL(string: address)!, headers: headers,
      body: body.isEmpty ? nil : Data(body.utf8))
    do {
      _ = try await player.send(request)
      #expect(matches, "\(label)")
    } catch let error as CassetteError {
      #expect(!matches, "\(label): \(error)")
      guard case .noMatch = error else {
        Issue.record("expected noMatch, got \(error)")
        return
      }
    }
  }

  @Test func eachExchangePlaysOnceUnlessRepeatsAreAllowed() async throws {
    let file = try await recorded()
    let request = HTTPRequest(method: .post, url: URL(string: "https://x.example/dogs?a=1&b=2")!)
    let strict = CassetteTransport(url: file, mode: .none)
    _ = try await strict.send(request)
    let error = try await #require(throws: CassetteError.self) {
      _ = try await strict.send(request)
    }
    #expect(
      error.description == """
        No unplayed exchange in the cassette at \(file.path) matches POST https://x.example/dogs?a=1&b=2. It holds:
          POST https://x.example/dogs?a=1&b=2 (played)
        """)
    let lenient = CassetteTransport(url: file, mode: .none, allowsRepeats: true)
    for _ in 0..<3 {
      #expect(try await lenient.send(request).status == 204)
    }
  }

  @Test func reportsUnplayedExchangesWhereTheTransportWasMade() async throws {
    let file = try await recorded()
    let line = #line + 1
    let player = CassetteTransport(url: file, mode: .none)
    _ = try? await player.send(HTTPRequest(url: URL(string: "https://x.example/nothing")!))
    await withKnownIssue {
      #expect(await player.verifyAllPlayed() == ["POST https://x.example/dogs?a=1&b=2"])
    } matching: { issue in
      issue.sourceLocation?.line == line && String(describing: issue).contains("unplayed exchanges")
    }
  }
}

@Suite(.timeLimit(.minutes(2))) struct BadCassetteTests {
  private func write(_ text: String) throws -> URL {
    let file = temporaryCassette()
    try FileManager.default.createDirectory(
      at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
    try Data(text.utf8).write(to: file)
    return file
  }

  private func error(loading file: URL) async throws -> CassetteError {
    try await #require(throws: CassetteError.self) {
      _ = try await CassetteTransport(url: file, mode: .none).send(
        HTTPRequest(url: URL(string: "https://x.example/")!))
    }
  }

  @Test func invalidJSONGivesThePosition() async throws {
    let file = try write("{\n  \"version\": 1,\n  \"exchanges\": [ {,} ]\n}")
    let error = try await error(loading: file)
    #expect(
      error == .invalidJSON(path: file.path, line: 3, column: 19, reason: "expected a quoted key"))
    #expect(
      error.description
        == "The cassette at \(file.path) is not valid JSON: line 3, column 19: expected a quoted key."
    )
  }

  @Test func anUnknownVersionIsNamed() async throws {
    let file = try write(#"{"version": 7, "exchanges": []}"#)
    let error = try await error(loading: file)
    #expect(error == .unsupportedVersion(path: file.path, found: 7, supported: 1))
    #expect(
      error.description
        == "The cassette at \(file.path) has version 7; this Errand reads version 1.")
  }

  @Test(arguments: [
    (#"{"exchanges": []}"#, #"it has no "version" number"#),
    (#"{"version": 1}"#, #"it has no "exchanges" array"#),
    (
      #"{"version": 1, "exchanges": [{"request": {"method": "GET", "url": "https://x.example/"}}]}"#,
      "exchanges[0].response is missing"
    ),
    (
      #"{"version": 1, "exchanges": [{"request": {"url": "https://x.example/"}, "response": {"status": 200}}]}"#,
      "exchanges[0].request.method must be a string"
    ),
    (
      #"{"version": 1, "exchanges": [{"request": {"method": "GET", "url": "https://x.example/"}, "response": {"status": "ok"}}]}"#,
      "exchanges[0].response.status must be a number"
    ),
    (
      #"{"version": 1, "exchanges": [{"request": {"method": "GET", "url": "https://x.example/"}, "response": {"status": 200, "body": {"base64": "%%%"}}}]}"#,
      "exchanges[0].response.body has base64 that does not decode"
    ),
    (
      #"{"version": 1, "exchanges": [{"request": {"method": "GET", "url": "https://x.example/", "headers": {"a": "b"}}, "response": {"status": 200}}]}"#,
      "exchanges[0].request.headers must be an array of [name, value] pairs"
    ),
  ])
  func malformedCassettesSayWhatIsWrong(text: String, reason: String) async throws {
    let file = try write(text)
    #expect(try await error(loading: file) == .malformed(path: file.path, reason: reason))
  }
}
