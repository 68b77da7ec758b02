import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// A cache, a token, retries and logging in every order an app can write them: no order puts a
/// bearer-authenticated body on disk, serves one user's answer to another, or lets an echoed
/// token into what an error prints.
@Suite(.timeLimit(.minutes(3))) struct CachePlacementHostileTests {
  /// One of the four middleware an app combines.
  enum Part: String, CaseIterable, Sendable {
    case cache, bearer, retry, logging
  }

  /// Every order of the four: 24.
  static let orders: [[Part]] = {
    func permutations(_ parts: [Part]) -> [[Part]] {
      guard parts.count > 1 else { return [parts] }
      return parts.indices.flatMap { index in
        var rest = parts
        let first = rest.remove(at: index)
        return permutations(rest).map { [first] + $0 }
      }
    }
    return permutations(Part.allCases)
  }()

  struct Token: TokenProvider {
    let token: String
    func currentToken() async throws -> String? { token }
    func refreshToken() async throws -> String { token }
  }

  /// A client with `token`, its middleware in `order`, over `transport` and `cache`.
  static func client(
    _ order: [Part], token: String, cache: HTTPCache, transport: StubTransport
  ) -> APIClient {
    let middleware: [any Middleware] = order.map { part in
      switch part {
      case .cache: CachingMiddleware(cache: cache)
      case .bearer: BearerAuthenticationMiddleware(provider: Token(token: token))
      case .retry: RetryMiddleware()
      case .logging: LoggingMiddleware { _ in }
      }
    }
    return APIClient(
      baseURL: base, transport: transport,
      configuration: APIClient.Configuration(middleware: middleware))
  }

  /// A server that answers each token with its own private, cacheable list.
  static func server(vary: Bool) -> StubTransport {
    StubTransport { request in
      let token = request.headers["Authorization"] ?? "nobody"
      var headers: HTTPHeaders = ["Cache-Control": "private, max-age=600"]
      if vary { headers["Vary"] = "Authorization" }
      return .status(200, body: Data("private list of \(token)".utf8), headers: headers)
    }
  }

  static let account = Endpoint<Data>(
    path: "account", requiresAuthentication: true, decoding: .data)

  @Test(arguments: orders)
  func aBearerAuthenticatedBodyNeverReachesTheDisk(order: [Part]) async throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("errand-placement-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let cache = HTTPCache(directory: folder)
    let client = Self.client(
      order, token: "tok-A", cache: cache, transport: Self.server(vary: false))
    let body = try await client.send(Self.account)
    #expect(String(decoding: body, as: UTF8.self) == "private list of Bearer tok-A")
    let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
    let entries = (files?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "entry" }
    #expect(entries.isEmpty, "\(order): \(entries.map(\.lastPathComponent))")
  }

  @Test(arguments: orders, [false, true])
  func oneUsersAnswerIsNeverServedToAnother(order: [Part], vary: Bool) async throws {
    let cache = HTTPCache()
    let server = Self.server(vary: vary)
    let ann = Self.client(order, token: "tok-A", cache: cache, transport: server)
    let bob = Self.client(order, token: "tok-B", cache: cache, transport: server)
    _ = try await ann.send(Self.account)
    let bobs = try await bob.response(for: Self.account)
    #expect(String(decoding: bobs.value, as: UTF8.self) == "private list of Bearer tok-B")
    #expect(bobs.response.cacheStatus != .hit)
    // Each user's own answer is still reused for that user.
    let again = try await ann.response(for: Self.account)
    #expect(String(decoding: again.value, as: UTF8.self) == "private list of Bearer tok-A")
    #expect(again.response.cacheStatus == .hit)
    #expect(await server.requests.count == 2)
  }

  /// Clients that disagree on what is secret share one cache: an answer stored for a request that
  /// carried no credentials (in its client's eyes) never answers one that does.
  @Test func anAnswerToNoCredentialsNeverAnswersARequestWithThem() async throws {
    let cache = HTTPCache()
    let server = StubTransport { request in
      .status(
        200, body: Data("tenant \(request.headers["X-Tenant"] ?? "-")".utf8),
        headers: ["Cache-Control": "max-age=600"])
    }
    let endpoint = Endpoint<Data>(path: "report", decoding: .data)
    let lax = APIClient(
      baseURL: base, transport: server,
      configuration: APIClient.Configuration(
        headers: ["X-Tenant": "acme"], middleware: [CachingMiddleware(cache: cache)]))
    var strict = APIClient.Configuration(
      headers: ["X-Tenant": "globex"], middleware: [CachingMiddleware(cache: cache)])
    strict.redaction.headers.insert("X-Tenant")
    _ = try await lax.send(endpoint)
    let globex = try await APIClient(baseURL: base, transport: server, configuration: strict)
      .response(for: endpoint)
    #expect(String(decoding: globex.value, as: UTF8.self) == "tenant globex")
    #expect(globex.response.cacheStatus == .miss)
  }

  /// A cached answer's `request` is the caller's, not the request of whoever stored it.
  @Test func aHitCarriesTheCallersRequest() async throws {
    let cache = HTTPCache()
    let server = StubTransport { _ in
      .status(200, body: Data("[]".utf8), headers: ["Cache-Control": "max-age=600"])
    }
    let first = Self.client([.cache], token: "-", cache: cache, transport: server)
    _ = try await first.send(
      Endpoint<Data>(path: "dogs", headers: ["X-Who": "ann"], decoding: .data))
    let hit = try await first.response(
      for: Endpoint<Data>(path: "dogs", headers: ["X-Who": "bob"], decoding: .data))
    #expect(hit.response.cacheStatus == .hit)
    #expect(hit.response.request?.headers["X-Who"] == "bob")
  }

  @Test(arguments: orders)
  func anEchoedTokenNeverShowsInAnError(order: [Part]) async throws {
    let echo = StubTransport { request in
      .status(403, body: Data("denied for \(request.headers["Authorization"] ?? "-")".utf8))
    }
    let client = Self.client(order, token: "tok-SECRET-42", cache: HTTPCache(), transport: echo)
    let error = await #expect(throws: APIError.self) { try await client.send(Self.account) }
    let failure = try #require(error)
    #expect(failure.response?.status == 403)
    var dumped = ""
    dump(failure, to: &dumped)
    for text in [failure.localizedDescription, String(describing: failure), dumped] {
      #expect(!text.contains("tok-SECRET-42"), "\(order): \(text)")
    }
    #expect(failure.localizedDescription.contains("denied for"))
  }

  /// Credentials in the query (any name the client's redaction hides) or as the URL's user make
  /// the answer authenticated too: not written to disk.
  @Test(arguments: [
    "https://api.example.com/v1/dogs?access_token=q-s3cret",
    "https://api.example.com/v1/dogs?session=q-s3cret",
    "https://key-s3cret@api.example.com/v1/dogs",
  ])
  func anAnswerToCredentialsInTheURLStaysOffTheDisk(address: String) async throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("errand-placement-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let stub = StubTransport { _ in
      .status(200, body: Data("[\"Rex\"]".utf8), headers: ["Cache-Control": "max-age=600"])
    }
    var configuration = APIClient.Configuration(
      middleware: [CachingMiddleware(cache: HTTPCache(directory: folder))])
    configuration.redaction.queryParameters.insert("session")
    let client = APIClient(baseURL: base, transport: stub, configuration: configuration)
    let url = try #require(URL(string: address))
    _ = try await client.send(Endpoint<Data>(url: url, decoding: .data))
    let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
    #expect((files?.allObjects as? [URL] ?? []).allSatisfy { $0.pathExtension != "entry" })
  }
}
