import Errand
import ErrandStubs
import Foundation
import TestSupport
import Testing

/// Round six: an attacker's probes of what changed last: the client's own default headers on
/// redirects to another origin, secrets a server echoes in a response head, and the printed forms
/// of header lists. Each test asserts what must happen.
@Suite(.timeLimit(.minutes(2))) struct RoundSixRedirectPolicyHostileTests {
  static let tenant = "tenant-R6-9d2c71e0"
  static let source = URL(string: "https://api.example.com/v1/dogs")!
  static let headers: HTTPHeaders = [
    "X-Tenant-Key": tenant, "Accept": "application/json", "Authorization": "Bearer tok-R6-1",
  ]
  static let staysHome: Set<String> = ["x-tenant-key"]

  /// The headers a redirect from ``source`` to `location` carries, or `nil` when it is not
  /// followed.
  static func carried(
    to location: String, from source: URL = source, headers: HTTPHeaders = headers
  ) -> HTTPHeaders? {
    guard let target = URL(string: location, relativeTo: source)?.absoluteURL else { return nil }
    switch RedirectPolicy.decide(
      from: source, to: target, headers: headers, location: location, staysHome: staysHome)
    {
    case .follow(_, let headers): return headers
    default: return nil
    }
  }

  struct Row: Sendable, CustomTestStringConvertible {
    var location: String
    var source: URL = RoundSixRedirectPolicyHostileTests.source
    /// Whether the target is the source's origin (the default headers go on).
    var sameOrigin: Bool
    var testDescription: String { location }
  }

  /// Origins that differ only in how they are written are the same origin; any real difference
  /// (scheme, host, port, a trailing dot) is another one.
  static let rows: [Row] = [
    Row(location: "https://API.Example.COM/v1/cats", sameOrigin: true),
    Row(location: "https://api.example.com:443/v1/cats", sameOrigin: true),
    Row(location: "HTTPS://api.example.com/v1/cats", sameOrigin: true),
    Row(location: "/v1/cats", sameOrigin: true),
    Row(location: "cats?page=2", sameOrigin: true),
    Row(location: "//other.example.net/v1/cats", sameOrigin: false),
    Row(location: "https://api.example.com:8443/v1/cats", sameOrigin: false),
    Row(location: "https://api.example.com@evil.example.net/", sameOrigin: false),
    Row(location: "https://user:pw@evil.example.net/", sameOrigin: false),
    Row(location: "https://api.example.com./v1/cats", sameOrigin: false),
    Row(location: "https://api.example.com.evil.example.net/", sameOrigin: false),
    Row(
      location: "https://api.example.com/v1/cats",
      source: URL(string: "http://api.example.com/v1")!,
      sameOrigin: false),
    Row(
      location: "http://[::1]:8081/x", source: URL(string: "http://[::1]:8080/v1")!,
      sameOrigin: false),
    Row(
      location: "http://[::1]:8080/x", source: URL(string: "http://[::1]:8080/v1")!,
      sameOrigin: true),
    Row(
      location: "http://[0:0:0:0:0:0:0:1]:8080/x", source: URL(string: "http://[::1]:8080/v1")!,
      sameOrigin: false),
    Row(
      location: "http://127.0.0.1:8080/x", source: URL(string: "http://localhost:8080/v1")!,
      sameOrigin: false),
  ]

  @Test(arguments: rows)
  func aDefaultHeaderGoesOnOnlyWithinItsOrigin(_ row: Row) throws {
    let carried = try #require(Self.carried(to: row.location, from: row.source))
    #expect(carried["Accept"] == "application/json")
    if row.sameOrigin {
      #expect(carried["X-Tenant-Key"] == Self.tenant)
      #expect(carried["Authorization"] == "Bearer tok-R6-1")
    } else {
      #expect(carried["X-Tenant-Key"] == nil)
      #expect(carried["Authorization"] == nil)
    }
  }

  /// A header name in odd case (as a middleware or the app wrote it) is the same header.
  @Test func aDefaultHeaderInOddCaseStaysHome() throws {
    let carried = try #require(
      Self.carried(
        to: "https://other.example.net/", headers: ["x-TENANT-key": Self.tenant, "X-Plain": "1"]))
    #expect(carried["X-Tenant-Key"] == nil)
    #expect(carried["X-Plain"] == "1")
  }

  /// A `303` (or a `302` after a `POST`) to another origin becomes a `GET` without the body and
  /// without the client's own default headers, read from the call's context.
  @Test(arguments: [303, 302, 301])
  func aPostTurnedIntoAGetLeavesTheDefaultsBehind(status: Int) throws {
    var request = HTTPRequest(method: .post, url: Self.source)
    request.headers = Self.headers
    request.body = Data("password=hunter22".utf8)
    var context = RequestContext(endpoint: "POST dogs")
    context.clientHeaders = Self.staysHome
    let next = try RequestContext.$current.withValue(context) {
      try RedirectPolicy.request(
        following: request, to: "//other.example.net/done", status: status, trustedHosts: [])
    }
    #expect(next.method == .get)
    #expect(next.body == nil)
    #expect(next.url.absoluteString == "https://other.example.net/done")
    #expect(next.headers["X-Tenant-Key"] == nil)
    #expect(next.headers["Authorization"] == nil)
    #expect(next.headers["Accept"] == "application/json")
  }

  /// A chain A → B → A: once a hop left the default header behind, it does not come back, not
  /// even at A (as for `Authorization` and `Cookie`).
  @Test func aHeaderLeftBehindDoesNotComeBackAtItsOrigin() async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      .get, "/v1/start", .status(302, headers: ["Location": "https://other.example.net/hop"]))
    await stub.on(
      .get, "/hop", .status(302, headers: ["Location": "https://api.example.com/v1/end"]))
    await stub.on(.get, "/v1/end", .status(200))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(headers: ["X-Tenant-Key": Self.tenant]))
    _ = try await client.response(for: Endpoint<Data>(path: "start", decoding: .data))
    let requests = await stub.requests
    #expect(requests.map(\.url.path) == ["/v1/start", "/hop", "/v1/end"])
    #expect(requests.first?.headers["X-Tenant-Key"] == Self.tenant)
    #expect(requests.dropFirst().allSatisfy { $0.headers["X-Tenant-Key"] == nil })
  }

  /// Two hops at the other origin (B/x → B/y): the second is "within the origin" of the first,
  /// but the header was left behind already and must not reappear.
  @Test func aSecondHopAtTheOtherOriginCarriesNoDefault() async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      .get, "/v1/start", .status(302, headers: ["Location": "https://other.example.net/x"]))
    await stub.on(.get, "/x", .status(307, headers: ["Location": "/y"]))
    await stub.on(.get, "/y", .status(200))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(headers: ["X-Tenant-Key": Self.tenant]))
    _ = try await client.response(for: Endpoint<Data>(path: "start", decoding: .data))
    let requests = await stub.requests
    #expect(requests.map(\.url.path) == ["/v1/start", "/x", "/y"])
    #expect(requests.dropFirst().allSatisfy { $0.headers["X-Tenant-Key"] == nil })
  }

  /// The endpoint sets the same header as the client's default (another tenant for one call):
  /// the name is the client's, so it stays home whoever set its value.
  @Test func anEndpointsValueForADefaultHeaderStaysHomeToo() async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      .get, "/v1/start", .status(302, headers: ["Location": "https://other.example.net/x"]))
    await stub.on(.get, "/x", .status(200))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(headers: ["X-Tenant-Key": Self.tenant]))
    _ = try await client.response(
      for: Endpoint<Data>(
        path: "start", headers: ["x-tenant-key": "tenant-other-R6"], decoding: .data))
    let requests = await stub.requests
    #expect(requests.first?.headers["X-Tenant-Key"] == "tenant-other-R6")
    #expect(requests.last?.headers["X-Tenant-Key"] == nil)
  }

  /// `crossOriginHeaders` set in odd case still names the header (kept lowercased).
  @Test func aSafeHeaderNamedInOddCaseGoesOn() async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      .get, "/v1/start", .status(302, headers: ["Location": "https://other.example.net/x"]))
    await stub.on(.get, "/x", .status(200))
    var configuration = APIClient.Configuration(headers: [
      "X-Client-Version": "4.2", "X-Tenant-Key": Self.tenant,
    ])
    configuration.crossOriginHeaders = ["X-CLIENT-VERSION"]
    let client = APIClient(baseURL: base, transport: stub, configuration: configuration)
    _ = try await client.response(for: Endpoint<Data>(path: "start", decoding: .data))
    let last = try #require(await stub.requests.last)
    #expect(last.headers["X-Client-Version"] == "4.2")
    #expect(last.headers["X-Tenant-Key"] == nil)
  }

  /// How a call reaches another origin: a redirect, or an endpoint at an absolute URL.
  enum Leaving: String, CaseIterable, Sendable { case redirect, absoluteURL }

  /// The configuration's `userAgent` is a default header like the others: with `user-agent`
  /// taken out of `crossOriginHeaders` it stays at the client's origin (it went everywhere), and
  /// with the default list it goes on.
  @Test(arguments: Leaving.allCases, [false, true])
  func theUserAgentFollowsCrossOriginHeaders(_ leaving: Leaving, listed: Bool) async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      .get, "/v1/start", .status(302, headers: ["Location": "https://other.example.net/x"]))
    await stub.on(.get, "/x", .status(200))
    var configuration = APIClient.Configuration()
    configuration.userAgent = "Tenant-4471-App/2.0"
    if !listed { configuration.crossOriginHeaders.remove("user-agent") }
    let client = APIClient(baseURL: base, transport: stub, configuration: configuration)
    let endpoint =
      leaving == .redirect
      ? Endpoint<Data>(path: "start", decoding: .data)
      : Endpoint<Data>(url: URL(string: "https://other.example.net/x")!, decoding: .data)
    _ = try await client.response(for: endpoint)
    let last = try #require(await stub.requests.last)
    #expect(last.url.host == "other.example.net")
    #expect(last.headers["User-Agent"] == (listed ? "Tenant-4471-App/2.0" : nil))
    if leaving == .redirect {
      #expect(await stub.requests.first?.headers["User-Agent"] == "Tenant-4471-App/2.0")
    }
  }
}

/// Secrets a server echoes in a response head, in forms the scrubber may not know.
@Suite(.timeLimit(.minutes(2))) struct RoundSixEchoHostileTests {
  static let token = "tok/R6+echo=5d1e"
  static let nameToken = "tokR6name7f3a"

  /// Adds `Authorization` itself, after (inside) whatever middleware is listed before it.
  struct AddsToken: Middleware {
    var token: String
    func intercept(
      _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
      var request = request
      request.headers["Authorization"] = "Bearer \(token)"
      return try await next(request)
    }
  }

  /// A stub answering 401 with the bearer credential quoted in `X-Debug-Echo`, transformed.
  static func echoing(_ transform: @escaping @Sendable (String) -> String) -> StubTransport {
    StubTransport { request in
      let credential = String(request.headers["Authorization"]?.dropFirst(7) ?? "")
      return .status(401, headers: ["X-Debug-Echo": "got \(transform(credential))"])
    }
  }

  static let endpoint = Endpoint<Data>(path: "me", decoding: .data)

  /// `LoggingMiddleware` listed first (outermost, as logging usually is), the token added by a
  /// middleware after it: the log's request has no token, but the echo must still be scrubbed.
  @Test func aLogLineScrubsATokenAddedAfterTheLogger() async throws {
    let lines = Locked<[LogEvent]>([])
    let client = APIClient(
      baseURL: base, transport: Self.echoing { $0 },
      configuration: APIClient.Configuration(middleware: [
        LoggingMiddleware { event in lines.withLock { $0.append(event) } },
        AddsToken(token: Self.token),
      ]))
    await #expect(throws: APIError.self) { try await client.send(Self.endpoint) }
    let received = try #require(lines.withLock { $0 }.first { $0.kind == .responseReceived })
    #expect(received.headers["X-Debug-Echo"] == "got \(HTTPHeaders.redactedValue)")
    for form in printedForms(of: received as Any) {
      #expect(!form.contains(Self.token), "\(form)")
    }
  }

  /// Percent-encoding with lowercase hex digits (RFC 3986 says it is the same): `%2f`, `%2b`.
  @Test func aLowercasePercentEncodedEchoIsScrubbed() async throws {
    let listener = RecordingListener()
    let lowercased: @Sendable (String) -> String = {
      ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)
        .replacingOccurrences(of: "%2F", with: "%2f").replacingOccurrences(of: "%2B", with: "%2b")
        .replacingOccurrences(of: "%3D", with: "%3d")
    }
    let client = APIClient(
      baseURL: base, transport: Self.echoing(lowercased),
      configuration: APIClient.Configuration(
        headers: ["Authorization": "Bearer \(Self.token)"], eventListeners: [listener]))
    let error = await #expect(throws: APIError.self) { try await client.send(Self.endpoint) }
    let echoed = lowercased(Self.token)
    #expect(echoed == "tok%2fR6%2becho%3d5d1e")
    let events = await listener.eventsOfOneCall()
    for form in printedForms(of: events) + printedForms(of: error as Any) {
      #expect(!form.contains(echoed), "\(form)")
    }
  }

  /// Percent-encodings that leave some reserved characters as they are, as libraries do:
  /// Python's `quote` keeps `/`, JavaScript's `escape` keeps `/` and `+`; and one that mixes
  /// upper and lower case hex digits.
  static let partialEncodings: [String: String] = [
    "python quote": "tok/R6%2Becho%3D5d1e",
    "javascript escape": "tok/R6+echo%3D5d1e",
    "mixed case": "tok%2fR6%2Becho%3d5d1e",
  ]

  @Test(arguments: partialEncodings.keys.sorted())
  func aPartlyPercentEncodedEchoIsScrubbed(_ library: String) async throws {
    let echoed = try #require(Self.partialEncodings[library])
    let listener = RecordingListener()
    let client = APIClient(
      baseURL: base, transport: Self.echoing { _ in echoed },
      configuration: APIClient.Configuration(
        headers: ["Authorization": "Bearer \(Self.token)"], eventListeners: [listener]))
    let error = await #expect(throws: APIError.self) { try await client.send(Self.endpoint) }
    let events = await listener.eventsOfOneCall()
    for form in printedForms(of: events) + printedForms(of: error as Any) {
      #expect(!form.contains(echoed), "\(form)")
    }
  }

  /// A server that makes the credential a header's name (`X-Echo-<token>: 1`).
  @Test func aTokenEchoedAsAHeaderNameIsScrubbed() async throws {
    let listener = RecordingListener()
    let lines = Locked<[LogEvent]>([])
    let stub = StubTransport { request in
      let credential = String(request.headers["Authorization"]?.dropFirst(7) ?? "")
      return .status(401, headers: ["X-Echo-\(credential)": "1"])
    }
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        headers: ["Authorization": "Bearer \(Self.nameToken)"],
        middleware: [LoggingMiddleware { event in lines.withLock { $0.append(event) } }],
        eventListeners: [listener]))
    let error = await #expect(throws: APIError.self) { try await client.send(Self.endpoint) }
    let events = await listener.eventsOfOneCall()
    var forms = printedForms(of: events) + printedForms(of: error as Any)
    forms += lines.withLock { $0 }.flatMap { printedForms(of: $0 as Any) }
    for form in forms {
      #expect(!form.contains(Self.nameToken), "\(form)")
    }
  }

  /// The token in a followed redirect's `Location`, under a query name the redaction does not
  /// know (`state`): the listener's `redirectFollowed` must not print it, as `responseHead`
  /// would not.
  @Test func aTokenEchoedInAFollowedLocationIsScrubbed() async throws {
    let listener = RecordingListener()
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      .get, "/v1/me", .status(302, headers: ["Location": "/v1/next?state=tokR6loc42aa"]))
    await stub.on(.get, "/v1/next", .status(200))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        headers: ["Authorization": "Bearer tokR6loc42aa"], eventListeners: [listener]))
    _ = try await client.send(Self.endpoint)
    let events = await listener.eventsOfOneCall()
    #expect(
      events.contains {
        if case .redirectFollowed = $0.kind { return true }
        return false
      })
    for form in printedForms(of: events) {
      #expect(!form.contains("tokR6loc42aa"), "\(form)")
    }
  }

  /// An echo in `Location` and `Set-Cookie` of the final answer, and in `Content-Location`.
  @Test func anEchoInURLHeadersOfTheAnswerIsScrubbed() async throws {
    let listener = RecordingListener()
    let stub = StubTransport { request in
      let credential = String(request.headers["Authorization"]?.dropFirst(7) ?? "")
      return .status(
        401,
        headers: [
          "Location": "https://api.example.com/login?from=\(credential)",
          "Content-Location": "/v1/me#\(credential)",
          "Set-Cookie": "last=\(credential); Path=/",
        ])
    }
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        headers: ["Authorization": "Bearer tokR6url9911"], eventListeners: [listener]))
    let error = await #expect(throws: APIError.self) { try await client.send(Self.endpoint) }
    let events = await listener.eventsOfOneCall()
    for form in printedForms(of: events) + printedForms(of: error as Any) {
      #expect(!form.contains("tokR6url9911"), "\(form)")
    }
  }
}

/// Echoes of a secret in a refused redirect, and in a shared in-flight exchange.
@Suite(.timeLimit(.minutes(2))) struct RoundSixEchoEdgeHostileTests {
  /// The token in a refused redirect's `Location` (an `ftp:` one), under a query name the
  /// redaction does not know: neither the error nor the listener's `redirectRefused` prints it.
  @Test func aTokenEchoedInARefusedLocationIsScrubbed() async throws {
    let listener = RecordingListener()
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      .get, "/v1/me",
      .status(302, headers: ["Location": "ftp://files.example.net/?state=tokR6ref31cc"]))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        headers: ["Authorization": "Bearer tokR6ref31cc"], eventListeners: [listener]))
    let error = await #expect(throws: APIError.self) {
      try await client.send(Endpoint<Data>(path: "me", decoding: .data))
    }
    #expect((error?.underlyingError as? RefusedRedirectError)?.reason == .unsupportedScheme)
    let events = await listener.eventsOfOneCall()
    #expect(
      events.contains {
        if case .redirectRefused = $0.kind { return true }
        return false
      })
    for form in printedForms(of: events) + printedForms(of: error as Any) {
      #expect(!form.contains("tokR6ref31cc"), "\(form)")
    }
  }

  /// Names `X-Session` a secret in the request's own redaction, changing nothing else.
  struct SessionIsSecret: Middleware {
    func intercept(
      _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
      var request = request
      request.redaction.headers.insert("X-Session")
      return try await next(request)
    }
  }

  /// Two identical `GET`s share one exchange; the second caller's request names `X-Session` a
  /// secret, the first's does not. The server echoes it: the second caller's listener events
  /// and error must not print it, whoever's exchange it was.
  @Test func aSharedExchangeHonoursEachCallersRedaction() async throws {
    let gate = AsyncGate()
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/me",
      .handler { request, _ in
        await gate.wait()
        return .status(403, headers: ["X-Echo": request.headers["X-Session"] ?? ""])
      })
    let listener = RecordingListener()
    var configuration = APIClient.Configuration(timeout: nil, eventListeners: [listener])
    configuration.sharesInFlightRequests = true
    let client = APIClient(baseURL: base, transport: stub, configuration: configuration)
    let plain = Endpoint<Data>(
      path: "me", headers: ["X-Session": "sessR6shared77"], decoding: .data)
    var secret = plain
    secret.middleware = [SessionIsSecret()]
    let first = Task { try await client.send(plain) }
    _ = try await stub.nextRequest()
    let second = Task { () -> APIError? in
      do {
        _ = try await client.send(secret)
        return nil
      } catch {
        return error as? APIError
      }
    }
    #expect(await eventually { client.inFlight.count == 2 })
    await gate.open()
    _ = try? await first.value
    let error = try #require(await second.value)
    // (They shared one exchange before the fix; now the redaction keeps them apart, so each has
    // its own. Either way, what the second caller hears must hide its secret.)
    // Both calls' events, until each has ended.
    let events = await listener.eventsOfOneCall() + listener.eventsOfOneCall()
    let secondCall = try #require(Set(events.map(\.callID)).max())
    #expect(Set(events.map(\.callID)).count == 2)
    // Its request as built names no secret (the middleware names it after): what is heard of
    // the exchange must.
    var forms = printedForms(
      of: events.filter {
        guard case .requestBuilt = $0.kind else { return $0.callID == secondCall }
        return false
      })
    forms += printedForms(of: error)
    for form in forms {
      #expect(!form.contains("sessR6shared77"), "\(form)")
    }
  }
}

/// The printed forms of header lists and single fields: what `print(request.headers)` shows.
@Suite(.timeLimit(.minutes(2))) struct RoundSixPrintedFormsHostileTests {
  static let apiKey = "key-R6-print-0a1b"
  static let privateToken = "glpat-R6-print-77"

  /// Headers that ``Redaction/default`` hides (an API key, a private token) are hidden in every
  /// printed form of an `HTTPHeaders`, not only in `dump`: `print(headers)` is a log line too.
  @Test func everyPrintedFormOfHeadersHidesWhatTheDefaultRedactionNames() {
    let headers: HTTPHeaders = ["X-API-Key": Self.apiKey, "PRIVATE-TOKEN": Self.privateToken]
    var forms = printedForms(of: headers)
    forms += printedForms(of: headers.fields)
    forms += headers.fields.flatMap { printedForms(of: $0) }
    forms += printedForms(of: ["headers": headers])
    forms.append("\(headers)")
    for form in forms {
      #expect(!form.contains(Self.apiKey), "\(form)")
      #expect(!form.contains(Self.privateToken), "\(form)")
    }
  }

  /// A `Location` whose query carries a token: hidden in a printed `HTTPHeaders` as in a
  /// response's description.
  @Test func aLocationsSecretQueryIsHiddenInPrintedHeaders() {
    let headers: HTTPHeaders = ["Location": "https://api.example.com/cb?access_token=tokR6loc55"]
    for form in printedForms(of: headers) {
      #expect(!form.contains("tokR6loc55"), "\(form)")
    }
  }

  /// The same `Location` as a field on its own, and in the array `print(headers.fields)` shows.
  @Test func aLocationFieldOnItsOwnHidesItsSecretQuery() {
    let field = HTTPHeaders.Field(
      name: "Location", value: "https://api.example.com/cb?access_token=tokR6field66")
    let headers = HTTPHeaders([field])
    for form in printedForms(of: field) + printedForms(of: headers.fields) {
      #expect(!form.contains("tokR6field66"), "\(form)")
    }
  }

  /// A request's, a response's and an error's printed forms, in arrays and dictionaries, and
  /// through `Mirror` children.
  @Test func containersAndMirrorsOfRequestsHideSecrets() throws {
    var request = HTTPRequest(url: URL(string: "https://api.example.com/v1/me?token=tokR6q1")!)
    request.headers = ["X-API-Key": Self.apiKey, "Authorization": "Bearer tokR6auth1"]
    let response = HTTPResponse(
      status: 401, headers: ["X-Echo": "Bearer tokR6auth1"], body: Data("tokR6auth1".utf8),
      request: request)
    var forms = printedForms(of: [request]) + printedForms(of: ["r": response])
    forms += printedForms(of: (request, response))
    forms += printedForms(of: Optional(response) as Any)
    var mirrored: [String] = []
    func walk(_ value: Any, depth: Int) {
      guard depth < 8 else { return }
      for child in Mirror(reflecting: value).children {
        mirrored.append("\(child.label ?? "") \(child.value)")
        walk(child.value, depth: depth + 1)
      }
    }
    walk(response, depth: 0)
    walk(request, depth: 0)
    for form in forms + mirrored {
      #expect(!form.contains(Self.apiKey), "\(form)")
      #expect(!form.contains("tokR6auth1"), "\(form)")
      #expect(!form.contains("tokR6q1"), "\(form)")
    }
  }
}

/// The disk cache across launches: one user's stored answer never reaches another user, nor a
/// caller without credentials, when a new cache reads the folder back.
@Suite(.timeLimit(.minutes(2))) struct RoundSixDiskCacheHostileTests {
  static func client(_ authorization: String?, _ cache: HTTPCache, _ stub: StubTransport)
    -> APIClient
  {
    APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        headers: authorization.map { ["Authorization": $0] } ?? [:],
        middleware: [CachingMiddleware(cache: cache)]))
  }

  /// A server that forgets `Vary: Authorization` and marks the answer public.
  static func stub() -> StubTransport {
    StubTransport { request in
      .status(
        200, body: Data("profile of \(request.headers["Authorization"] ?? "nobody")".utf8),
        headers: ["Cache-Control": "public, max-age=600"])
    }
  }

  @Test func aStoredAnswerOfOneUserReachesNoOtherAfterARelaunch() async throws {
    let folder = try TemporaryFolder()
    let stub = Self.stub()
    let me = Endpoint<Data>(path: "me", decoding: .data)
    func cache() -> HTTPCache {
      HTTPCache(directory: folder.url, storesAuthenticatedResponsesOnDisk: true)
    }
    _ = try await Self.client("Bearer alice-R6", cache(), stub).send(me)
    let dir = folder.url
    #expect(
      await eventually {
        (FileManager.default.enumerator(atPath: dir.path)?.allObjects as? [String] ?? [])
          .contains { $0.hasSuffix(".entry") }
      })
    let alice = try await Self.client("Bearer alice-R6", cache(), stub).response(for: me)
    #expect(alice.response.cacheStatus == .hit)
    let bob = try await Self.client("Bearer bob-R6", cache(), stub).response(for: me)
    #expect(bob.response.cacheStatus == .miss)
    #expect(String(decoding: bob.value, as: UTF8.self) == "profile of Bearer bob-R6")
    let nobody = try await Self.client(nil, cache(), stub).response(for: me)
    #expect(nobody.response.cacheStatus == .miss)
    #expect(String(decoding: nobody.value, as: UTF8.self) == "profile of nobody")
    // The same credential in another case of its scheme is another credential: a miss, never
    // a hit for someone else's.
    let scheme = try await Self.client("bearer alice-R6", cache(), stub).response(for: me)
    #expect(String(decoding: scheme.value, as: UTF8.self) == "profile of bearer alice-R6")
  }
}
