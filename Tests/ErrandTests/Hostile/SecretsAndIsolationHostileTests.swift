import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Hostile probes: a secret the client was told to hide reaching an event, an error or `dump`,
/// and one call's exchange (sample, progress, events) reaching another. Each probe asserts the
/// safe behaviour, so a failure is a finding.
@Suite(.timeLimit(.minutes(3))) struct SecretsAndIsolationHostileTests {
  /// A client whose redaction also hides the `session` query parameter, over `transport`.
  static func client(_ transport: any Transport, listener: RecordingListener) -> APIClient {
    var configuration = APIClient.Configuration(eventListeners: [listener])
    configuration.redaction.queryParameters.insert("session")
    return APIClient(baseURL: base, transport: transport, configuration: configuration)
  }

  // MARK: Refused redirects

  static let refusedRows: [RefusedRedirectRow] = [
    RefusedRedirectRow(
      name: "the client's secret query value, in the URL that answered",
      query: [URLQueryItem(name: "session", value: "S3CRET-H")], location: "ftp://files.example/x"),
    RefusedRedirectRow(
      name: "the client's secret query value, in the Location", query: [],
      location: "ftp://files.example/x?session=S3CRET-I"),
    RefusedRedirectRow(
      name: "an access token in the Location's fragment", query: [],
      location: "ftp://files.example/cb#access_token=S3CRET-J"),
  ]

  /// A redirect the policy refuses (`ftp:`) is told to listeners and thrown: neither may show a
  /// secret the client's redaction names, or a token in the Location.
  @Test(arguments: refusedRows)
  func aRefusedRedirectShowsNoSecret(_ row: RefusedRedirectRow) async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(.get, "/v1/start", .status(302, headers: ["Location": row.location]))
    let listener = RecordingListener()
    let client = Self.client(stub, listener: listener)
    let error = try await #require(throws: APIError.self) {
      try await client.send(Endpoint<Data>(path: "start", query: row.query, decoding: .data))
    }
    #expect(error.underlyingError is RefusedRedirectError)
    let events = await listener.eventsOfOneCall()
    #expect(events.contains { $0.kind.name == "redirectRefused" })
    for text in printedForms(of: error) + printedForms(of: events) {
      #expect(!text.contains("S3CRET"), "printed: \(text)")
    }
  }

  // MARK: Followed redirects

  /// A same-origin redirect the stub follows, and where its secret sits.
  static let followedLocations = [
    // The client's own secret query parameter (control row: hidden by the client's redaction).
    "/v1/next?session=S3CRET-L",
    // An OAuth implicit grant's token, in the fragment.
    "/v1/next#access_token=S3CRET-M&token_type=bearer",
  ]

  @Test(arguments: followedLocations)
  func aFollowedRedirectShowsNoSecret(_ location: String) async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(.get, "/v1/start", .status(302, headers: ["Location": location]))
    await stub.on(.get, "/v1/next", .status(200, body: Data("{}".utf8)))
    let listener = RecordingListener()
    let client = Self.client(stub, listener: listener)
    _ = try await client.send(Endpoint<Data>(path: "start", decoding: .data))
    let events = await listener.eventsOfOneCall()
    #expect(events.contains { $0.kind.name == "redirectFollowed" })
    for text in printedForms(of: events) {
      #expect(!text.contains("S3CRET"), "a listener heard: \(text)")
    }
  }

  // MARK: Every event names its endpoint

  /// An endpoint at an absolute URL (a presigned upload, a next page) whose query carries a value
  /// the client's redaction hides: every event carries the endpoint's description.
  @Test func theEndpointEveryEventNamesShowsNoSecret() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/x", .status(200, body: Data("{}".utf8)))
    let listener = RecordingListener()
    let client = Self.client(stub, listener: listener)
    _ = try await client.send(
      Endpoint<Data>(
        url: url("https://files.example/x?session=S3CRET-N&page=2"), decoding: .data))
    let events = await listener.eventsOfOneCall()
    for event in events {
      #expect(!event.endpoint.contains("S3CRET"), "\(event.kind.name) named \(event.endpoint)")
    }
  }

  // MARK: Transport failures

  /// A transport failure (URLSession and libcurl both put the raw URL in the error) prints no
  /// value the client's redaction hides, in any form: the description, `String(describing:)`,
  /// `dump`, and the `callFailed` event.
  @Test func aTransportFailureShowsNoSecretTheClientHides() async throws {
    let stub = StubTransport { request in
      .error(
        URLError(
          .cannotConnectToHost,
          userInfo: [
            NSURLErrorFailingURLErrorKey: request.url,
            "NSErrorFailingURLStringKey": request.url.absoluteString,
          ]))
    }
    let listener = RecordingListener()
    let client = Self.client(stub, listener: listener)
    let error = try await #require(throws: APIError.self) {
      try await client.send(
        Endpoint<Data>(
          path: "dogs", query: [URLQueryItem(name: "session", value: "S3CRET-O")],
          decoding: .data))
    }
    let events = await listener.eventsOfOneCall()
    for text in printedForms(of: error) + printedForms(of: events) {
      #expect(!text.contains("S3CRET"), "printed: \(text)")
    }
  }

  // MARK: One call's exchange reaching another

  /// Makes a call of its own through the same client before passing the request on: a token
  /// refresh that posts a password.
  struct RefreshingFirst: Middleware {
    let client: Locked<APIClient?>
    func intercept(
      _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
      guard let client = client.withLock({ $0 }), !request.url.path.hasSuffix("oauth/token") else {
        return try await next(request)
      }
      _ = try await client.send(
        Endpoint<Data>(
          method: .post, path: "oauth/token",
          body: .form([("grant_type", "password"), ("password", "S3CRET-P")]), decoding: .data))
      return try await next(request)
    }
  }

  /// The refresh a middleware makes is a call of its own: its upload is not reported to the
  /// outer call's progress, its events carry its own call number, and its password appears in
  /// no event.
  @Test func aCallMadeInsideAMiddlewareKeepsItsOwnExchange() async throws {
    let stub = StubTransport()
    await stub.on(.post, "/v1/oauth/token", .status(200, body: Data("{}".utf8)))
    await stub.on(.put, "/v1/logs", .status(200, body: Data("{}".utf8)))
    let listener = RecordingListener()
    let holder = Locked<APIClient?>(nil)
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: .init(
        middleware: [RefreshingFirst(client: holder)], eventListeners: [listener]))
    holder.withLock { $0 = client }
    let heard = Locked<[TransferProgress]>([])
    let upload = Data(repeating: 7, count: 1000)
    _ = try await client.send(
      Endpoint<Data>(method: .put, path: "logs", body: .data(upload), decoding: .data)
    ) { progress in heard.withLock { $0.append(progress) } }
    let reports = heard.withLock { $0 }
    #expect(!reports.isEmpty)
    #expect(reports.allSatisfy { $0.expectedBytes == 1000 }, "heard \(reports)")
    let collected = Locked<[CallEvent]>([])
    let heardBoth = await returnsInTime(seconds: 60) {
      while Set(collected.withLock { $0 }.filter { $0.kind.name == "callEnded" }.map(\.callID))
        .count < 2
      {
        let more = await listener.eventsOfOneCall()
        guard !more.isEmpty else { return false }
        collected.withLock { $0 += more }
      }
      return true
    }
    #expect(heardBoth, "did not hear both calls end")
    let events = collected.withLock { $0 }
    let calls = Dictionary(grouping: events, by: \.callID)
    #expect(calls.count == 2)
    for (id, ofOneCall) in calls {
      let kinds = ofOneCall.map(\.kind.name)
      #expect(kinds.filter { $0 == "callStarted" }.count == 1, "call \(id): \(kinds)")
      #expect(kinds.filter { $0 == "attemptStarted" }.count == 1, "call \(id): \(kinds)")
      #expect(kinds.filter { $0 == "responseHead" }.count == 1, "call \(id): \(kinds)")
    }
    for text in printedForms(of: events) {
      #expect(!text.contains("S3CRET"), "a listener heard: \(text)")
    }
  }

  /// A middleware on an endpoint with a sample calls another endpoint through the same client,
  /// over a stub that answers with samples: the inner call gets its own endpoint's sample, or
  /// none, never the outer one's.
  @Test func aCallMadeInsideAMiddlewareNeverGetsTheOuterSample() async throws {
    struct Nested: Middleware {
      let client: Locked<APIClient?>
      let answers: Locked<[String]>
      func intercept(
        _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
      ) async throws -> HTTPResponse {
        if let client = client.withLock({ $0 }) {
          let plain = Endpoint<String>(path: "plain")
          var sampled = Endpoint<String>(path: "sampled")
          sampled.sample = HTTPResponse(status: 200, body: Data("inner-sample".utf8))
          let first = (try? await client.send(plain)) ?? "no answer"
          let second = (try? await client.send(sampled)) ?? "no answer"
          answers.withLock { $0 += [first, second] }
        }
        return try await next(request)
      }
    }
    let holder = Locked<APIClient?>(nil)
    let answers = Locked<[String]>([])
    let client = APIClient(baseURL: base, transport: StubTransport.samples())
    holder.withLock { $0 = client }
    var outer = Endpoint<String>(path: "outer")
    outer.sample = HTTPResponse(status: 200, body: Data("outer-sample".utf8))
    outer.middleware = [Nested(client: holder, answers: answers)]
    #expect(try await client.send(outer) == "outer-sample")
    #expect(answers.withLock { $0 } == ["no answer", "inner-sample"])
  }

  /// Many calls at once over one stub that answers with samples: each gets its own.
  @Test func concurrentCallsEachGetTheirOwnSample() async throws {
    let client = APIClient(baseURL: base, transport: StubTransport.samples())
    let mismatches = await withTaskGroup(of: String?.self) { group in
      for index in 0..<64 {
        group.addTask {
          var endpoint = Endpoint<String>(path: "item/\(index % 8)")
          endpoint.sample = HTTPResponse(status: 200, body: Data("sample-\(index)".utf8))
          let answer = (try? await client.send(endpoint)) ?? "failed"
          return answer == "sample-\(index)" ? nil : "call \(index) got \(answer)"
        }
      }
      var mismatches: [String] = []
      for await mismatch in group {
        if let mismatch { mismatches.append(mismatch) }
      }
      return mismatches
    }
    #expect(mismatches.isEmpty, "\(mismatches)")
  }
}
