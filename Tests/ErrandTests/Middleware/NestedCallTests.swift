import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// A call a middleware makes while another is in flight — an OAuth token refresh through an
/// `APIClient` — is a call of its own: it neither streams because the outer call streams nor
/// reports its upload to the outer call's progress.
@Suite(.timeLimit(.minutes(3))) struct NestedCallTests {
  struct Grant: Codable, Sendable {
    var accessToken: String
  }

  /// Refreshes by posting to `oauth/token` through `refresher` (or the client it is given later).
  actor OAuthTokens: TokenProvider {
    private var token = "expired"
    private var refresher: APIClient?
    private(set) var refreshes = 0

    init(refresher: APIClient? = nil) { self.refresher = refresher }

    func use(_ client: APIClient) { refresher = refresher ?? client }

    func currentToken() -> String? { token }

    func refreshToken() async throws -> String {
      refreshes += 1
      guard let refresher else { throw URLError(.userAuthenticationRequired) }
      let grant = try await refresher.send(
        Endpoint<Grant>(
          method: .post, path: "oauth/token",
          body: .form([("grant_type", "refresh_token"), ("refresh_token", "r3fresh-r3fresh")])))
      token = grant.accessToken
      return grant.accessToken
    }
  }

  /// Each entry point, with the body its route answers and how it reads it.
  enum EntryPoint: String, CaseIterable, CustomTestStringConvertible {
    case send, stream, events, jsonLines, download
    var testDescription: String { rawValue }

    var body: String {
      switch self {
      case .send, .stream, .download: #"[{"name":"Rex"}]"#
      case .events: "data: Rex\n\n"
      case .jsonLines: "{\"name\":\"Rex\"}\n"
      }
    }

    /// Call `/v1/feed` and return the names read.
    func call(_ client: APIClient) async throws -> [String] {
      let feed = Endpoint<[Dog]>(path: "feed", requiresAuthentication: true)
      let raw = Endpoint<Data>(path: "feed", requiresAuthentication: true, decoding: .data)
      switch self {
      case .send:
        return try await client.send(feed).map(\.name)
      case .stream:
        let data = try await client.stream(raw).collect()
        return try JSONDecoder().decode([Dog].self, from: data).map(\.name)
      case .events:
        var names: [String] = []
        for try await event in try await client.events(raw) { names.append(event.data) }
        return names
      case .jsonLines:
        var names: [String] = []
        for try await dog in try await client.jsonLines(
          Endpoint<Dog>(path: "feed", requiresAuthentication: true))
        {
          names.append(dog.name)
        }
        return names
      case .download:
        let folder = try TemporaryFolder()
        let saved = try await client.download(raw, to: folder.appending("feed.json"))
        return try JSONDecoder().decode([Dog].self, from: Data(contentsOf: saved.value)).map(
          \.name)
      }
    }
  }

  /// A stub whose feed answers `401` until the refreshed token comes, and whose token endpoint
  /// answers a grant.
  static func stub(for entry: EntryPoint) async -> StubTransport {
    let stub = StubTransport()
    await stub.on(
      .post, "/v1/oauth/token", .status(200, body: Data(#"{"accessToken":"fresh"}"#.utf8)))
    await stub.on(
      .get, "/v1/feed",
      .handler { request, _ in
        request.headers["Authorization"] == "Bearer fresh"
          ? .status(200, body: Data(entry.body.utf8)) : .status(401)
      })
    return stub
  }

  @Test(arguments: EntryPoint.allCases, [false, true])
  func aRefreshThatCallsAnAPIGetsItsBody(entry: EntryPoint, throughTheSameClient: Bool)
    async throws
  {
    let stub = await Self.stub(for: entry)
    let refresher = throughTheSameClient ? nil : APIClient(baseURL: base, transport: stub)
    let tokens = OAuthTokens(refresher: refresher)
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        middleware: [BearerAuthenticationMiddleware(provider: tokens)]))
    await tokens.use(client)
    #expect(try await entry.call(client) == ["Rex"])
    #expect(await tokens.refreshes == 1)
    let feeds = await stub.requests(matching: .path("/v1/feed"))
    #expect(feeds.map { $0.headers["Authorization"] } == ["Bearer expired", "Bearer fresh"])
  }

  @Test func theOuterCallsProgressSeesOnlyItsOwnBytes() async throws {
    let stub = StubTransport()
    await stub.on(
      .post, "/v1/oauth/token", .status(200, body: Data(#"{"accessToken":"fresh"}"#.utf8)))
    await stub.on(
      .post, "/v1/upload",
      .handler { request, _ in
        request.headers["Authorization"] == "Bearer fresh" ? .status(204) : .status(401)
      })
    let tokens = OAuthTokens()
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        middleware: [BearerAuthenticationMiddleware(provider: tokens)]))
    await tokens.use(client)
    let upload = Data(repeating: 7, count: 1_000)
    let reports = Locked<[TransferProgress]>([])
    try await client.send(
      Endpoint<Void>(
        method: .post, path: "upload", body: .data(upload), requiresAuthentication: true)
    ) { progress in reports.withLock { $0.append(progress) } }
    // Two attempts of the 1,000-byte body; the refresh's form body is never reported.
    #expect(
      reports.withLock { $0 }
        == Array(repeating: TransferProgress(completedBytes: 1_000, expectedBytes: 1_000), count: 2)
    )
  }
}
