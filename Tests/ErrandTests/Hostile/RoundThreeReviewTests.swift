import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Hostile review, round three: each test asserts the safe behaviour, so a failure is a finding.
/// Shared pieces of the suites below.
enum RoundThree {
  /// A token provider that hands out `current`, and `refreshed` once asked to refresh.
  struct Tokens: TokenProvider {
    let current: String
    var refreshed: String?
    func currentToken() async throws -> String? { current }
    func refreshToken() async throws -> String { refreshed ?? current }
  }

  /// A middleware of the app's own that puts a token in the query.
  struct QueryToken: Middleware {
    let token: String
    func intercept(
      _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
      var request = request
      guard var components = URLComponents(url: request.url, resolvingAgainstBaseURL: true)
      else { throw URLError(.badURL) }
      components.queryItems =
        (components.queryItems ?? []) + [URLQueryItem(name: "access_token", value: token)]
      guard let url = components.url else { throw URLError(.badURL) }
      request.url = url
      return try await next(request)
    }
  }

  /// A new folder name under the temporary directory (not created).
  static func folder(_ label: String) -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent(
      "errand-r3-\(label)-\(UUID().uuidString)")
  }

  /// The `.entry` files under `folder`.
  static func entries(in folder: URL) -> [URL] {
    let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
    return (files?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "entry" }
  }

  /// Every printed form of an error.
  static func forms(of error: any Error) -> [String] {
    var forms = printedForms(of: error)
    if let api = error as? APIError, let request = api.context?.request {
      forms += [request.description, request.cURLDescription]
    }
    return forms
  }

  static let body = Data("[\"Rex\"]".utf8)
}

// MARK: - Who gets whose answer

@Suite(.timeLimit(.minutes(3))) struct RoundThreeCacheIsolationReviewTests {
  typealias R = RoundThree

  /// An API key in a header of the app's own that its redaction does not name: two tenants'
  /// clients sharing one cache must still each get their own answer (the server sent no `Vary`).
  @Test func anAPIKeyHeaderTheRedactionDoesNotNameIsNotSharedBetweenTenants() async throws {
    let cache = HTTPCache()
    let server = StubTransport { request in
      .status(
        200, body: Data("report of \(request.headers["X-Tenant-Key"] ?? "-")".utf8),
        headers: ["Cache-Control": "private, max-age=600"])
    }
    func tenant(_ key: String) -> APIClient {
      APIClient(
        baseURL: base, transport: server,
        configuration: APIClient.Configuration(
          headers: ["X-Tenant-Key": key], middleware: [CachingMiddleware(cache: cache)]))
    }
    let endpoint = Endpoint<Data>(path: "report", decoding: .data)
    _ = try await tenant("acme-key-1").send(endpoint)
    let globex = try await tenant("globex-key-2").send(endpoint)
    // The tenant key is one of the client's default headers that no other origin gets: the
    // cache keeps the tenants apart by it, named secret or not.
    #expect(String(decoding: globex, as: UTF8.self) == "report of globex-key-2")
  }

  /// `Vary: Cookie` in any case, cookies set by the app: each user gets their own cart, and a
  /// cart is never written to disk.
  @Test(arguments: ["COOKIE", "cookie", "Accept, cOoKiE"])
  func aVaryOnCookieInAnyCaseKeepsUsersApart(vary: String) async throws {
    let folder = R.folder("cookie")
    defer { try? FileManager.default.removeItem(at: folder) }
    let cache = HTTPCache(directory: folder)
    let server = StubTransport { request in
      .status(
        200, body: Data("cart of \(request.headers["Cookie"] ?? "-")".utf8),
        headers: ["Cache-Control": "max-age=600", "Vary": vary])
    }
    func user(_ cookie: String) -> APIClient {
      APIClient(
        baseURL: base, transport: server,
        configuration: APIClient.Configuration(
          headers: ["Cookie": cookie], middleware: [CachingMiddleware(cache: cache)]))
    }
    let cart = Endpoint<Data>(path: "cart", decoding: .data)
    _ = try await user("session=ann-cookie-1").send(cart)
    let bob = try await user("session=bob-cookie-2").response(for: cart)
    #expect(String(decoding: bob.value, as: UTF8.self) == "cart of session=bob-cookie-2")
    #expect(bob.response.cacheStatus == .miss)
    let ann = try await user("session=ann-cookie-1").response(for: cart)
    #expect(ann.response.cacheStatus == .hit)
    #expect(R.entries(in: folder).isEmpty)
  }

  /// `Vary: aUtHoRiZaTiOn` from the server, tokens from the bearer middleware: no user sees
  /// another's answer, and nothing authenticated reaches the disk.
  @Test func aVaryOnAuthorizationInOddCaseKeepsUsersApart() async throws {
    let folder = R.folder("vary-auth")
    defer { try? FileManager.default.removeItem(at: folder) }
    let cache = HTTPCache(directory: folder)
    let server = StubTransport { request in
      .status(
        200, body: Data("inbox of \(request.headers["Authorization"] ?? "-")".utf8),
        headers: ["Cache-Control": "max-age=600", "Vary": "aUtHoRiZaTiOn"])
    }
    func user(_ token: String) -> APIClient {
      APIClient(
        baseURL: base, transport: server,
        configuration: APIClient.Configuration(middleware: [
          CachingMiddleware(cache: cache),
          BearerAuthenticationMiddleware(provider: R.Tokens(current: token)),
        ]))
    }
    let inbox = Endpoint<Data>(path: "inbox", requiresAuthentication: true, decoding: .data)
    _ = try await user("ann-tok").send(inbox)
    let bob = try await user("bob-tok").send(inbox)
    #expect(String(decoding: bob, as: UTF8.self) == "inbox of Bearer bob-tok")
    #expect(R.entries(in: folder).isEmpty)
  }

  /// An API key a middleware of the app's own adds, listed after the cache: the cache still sees
  /// it (it runs last), so tenants stay apart and the answer stays off the disk.
  @Test func aKeyAMiddlewareListedAfterTheCacheAddsKeepsTenantsApart() async throws {
    let folder = R.folder("key-after")
    defer { try? FileManager.default.removeItem(at: folder) }
    let cache = HTTPCache(directory: folder)
    let server = StubTransport { request in
      .status(
        200, body: Data("data of \(request.headers["X-API-Key"] ?? "-")".utf8),
        headers: ["Cache-Control": "max-age=600"])
    }
    func tenant(_ key: String) -> APIClient {
      APIClient(
        baseURL: base, transport: server,
        configuration: APIClient.Configuration(middleware: [
          CachingMiddleware(cache: cache), SetsHeader(name: "X-API-Key", value: key),
        ]))
    }
    let endpoint = Endpoint<Data>(path: "data", decoding: .data)
    _ = try await tenant("key-ann-1").send(endpoint)
    let bob = try await tenant("key-bob-2").send(endpoint)
    #expect(String(decoding: bob, as: UTF8.self) == "data of key-bob-2")
    #expect(R.entries(in: folder).isEmpty)
  }

  /// A query token a middleware adds after the cache: part of the key the cache sees, and the
  /// answer stays off the disk.
  @Test func aQueryTokenAMiddlewareAddsKeepsUsersApartAndOffTheDisk() async throws {
    let folder = R.folder("query-token")
    defer { try? FileManager.default.removeItem(at: folder) }
    let cache = HTTPCache(directory: folder)
    let server = StubTransport { request in
      .status(
        200, body: Data("feed for \(request.url.query ?? "-")".utf8),
        headers: ["Cache-Control": "max-age=600"])
    }
    func user(_ token: String) -> APIClient {
      APIClient(
        baseURL: base, transport: server,
        configuration: APIClient.Configuration(middleware: [
          CachingMiddleware(cache: cache), R.QueryToken(token: token),
        ]))
    }
    let feed = Endpoint<Data>(path: "feed", decoding: .data)
    _ = try await user("qt-ann").send(feed)
    let bob = try await user("qt-bob").send(feed)
    #expect(String(decoding: bob, as: UTF8.self) == "feed for access_token=qt-bob")
    #expect(R.entries(in: folder).isEmpty)
  }

  /// A cache given in `Endpoint.middleware`, the token in the client's: the cache still runs after
  /// the token is added.
  @Test func aCacheInTheEndpointsMiddlewareStillSeesTheToken() async throws {
    let cache = HTTPCache()
    let server = StubTransport { request in
      .status(
        200, body: Data("me: \(request.headers["Authorization"] ?? "-")".utf8),
        headers: ["Cache-Control": "max-age=600"])
    }
    var me = Endpoint<Data>(path: "me", requiresAuthentication: true, decoding: .data)
    me.middleware = [CachingMiddleware(cache: cache)]
    func user(_ token: String) -> APIClient {
      APIClient(
        baseURL: base, transport: server,
        configuration: APIClient.Configuration(middleware: [
          BearerAuthenticationMiddleware(provider: R.Tokens(current: token))
        ]))
    }
    _ = try await user("ann-tok").send(me)
    let bob = try await user("bob-tok").response(for: me)
    #expect(String(decoding: bob.value, as: UTF8.self) == "me: Bearer bob-tok")
    #expect(bob.response.cacheStatus == .miss)
    let ann = try await user("ann-tok").response(for: me)
    #expect(ann.response.cacheStatus == .hit)
  }

  /// Two caches in one chain, the token between them: neither serves one user's answer to another.
  @Test func twoCachesInOneChainBothSeeTheToken() async throws {
    let outer = HTTPCache()
    let inner = HTTPCache()
    let server = StubTransport { request in
      .status(
        200, body: Data("me: \(request.headers["Authorization"] ?? "-")".utf8),
        headers: ["Cache-Control": "max-age=600"])
    }
    func user(_ token: String) -> APIClient {
      APIClient(
        baseURL: base, transport: server,
        configuration: APIClient.Configuration(middleware: [
          CachingMiddleware(cache: outer),
          BearerAuthenticationMiddleware(provider: R.Tokens(current: token)),
          CachingMiddleware(cache: inner),
        ]))
    }
    let me = Endpoint<Data>(path: "me", requiresAuthentication: true, decoding: .data)
    _ = try await user("ann-tok").send(me)
    let bob = try await user("bob-tok").send(me)
    #expect(String(decoding: bob, as: UTF8.self) == "me: Bearer bob-tok")
    let annAgain = try await user("ann-tok").response(for: me)
    #expect(String(decoding: annAgain.value, as: UTF8.self) == "me: Bearer ann-tok")
    #expect(annAgain.response.cacheStatus == .hit)
  }

  /// A revalidated answer and a stale one standing in for a `503` carry the caller's request:
  /// not the conditional headers the cache sent, not the request that stored them.
  @Test func revalidatedAndStaleAnswersCarryTheCallersRequest() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(
          200, body: R.body,
          headers: ["Cache-Control": "max-age=10, stale-if-error=600", "ETag": "\"v1\""]),
        .status(304, headers: ["ETag": "\"v1\""]),
        .status(503),
      ]))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        middleware: [CachingMiddleware(cache: HTTPCache())], clock: clock))
    func call(_ who: String) async throws -> HTTPResponse {
      try await client.response(
        for: Endpoint<Data>(path: "dogs", headers: ["X-Who": who], decoding: .data)
      ).response
    }
    _ = try await call("ann")
    await clock.advance(by: .seconds(11))
    let revalidated = try await call("bob")
    #expect(revalidated.cacheStatus == .revalidated)
    #expect(revalidated.request?.headers["X-Who"] == "bob")
    #expect(revalidated.request?.headers["If-None-Match"] == nil)
    await clock.advance(by: .seconds(11))
    let stale = try await call("carol")
    #expect(stale.cacheStatus == .stale)
    #expect(stale.request?.headers["X-Who"] == "carol")
    #expect(stale.request?.headers["If-None-Match"] == nil)
  }

  /// An anonymous answer that sets a cookie (a server that starts a session for every visitor):
  /// a hit never hands that session to someone else, in memory as on disk.
  @Test func aStoredSetCookieIsNeverReplayed() async throws {
    let cache = HTTPCache()
    let server = StubTransport { _ in
      .status(
        200, body: R.body,
        headers: ["Cache-Control": "max-age=600", "Set-Cookie": "session=ANN-SESSION-1; HttpOnly"])
    }
    func visitor() -> APIClient {
      APIClient(
        baseURL: base, transport: server,
        configuration: APIClient.Configuration(middleware: [CachingMiddleware(cache: cache)]))
    }
    let home = Endpoint<Data>(path: "home", decoding: .data)
    let first = try await visitor().response(for: home)
    #expect(first.response.headers["Set-Cookie"] != nil, "the network answer is the caller's own")
    let second = try await visitor().response(for: home)
    #expect(second.response.cacheStatus == .hit)
    #expect(second.response.headers["Set-Cookie"] == nil)
  }

  /// A logging middleware listed after the cache still runs outside it, and sees the hit.
  @Test func loggingListedAfterTheCacheSeesTheHit() async throws {
    let lines = Locked<[String]>([])
    let server = StubTransport { _ in
      .status(200, body: R.body, headers: ["Cache-Control": "max-age=600"])
    }
    let client = APIClient(
      baseURL: base, transport: server,
      configuration: APIClient.Configuration(middleware: [
        CachingMiddleware(cache: HTTPCache()),
        LoggingMiddleware { event in lines.withLock { $0.append(event.message) } },
      ]))
    let dogs = Endpoint<Data>(path: "dogs", decoding: .data)
    _ = try await client.send(dogs)
    _ = try await client.send(dogs)
    let logged = lines.withLock { $0 }
    #expect(logged.last?.contains("cache hit") == true, "\(logged)")
    #expect(await server.requests.count == 1)
  }

  /// A token refreshed on a `401` during a revalidation: the new token's answer, never the stale
  /// one stored for the old token.
  @Test func aRefreshOnA401DuringRevalidationGetsTheNewTokensAnswer() async throws {
    let clock = TestClock()
    let server = StubTransport(clock: clock) { request in
      switch request.headers["Authorization"] {
      case "Bearer T1" where request.headers["If-None-Match"] == nil:
        return .status(
          200, body: Data("old data".utf8),
          headers: ["Cache-Control": "max-age=10, stale-if-error=600", "ETag": "\"v1\""])
      case "Bearer T2":
        return .status(200, body: Data("new data".utf8), headers: ["Cache-Control": "max-age=600"])
      default:
        return .status(401)
      }
    }
    let client = APIClient(
      baseURL: base, transport: server,
      configuration: APIClient.Configuration(
        middleware: [
          CachingMiddleware(cache: HTTPCache()),
          BearerAuthenticationMiddleware(provider: R.Tokens(current: "T1", refreshed: "T2")),
        ], clock: clock))
    let me = Endpoint<Data>(path: "me", requiresAuthentication: true, decoding: .data)
    #expect(try await client.send(me) == Data("old data".utf8))
    await clock.advance(by: .seconds(11))
    #expect(try await client.send(me) == Data("new data".utf8))
    let third = try await client.response(for: me)
    #expect(third.value == Data("new data".utf8))
    #expect(third.response.cacheStatus == .hit)
  }

  /// A fingerprint of the credentials written next to an authenticated answer must not let
  /// someone who reads the cache folder check a guessed password offline.
  @Test func theDiskHoldsNoVerifierOfACredential() async throws {
    let folder = R.folder("verifier")
    defer { try? FileManager.default.removeItem(at: folder) }
    let cache = HTTPCache(directory: folder, storesAuthenticatedResponsesOnDisk: true)
    let server = StubTransport { _ in
      .status(200, body: R.body, headers: ["Cache-Control": "max-age=600"])
    }
    let client = APIClient(
      baseURL: base, transport: server,
      configuration: APIClient.Configuration(middleware: [CachingMiddleware(cache: cache)]))
    let credential = "Basic " + Data("ann:hunter2".utf8).base64EncodedString()
    _ = try await client.send(
      Endpoint<Data>(path: "me", headers: ["Authorization": credential], decoding: .data))
    let text = try R.entries(in: folder).map { try String(contentsOf: $0, encoding: .utf8) }
      .joined()
    #expect(!text.isEmpty)
    // What an attacker computes for the guess "hunter2": FNV-1a, as the store does.
    func fnv(_ text: String, seed: UInt64) -> String {
      var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ seed
      for byte in text.utf8 {
        hash ^= UInt64(byte)
        hash = hash &* 0x100_0000_01b3
      }
      let hex = String(hash, radix: 16)
      return String(repeating: "0", count: 16 - hex.count) + hex
    }
    let guess = "authorization: \(credential)"
    withKnownIssue(
      "The store keeps an unkeyed FNV-1a fingerprint of the credentials beside an authenticated answer, a fast verifier for guessed passwords; a keyed hash needs a key kept off the disk (design question)"
    ) {
      #expect(!text.contains(fnv(guess, seed: 2) + fnv(guess, seed: 3)))
    }
  }
}

// MARK: - RFC 9111 and resource bounds

@Suite(.timeLimit(.minutes(3))) struct RoundThreeCacheRulesReviewTests {
  typealias R = RoundThree

  struct Setup {
    let clock = TestClock()
    let stub: StubTransport
    let cache: HTTPCache
    let client: APIClient

    init(cache: HTTPCache = HTTPCache(), middleware: [any Middleware] = []) {
      stub = StubTransport(clock: clock)
      self.cache = cache
      client = APIClient(
        baseURL: base, transport: stub,
        configuration: APIClient.Configuration(
          middleware: middleware + [CachingMiddleware(cache: cache)], clock: clock))
    }

    func call(_ endpoint: Endpoint<Data> = Endpoint<Data>(path: "dogs", decoding: .data))
      async throws -> HTTPResponse
    {
      try await client.response(for: endpoint).response
    }

    var sent: Int {
      get async { await stub.requests.count }
    }
  }

  /// RFC 5861: `stale-if-error` covers any error reaching the origin, not only a failed
  /// revalidation: an answer without a validator stands in for a `503` or a lost connection.
  @Test(arguments: [false, true])
  func staleIfErrorCoversAnAnswerWithoutAValidator(connectionLost: Bool) async throws {
    let setup = Setup()
    await setup.stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(200, body: R.body, headers: ["Cache-Control": "max-age=10, stale-if-error=600"]),
        connectionLost ? .connectionLost : .status(503),
      ]))
    _ = try await setup.call()
    await setup.clock.advance(by: .seconds(11))
    let second = try await setup.call()
    #expect(second.status == 200)
    #expect(second.body == R.body)
    #expect(second.cacheStatus == .stale)
    #expect(await setup.sent == 2)
  }

  /// A retry middleware around the cache: the stale answer that stands in for the `503` is the
  /// answer, with no retry of it.
  @Test func aRetryAroundTheCacheTakesTheStaleAnswer() async throws {
    let setup = Setup(middleware: [
      RetryMiddleware(policy: RetryPolicy(maxAttempts: 3, baseDelay: .zero, jitter: .none))
    ])
    await setup.stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(
          200, body: R.body,
          headers: ["Cache-Control": "max-age=10, stale-if-error=600", "ETag": "\"v1\""]),
        .status(503), .status(503), .status(503),
      ]))
    _ = try await setup.call()
    await setup.clock.advance(by: .seconds(11))
    let second = try await setup.call()
    #expect(second.cacheStatus == .stale)
    #expect(second.body == R.body)
    #expect(await setup.sent == 2)
  }

  /// An offline call never reaches the network, whatever else its request says; and a request's
  /// `only-if-cached` wins over a policy that would reload.
  @Test(
    arguments: [
      (CachePolicy.onlyIfCached, ["Cache-Control": "no-store"] as HTTPHeaders),
      (CachePolicy.onlyIfCached, ["If-None-Match": "\"v0\""] as HTTPHeaders),
      (CachePolicy.onlyIfCached, ["Accept": "text/event-stream"] as HTTPHeaders),
      (CachePolicy.reloadIgnoringCache, ["Cache-Control": "only-if-cached"] as HTTPHeaders),
      (CachePolicy.useProtocolRules, ["Cache-Control": "only-if-cached, no-store"] as HTTPHeaders),
    ] as [(CachePolicy, HTTPHeaders)])
  func anOfflineCallNeverReachesTheNetwork(policy: CachePolicy, headers: HTTPHeaders) async throws {
    let setup = Setup()
    await setup.stub.on(.get, "/v1/dogs", .status(200, body: R.body).allowingUnused())
    var endpoint = Endpoint<Data>(path: "dogs", headers: headers, decoding: .data)
    endpoint.cachePolicy = policy
    endpoint.acceptableStatusCodes = 200..<600
    let answer = try await setup.call(endpoint)
    #expect(answer.status == 504)
    #expect(await setup.sent == 0)
  }

  /// A request's own `no-cache` asks for a revalidation; a `.returnCacheElseLoad` endpoint policy
  /// serves the stored answer anyway.
  @Test func aRequestsNoCacheIsHonouredUnderReturnCacheElseLoad() async throws {
    let setup = Setup()
    await setup.stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(200, body: R.body, headers: ["Cache-Control": "max-age=600", "ETag": "\"v1\""]),
        .status(200, body: Data("[\"Fido\"]".utf8)),
      ]))
    _ = try await setup.call()
    var endpoint = Endpoint<Data>(
      path: "dogs", headers: ["Cache-Control": "no-cache"], decoding: .data)
    endpoint.cachePolicy = .returnCacheElseLoad
    _ = try await setup.call(endpoint)
    let sent = await setup.sent
    // The request's own `no-cache` wins over the policy (RFC 9111 §5.2.1.4).
    #expect(sent == 2)
  }

  /// RFC 9111 §5.1: a list-based `Age` counts by its first member; digits with leading zeros are
  /// the number they spell. An answer 700 s old is stale under `max-age=600`.
  @Test(arguments: ["700, 10", "0000000000000700", "700,700"])
  func anAgeIsReadAsRFC9111Says(age: String) async throws {
    let setup = Setup()
    await setup.stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(200, body: R.body, headers: ["Cache-Control": "max-age=600", "Age": age]),
        .status(200, body: R.body),
      ]))
    _ = try await setup.call()
    let second = try await setup.call()
    #expect(second.cacheStatus == .miss, "Age: \(age)")
    #expect(await setup.sent == 2)
  }

  /// `max-age=0000000000000060` is 60 seconds, not zero.
  @Test func aMaxAgeWithLeadingZerosIsTheNumberItSpells() async throws {
    let setup = Setup()
    await setup.stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(200, body: R.body, headers: ["Cache-Control": "max-age=0000000000000060"]),
        .status(200, body: R.body),
      ]))
    _ = try await setup.call()
    await setup.clock.advance(by: .seconds(10))
    let second = try await setup.call()
    #expect(second.cacheStatus == .hit)
  }

  /// RFC 9111 §4.1: when several stored responses match, the most recent answers.
  @Test func theNewestMatchingVariantAnswers() async throws {
    let setup = Setup()
    await setup.stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(200, body: Data("old".utf8), headers: ["Cache-Control": "max-age=600"]),
        .status(
          200, body: Data("new".utf8),
          headers: ["Cache-Control": "max-age=600", "Vary": "Accept-Language"]),
      ]))
    _ = try await setup.call()
    var reload = Endpoint<Data>(path: "dogs", decoding: .data)
    reload.cachePolicy = .reloadIgnoringCache
    _ = try await setup.call(reload)
    let third = try await setup.call()
    #expect(third.cacheStatus == .hit)
    #expect(third.body == Data("new".utf8))
  }

  /// RFC 9111 §4.1: a header `Vary` names that the stored request did not carry matches only a
  /// request that does not carry it either, not one that sends it empty.
  @Test func anAbsentVaryingHeaderDoesNotMatchAnEmptyOne() async throws {
    let setup = Setup()
    await setup.stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(
          200, body: Data("no mode".utf8),
          headers: ["Cache-Control": "max-age=600", "Vary": "X-Mode"]),
        .status(200, body: Data("empty mode".utf8)),
      ]))
    _ = try await setup.call()
    let second = try await setup.call(
      Endpoint<Data>(path: "dogs", headers: ["X-Mode": ""], decoding: .data))
    #expect(second.body == Data("empty mode".utf8))
  }

  /// RFC 9111 §4.4: a `Location` on the same origin invalidates, however its origin is spelled
  /// (the default port written out, the host in capitals).
  @Test(arguments: [
    "https://api.example.com:443/v1/dogs", "https://API.EXAMPLE.COM/v1/dogs", "/v1/dogs",
  ])
  func aLocationOnTheSameOriginInvalidates(location: String) async throws {
    let setup = Setup()
    await setup.stub.on(
      .get, "/v1/dogs", .status(200, body: R.body, headers: ["Cache-Control": "max-age=600"]))
    await setup.stub.on(.post, "/v1/adoptions", .status(201, headers: ["Location": location]))
    _ = try await setup.call()
    _ = try await setup.call(Endpoint<Data>(method: .post, path: "adoptions", decoding: .data))
    let again = try await setup.call()
    #expect(again.cacheStatus == .miss, "\(location)")
  }

  /// The memory budget bounds what an entry keeps, the request it answers included: long URLs and
  /// large varying request headers with tiny bodies cannot hold many times the budget.
  @Test func theMemoryBudgetCountsTheRequestAnEntryKeeps() async throws {
    let cache = HTTPCache(memoryBudget: 20_000)
    let setup = Setup(cache: cache)
    let stub = setup.stub
    await stub.on(
      .get, "/v1/search",
      .status(
        200, body: Data("x".utf8), headers: ["Cache-Control": "max-age=600", "Vary": "X-Filter"]))
    let filter = String(repeating: "f", count: 2_000)
    for index in 0..<40 {
      let endpoint = Endpoint<Data>(
        path: "search",
        query: [URLQueryItem(name: "q", value: String(repeating: "a", count: 1_000) + "\(index)")],
        headers: ["X-Filter": filter], decoding: .data)
      _ = try await setup.call(endpoint)
    }
    #expect(cache.storedBytes <= 20_000)
    #expect(cache.count <= 6, "\(cache.count) entries of over 3 KB each in a 20 KB budget")
  }

  /// A disk record someone corrupted (an age of 1e300 seconds) is a miss, not a crash.
  @Test(arguments: ["initialAge", "lifetime", "storedAt"])
  func aDiskRecordWithAnAbsurdNumberIsAMiss(field: String) async throws {
    let folder = R.folder("absurd")
    defer { try? FileManager.default.removeItem(at: folder) }
    let first = Setup(cache: HTTPCache(directory: folder))
    await first.stub.on(
      .get, "/v1/dogs",
      .status(200, body: R.body, headers: ["Cache-Control": "max-age=600"]).allowingUnused())
    _ = try await first.call()
    let file = try #require(R.entries(in: folder).first)
    var text = try String(contentsOf: file, encoding: .utf8)
    let range = try #require(text.range(of: "\"\(field)\":"))
    let end = text[range.upperBound...].firstIndex(where: { ",}".contains($0) }) ?? text.endIndex
    text.replaceSubrange(range.upperBound..<end, with: field == "storedAt" ? "-1e300" : "1e300")
    try Data(text.utf8).write(to: file)
    let second = Setup(cache: HTTPCache(directory: folder))
    await second.stub.on(.get, "/v1/dogs", .status(200, body: R.body))
    let answer = try await second.call()
    #expect(answer.cacheStatus == .miss)
  }

  /// Entries pushed out by the disk budget take their folders with them: a cache that sees many
  /// URLs does not leave one empty folder behind for each.
  @Test func evictedEntriesLeaveNoEmptyFolders() async throws {
    let folder = R.folder("folders")
    defer { try? FileManager.default.removeItem(at: folder) }
    let setup = Setup(cache: HTTPCache(memoryBudget: 0, directory: folder, diskBudget: 4_000))
    let body = Data(repeating: UInt8(ascii: "a"), count: 500)
    await setup.stub.on(
      .method(.get), .status(200, body: body, headers: ["Cache-Control": "max-age=600"]))
    for index in 0..<60 {
      _ = try await setup.call(Endpoint<Data>(path: "items/\(index)", decoding: .data))
    }
    let folders = try FileManager.default.contentsOfDirectory(atPath: folder.path)
      .filter { $0.count == 16 }
    let files = R.entries(in: folder)
    #expect(files.count < 10)
    #expect(folders.count <= files.count, "\(folders.count) folders for \(files.count) entries")
  }

  /// An authenticated answer written to disk (as the app allowed) is readable by its owner only.
  @Test func anAuthenticatedAnswerOnDiskIsReadableByItsOwnerOnly() async throws {
    let folder = R.folder("modes")
    defer { try? FileManager.default.removeItem(at: folder) }
    let setup = Setup(
      cache: HTTPCache(directory: folder, storesAuthenticatedResponsesOnDisk: true),
      middleware: [BearerAuthenticationMiddleware(provider: R.Tokens(current: "tok"))])
    await setup.stub.on(
      .get, "/v1/me", .status(200, body: R.body, headers: ["Cache-Control": "max-age=600"]))
    _ = try await setup.call(
      Endpoint<Data>(path: "me", requiresAuthentication: true, decoding: .data))
    let file = try #require(R.entries(in: folder).first)
    func mode(_ url: URL) throws -> Int {
      try #require(
        FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber
      ).intValue
    }
    let fileMode = try mode(file)
    let folderMode = try mode(file.deletingLastPathComponent())
    #expect(
      fileMode & 0o077 == 0 || folderMode & 0o077 == 0,
      "file \(String(fileMode, radix: 8)), folder \(String(folderMode, radix: 8))")
  }
}

// MARK: - Pages at other origins

@Suite(.timeLimit(.minutes(3))) struct RoundThreePagesReviewTests {
  typealias R = RoundThree

  /// A next page at a trusted host, but over plain HTTP from an HTTPS API: no token, no key goes
  /// out in clear text (a redirect that downgrades is refused outright).
  @Test func aNextPageThatDowngradesToHTTPGetsNoCredentials() async throws {
    let stub = StubTransport { request in
      if request.url.host == "api.example.com" {
        return .status(
          200, body: Data("[]".utf8),
          headers: ["Link": "<http://partner.example.com/v1/dogs?page=2>; rel=\"next\""])
      }
      return .status(200, body: Data("[]".utf8))
    }
    var configuration = APIClient.Configuration(
      headers: ["X-API-Key": "key-SECRET"],
      middleware: [BearerAuthenticationMiddleware(provider: R.Tokens(current: "tok-SECRET"))])
    configuration.trustedHosts = ["partner.example.com"]
    let client = APIClient(baseURL: base, transport: stub, configuration: configuration)
    for try await _ in client.pages(
      Endpoint<Data>(path: "dogs", requiresAuthentication: true, decoding: .data))
    {}
    let sent = await stub.requests
    #expect(sent.count == 2)
    let partner = try #require(sent.last)
    #expect(partner.url.scheme == "http")
    #expect(partner.headers["Authorization"] == nil)
    #expect(partner.headers["X-API-Key"] == nil)
  }

  /// A user and password in a `Link` never become credentials (as in a redirect's `Location`).
  @Test func aNextPagesUserInfoNeverBecomesCredentials() async throws {
    let stub = StubTransport { request in
      if request.url.query == nil {
        return .status(
          200, body: Data("[]".utf8),
          headers: ["Link": "<https://mallory:pw@api.example.com/v1/dogs?page=2>; rel=\"next\""])
      }
      return .status(200, body: Data("[]".utf8))
    }
    let client = APIClient(baseURL: base, transport: stub)
    for try await _ in client.pages(Endpoint<Data>(path: "dogs", decoding: .data)) {}
    let sent = await stub.requests
    #expect(sent.count == 2)
    #expect(sent.last?.url.user == nil)
    #expect(sent.last?.url.password == nil)
  }

  /// A `requiresAuthentication` list whose next page is at another origin, whose next page comes
  /// back to the API: the other origin sees no token, no key, no header of the app's own.
  @Test func anotherOriginInTheMiddleOfTheListGetsNothingSecret() async throws {
    let stub = StubTransport { request in
      switch (request.url.host ?? "", request.url.query ?? "") {
      case ("api.example.com", ""):
        return .status(
          200, body: Data("[]".utf8),
          headers: ["Link": "<https://cdn.example.net/v1/dogs?page=2>; rel=\"next\""])
      case ("cdn.example.net", _):
        return .status(
          200, body: Data("[]".utf8),
          headers: ["Link": "<https://api.example.com/v1/dogs?page=3>; rel=\"next\""])
      default:
        return .status(200, body: Data("[]".utf8))
      }
    }
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        headers: ["X-Tenant": "acme"],
        middleware: [
          CachingMiddleware(cache: HTTPCache()),
          BearerAuthenticationMiddleware(provider: R.Tokens(current: "tok-SECRET")),
          SetsHeader(name: "X-Request-Signature", value: "sig-SECRET"),
        ]))
    var pages = 0
    for try await _ in client.pages(
      Endpoint<Data>(
        path: "dogs", headers: ["X-API-Key": "key-SECRET"], requiresAuthentication: true,
        decoding: .data))
    {
      pages += 1
    }
    #expect(pages == 3)
    let other = try #require(await stub.requests.first { $0.url.host == "cdn.example.net" })
    for name in ["Authorization", "X-API-Key", "X-Tenant", "X-Request-Signature"] {
      #expect(other.headers[name] == nil, "\(name)")
    }
  }

  /// A `Link` whose URLs carry a token: not shown by the logging middleware, the events, or a
  /// dumped error.
  @Test func aTokenInALinkHeaderIsNeverShown() async throws {
    let lines = Locked<[String]>([])
    let listener = RecordingListener()
    let link = "<https://api.example.com/v1/dogs?page=2&access_token=LINK-SECRET-77>; rel=\"next\""
    let stub = StubTransport { _ in .status(500, body: Data("no".utf8), headers: ["Link": link]) }
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        middleware: [
          LoggingMiddleware { event in
            lines.withLock { $0.append("\(event.message) \(event.headers)") }
          }
        ], eventListeners: [listener]))
    let error = await #expect(throws: APIError.self) {
      try await client.send(Endpoint<Data>(path: "dogs", decoding: .data))
    }
    let events = await listener.eventsOfOneCall()
    let printed = try R.forms(of: #require(error)) + lines.withLock { $0 } + events.map { "\($0)" }
    for text in printed {
      #expect(!text.contains("LINK-SECRET-77"), "\(text)")
    }
  }
}

// MARK: - What errors, logs and cassettes print

@Suite(.timeLimit(.minutes(3))) struct RoundThreeSecretsReviewTests {
  typealias R = RoundThree

  /// A server that quotes the password of a Basic `Authorization` back, decoded.
  @Test func aBasicPasswordEchoedDecodedIsHidden() async throws {
    let credential = "Basic " + Data("ann:hunter2-pass".utf8).base64EncodedString()
    let stub = StubTransport { _ in
      .status(401, body: Data("wrong password hunter2-pass for user ann".utf8))
    }
    let error = await #expect(throws: APIError.self) {
      try await client(stub).send(
        Endpoint<Data>(path: "me", headers: ["Authorization": credential], decoding: .data))
    }
    for text in try R.forms(of: #require(error)) {
      #expect(!text.contains("hunter2-pass"), "\(text)")
    }
  }

  /// A key with a `/` that a JSON encoder echoes as `\/`, and a query token echoed as the URL
  /// carried it, percent-encoded.
  @Test(arguments: [false, true])
  func aSecretEchoedInAnotherEncodingIsHidden(inQuery: Bool) async throws {
    let secret = "sk/Q+UERY SECRET=9"
    let stub = StubTransport { request in
      if inQuery {
        return .status(
          404, body: Data("<p>No page at \(request.url.absoluteString)</p>".utf8),
          headers: ["Content-Type": "text/html"])
      }
      let escaped = secret.replacingOccurrences(of: "/", with: "\\/")
      return .status(
        403, body: Data("{\"error\":\"bad key \(escaped)\"}".utf8),
        headers: ["Content-Type": "application/json"])
    }
    let endpoint =
      inQuery
      ? Endpoint<Data>(
        path: "x", query: [URLQueryItem(name: "access_token", value: secret)], decoding: .data)
      : Endpoint<Data>(path: "x", headers: ["X-API-Key": secret], decoding: .data)
    let error = await #expect(throws: APIError.self) { try await client(stub).send(endpoint) }
    for text in try R.forms(of: #require(error)) {
      #expect(!text.contains("UERY"), "\(text)")
    }
  }

  /// A cassette records with the client's redaction as well as its own: a header and a query
  /// parameter only the client calls secret are not written in clear.
  @Test func aCassetteHidesWhatTheClientsRedactionHides() async throws {
    let folder = R.folder("cassette")
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("episode.json")
    let upstream = StubTransport { request in
      .status(200, body: Data("hello \(request.headers["X-Session"] ?? "-")".utf8))
    }
    let cassette = CassetteTransport(url: file, mode: .all, upstream: upstream)
    var configuration = APIClient.Configuration(headers: ["X-Session": "sess-SECRET-5"])
    configuration.redaction.headers.insert("X-Session")
    configuration.redaction.queryParameters.insert("sid")
    let client = APIClient(baseURL: base, transport: cassette, configuration: configuration)
    _ = try await client.send(
      Endpoint<Data>(
        path: "x", query: [URLQueryItem(name: "sid", value: "SID-SECRET-6")], decoding: .data))
    let text = try String(contentsOf: file, encoding: .utf8)
    #expect(!text.contains("sess-SECRET-5"))
    #expect(!text.contains("SID-SECRET-6"))
  }

  /// An error answer stored in the cache and served again: what it prints hides the caller's key
  /// it echoes, and a dump of the hit shows no key either.
  @Test func aCachedErrorEchoingAKeyPrintsNoKey() async throws {
    let stub = StubTransport { request in
      .status(
        404, body: Data("no dog for key \(request.headers["X-API-Key"] ?? "-")".utf8),
        headers: ["Cache-Control": "max-age=600"])
    }
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        headers: ["X-API-Key": "key-SECRET-404"],
        middleware: [CachingMiddleware(cache: HTTPCache())]))
    let endpoint = Endpoint<Data>(path: "dogs/9", decoding: .data)
    _ = await #expect(throws: APIError.self) { try await client.send(endpoint) }
    let error = await #expect(throws: APIError.self) { try await client.send(endpoint) }
    let failure = try #require(error)
    #expect(failure.response?.cacheStatus == .hit)
    var dumped = ""
    if let response = failure.response { dump(response, to: &dumped) }
    for text in R.forms(of: failure) + [dumped] {
      #expect(!text.contains("key-SECRET-404"), "\(text)")
    }
  }

  /// A `URLRequest` with no timeout to speak of (`.infinity`, as apps write "never") converts
  /// without crashing.
  @Test(arguments: [Double.infinity, 1e300, -Double.infinity])
  func aURLRequestWithAnEndlessTimeoutConverts(interval: Double) throws {
    var urlRequest = URLRequest(url: url("https://api.example.com/v1/dogs"))
    urlRequest.timeoutInterval = interval
    let request = try HTTPRequest(urlRequest)
    #expect(request.timeout == nil)
  }
}

// MARK: - Trace context, event streams, downloads

@Suite(.timeLimit(.minutes(3))) struct RoundThreeProtocolsReviewTests {
  static let trace = "4bf92f3577b34da6a3ce929d0e0e4736"
  static let parent = "00f067aa0ba902b7"

  /// W3C Trace Context §4.3: a later version is parsed for its first four fields.
  @Test(arguments: ["cc", "01"])
  func aTraceparentOfALaterVersionIsRead(version: String) throws {
    let context = try #require(
      TraceContext(traceparent: "\(version)-\(Self.trace)-\(Self.parent)-01-what-comes-later"))
    #expect(context.traceID == Self.trace)
    #expect(context.parentID == Self.parent)
    #expect(context.isSampled)
    #expect(TraceContext(traceparent: "\(version)-\(Self.trace)-\(Self.parent)-01") != nil)
  }

  /// …but version `ff`, and version `00` with anything after its flags, are not valid.
  @Test(arguments: [
    "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
    "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01extra",
    "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
  ])
  func anInvalidTraceparentIsRefused(value: String) {
    #expect(TraceContext(traceparent: value) == nil)
  }

  /// W3C Trace Context §3.3.1.3: list members whose key or value break the grammar are dropped
  /// (an upper-case key, `=` or a non-ASCII byte in the value, a key or value over 256
  /// characters, an empty value); multi-tenant keys stay.
  @Test(arguments: [
    ("Vendor=1,good=2", "good=2"),
    ("a=b=c,good=2", "good=2"),
    ("a=caf\u{E9},good=2", "good=2"),
    ("\(String(repeating: "k", count: 300))=v,good=2", "good=2"),
    ("a=\(String(repeating: "v", count: 300)),good=2", "good=2"),
    ("a=,good=2", "good=2"),
    ("1abc=x,good=2", "good=2"),
    ("tenant1@vendor=ok,good=2", "tenant1@vendor=ok,good=2"),
    ("a=b c,good=2", "a=b c,good=2"),
  ])
  func aTracestateKeepsOnlyMembersOfItsGrammar(state: String, kept: String) throws {
    let context = try #require(
      TraceContext(traceparent: "00-\(Self.trace)-\(Self.parent)-01", tracestate: state))
    #expect(context.state == kept)
  }

  /// WHATWG: an `id` with a NUL is ignored; the event keeps the last ID.
  @Test func anEventIDWithANullIsIgnored() {
    let events = ServerSentEvent.parse("id: 1\ndata: a\n\nid: x\u{0}y\ndata: b\n\n")
    #expect(events.map(\.id) == ["1", "1"])
  }

  /// WHATWG: an `id` field with no value resets the last event ID; the reconnection that follows
  /// sends no `Last-Event-ID`.
  @Test func anEmptyIDResetsTheLastEventID() async throws {
    let clock = TestClock()
    let stub = StubTransport()
    let type: HTTPHeaders = ["Content-Type": "text/event-stream"]
    await stub.on(
      .get, "/v1/feed",
      .sequence([
        .status(200, body: Data("id: 7\nretry: 1000\ndata: a\n\n".utf8), headers: type),
        .status(200, body: Data("id\ndata: b\n\n".utf8), headers: type),
        .status(204),
      ]))
    let client = APIClient(
      baseURL: base, transport: stub, configuration: APIClient.Configuration(clock: clock))
    let events = client.events(Endpoint<Data>(path: "feed", decoding: .data), reconnect: .default)
    let reading = Task {
      var received: [ServerSentEvent] = []
      for try await event in events { received.append(event) }
      return received
    }
    for _ in 0..<2 {
      try #require(await clock.waitForSleepers(1))
      await clock.advance(by: .seconds(30))
    }
    let received = try await reading.cancellableValue
    #expect(received.map(\.data) == ["a", "b"])
    let sent = await stub.requests(matching: .any)
    #expect(sent.map { $0.headers["Last-Event-ID"] } == [nil, "7", nil])
  }

  /// A download that replaces a `0600` file: the partial file it writes meanwhile is no more
  /// readable than the file it replaces.
  @Test func aDownloadsPartialFileIsAsPrivateAsTheFileItReplaces() async throws {
    let folder = try TemporaryFolder()
    let destination = folder.appending("secrets.json")
    try Data("old".utf8).write(to: destination)
    try FileManager.default.setAttributes(
      [.posixPermissions: 0o600], ofItemAtPath: destination.path)
    let stub = StubTransport()
    await stub.on(.get, "/v1/secrets", .chunks([Data("new ".utf8), Data("secret".utf8)]))
    let modes = Locked<[Int]>([])
    let path = folder.url.path
    _ = try await client(stub).download(
      Endpoint<Data>(path: "secrets", decoding: .data), to: destination
    ) { _ in
      let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
      for name in names where name.hasSuffix(".partial") {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path + "/" + name)
        if let mode = attributes?[.posixPermissions] as? NSNumber {
          modes.withLock { $0.append(mode.intValue) }
        }
      }
    }
    let seen = modes.withLock { $0 }
    #expect(!seen.isEmpty)
    #expect(seen.allSatisfy { $0 & 0o077 == 0 }, "\(seen.map { String($0, radix: 8) })")
    #expect(try String(contentsOf: destination, encoding: .utf8) == "new secret")
  }

  /// A destination whose name is one long grapheme (a letter and 120 combining marks, 241 bytes):
  /// the partial file's name is cut to fit, and the download lands.
  @Test func aDestinationNamedByOneLongGraphemeDownloads() async throws {
    let folder = try TemporaryFolder()
    let name = "e" + String(repeating: "\u{301}", count: 120)
    let destination = folder.appending(name)
    let stub = StubTransport()
    await stub.on(.get, "/v1/file", .status(200, body: Data("ok".utf8)))
    _ = try await client(stub).download(
      Endpoint<Data>(path: "file", decoding: .data), to: destination)
    #expect(try Data(contentsOf: destination) == Data("ok".utf8))
    #expect(folder.names.allSatisfy { !$0.hasSuffix(".partial") })
  }
}
