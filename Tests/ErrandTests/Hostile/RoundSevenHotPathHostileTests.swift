import ErrandTesting
import Foundation
import TestSupport
import Testing

@_spi(Transports) @testable import Errand

/// Round seven: probes of the hot-path change (11264a1, 67e4194), meant to change no behaviour:
/// samples held by reference (a response's request, and `Response`'s fields reordered, too, until
/// these probes), the continuous clock's stopwatch read without an existential and `RequestDeadline` a class, a call
/// that meets only Errand's own middleware run inline in its caller's task, nothing "prepared"
/// for the transport when there is nothing to withhold and no jar, validation's byte loops over
/// contiguous storage and the host read as written. Each test asserts what 9be3547 did (its old
/// logic reimplemented here where it was a predicate), so a failure is a finding.
@Suite(.timeLimit(.minutes(1))) struct RoundSevenHotPathHostileTests {
  typealias Chain = CallControlTests.Chain

  static let dogs = "https://api.example.com/v1/dogs"

  /// A middleware of the app's (not Errand's own) that ends every call of its client as it runs,
  /// then passes the request on.
  struct CancelsAsItRuns: Middleware {
    let late: LateClient

    func intercept(
      _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
      late.cancelAll()
      return try await next(request)
    }
  }

  /// When `cancelAll()` comes.
  enum Moment: String, CaseIterable, CustomTestStringConvertible, Sendable {
    /// While the request is built (its body encoded), before the call is run.
    case beforeItStarts
    /// While the stub's answer waits on a test clock.
    case whileItsAnswerWaits
    /// While a middleware runs: Errand's own (a trace context hook) in the caller's task, the
    /// app's in a task of its own.
    case inAMiddleware
    /// Once the answer is in, while its value is decoded.
    case whileItsValueIsRead
    var testDescription: String { rawValue }
  }

  // MARK: - Cancellation, inline in the caller's task or in a task of its own

  /// `cancelAll()` at each moment of a call, in its caller's task or in a task of its own: the
  /// call throws `APIError.cancelled` saying so as before, counted once, sent only when it got
  /// that far, and leaves nothing listed and no wait registered.
  @Test(arguments: Moment.allCases, Chain.allCases)
  func cancelAllEndsTheCallAsBefore(_ moment: Moment, chain: Chain) async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    let ok = StubResponse.status(200, body: Data("ok".utf8))
    await stub.on(.any, moment == .whileItsAnswerWaits ? ok.delayed(by: .seconds(5)) : ok)
    let late = LateClient()
    var middleware = chain.middleware
    if moment == .inAMiddleware {
      if chain == .errandsOwn {
        middleware.insert(
          TraceContextMiddleware {
            late.cancelAll()
            return nil
          }, at: 0)
      } else {
        middleware.insert(CancelsAsItRuns(late: late), at: 0)
      }
    }
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(timeout: nil, middleware: middleware, clock: clock))
    late.client = client
    #expect(client.endsItsOwnWaits(for: Endpoint<Data>(path: "x")) == (chain == .errandsOwn))
    let endpoint: Endpoint<Data>
    switch moment {
    case .beforeItStarts:
      endpoint = Endpoint<Data>(
        method: .post, path: "dogs", body: .json(RunsWhenEncoded { late.cancelAll() }),
        decoding: .data)
    case .whileItsValueIsRead:
      endpoint = Endpoint<Data>(
        path: "dogs",
        decoding: ResponseDecoding<Data> { response in
          late.cancelAll()
          return response.body
        })
    case .whileItsAnswerWaits, .inAMiddleware:
      endpoint = Endpoint<Data>(path: "dogs", decoding: .data)
    }
    let call = Task { try await client.send(endpoint) }
    if moment == .whileItsAnswerWaits {
      try #require(await clock.waitForSleeper(dueIn: .seconds(5)))
      #expect(client.inFlight.count == 1)
      late.cancelAll()
    }
    let error = await #expect(throws: APIError.self) { _ = try await call.value }
    #expect(error?.kind == .cancelled)
    #expect(
      error?.localizedDescription
        == "The request \(endpoint.method.rawValue) \(Self.dogs) was cancelled.")
    #expect(late.cancelled == [1])
    let sent = await stub.requests.count
    #expect(sent == ([.beforeItStarts, .inAMiddleware].contains(moment) ? 0 : 1))
    #expect(client.inFlight.isEmpty)
    #expect(client.calls.waitCount == 0)
  }

  /// `cancelAll()` before a call starts ends nothing (it returns 0), and the call made after it
  /// runs as usual, inline or in a task of its own.
  @Test(arguments: Chain.allCases)
  func cancelAllBeforeACallLeavesItAlone(_ chain: Chain) async throws {
    let stub = StubTransport()
    await stub.on(.any, .status(200, body: Data("ok".utf8)))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(timeout: nil, middleware: chain.middleware))
    #expect(client.cancelAll() == 0)
    #expect(try await client.send(Endpoint<Data>(path: "dogs", decoding: .data)) == Data("ok".utf8))
    #expect(client.inFlight.isEmpty)
    #expect(client.calls.waitCount == 0)
  }

  /// Forty calls waiting on a test clock, ended by one `cancelAll()`: each throws `.cancelled`,
  /// the count is forty, and nothing is left listed or registered; a call after them runs.
  @Test(arguments: Chain.allCases)
  func manyWaitingCallsAreAllEndedAndForgotten(_ chain: Chain) async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.path("/v1/slow"), StubResponse.status(200).delayed(by: .seconds(5)))
    await stub.on(.path("/v1/fast"), .status(200))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        timeout: nil, middleware: chain.middleware, clock: clock))
    let calls = (0..<40).map { _ in
      Task { try await client.send(Endpoint<Data>(path: "slow", decoding: .data)) }
    }
    try #require(await clock.waitForSleepers(40))
    #expect(client.inFlight.count == 40)
    #expect(client.cancelAll() == 40)
    var cancelled = 0
    for call in calls {
      do {
        _ = try await call.value
      } catch let error as APIError where error.kind == .cancelled {
        cancelled += 1
      } catch {
        Issue.record("a call threw \(error)")
      }
    }
    #expect(cancelled == 40)
    #expect(client.inFlight.isEmpty)
    #expect(client.calls.waitCount == 0)
    _ = try await client.send(Endpoint<Data>(path: "fast", decoding: .data))
  }

  // MARK: - Validation

  /// The host check before the change: `url.host` (decoded) present and not empty.
  static func oldURLProblem(_ url: URL) -> String? {
    guard let scheme = url.scheme, ["http", "https"].contains(scheme.lowercased()) else {
      return "scheme"
    }
    guard let host = url.host, !host.isEmpty else { return "the URL has no host." }
    return nil
  }

  /// Hosts written oddly (percent signs that decode, do not decode or decode to bytes that are
  /// not UTF-8; IP literals; user info; an empty host; upper case), and relative URLs: a request
  /// refused before is refused with the same message, one accepted is accepted.
  @Test(
    arguments: [
      ("https://%41/", nil), ("https://%zz/", nil), ("https://a%80b/", nil), ("https://%00/", nil),
      ("https://%41pi.example.com/v1", nil), ("https://caf%C3%A9.example/", nil),
      ("https://caf%c3%a9.example/", nil), ("https://%C3/", nil), ("https://%25/", nil),
      ("https://a%/", nil), ("https://a%2/", nil), ("https://host%20name/", nil),
      ("https://a%2Eb/", nil), ("https://%2F/", nil), ("https:///x", nil), ("https://", nil),
      ("https:", nil), ("https://@/", nil), ("https://user@/", nil), ("https://:443/", nil),
      ("https://[::1]/", nil), ("https://[::1]:8443/x", nil), ("http://[fe80::1%25en0]/", nil),
      ("http://[fe80::1%en0]/", nil), ("https://[]/", nil),
      ("https://user:pass@host.example/", nil),
      ("https://user:p%40ss@host.example/", nil), ("https://us%zzer@host.example/", nil),
      ("HTTPS://API.EXAMPLE.COM/", nil), ("HtTp://127.0.0.1:8080/x", nil), ("https://a..b/", nil),
      ("https://xn--caf-dma.example/", nil), ("https://caf\u{E9}.example/", nil),
      ("https://example.com%2F@evil.example/", nil), ("ftp://%41/", nil), ("https:/%41/x", nil),
      ("dogs", "https://api.example.com/v1/"),
      ("//other.example.com/x", "https://api.example.com/"),
      ("//%41/x", "https://api.example.com/"), ("//a%80b/x", "https://api.example.com/"),
      ("/x", "https:///"), ("?q=1", "https://%41/"), ("https:dogs", "https://api.example.com/v1/"),
    ] as [(String, String?)])
  func hostsAreJudgedAsBefore(_ string: String, relativeTo base: String?) throws {
    let parsed: URL?
    if let base {
      parsed = URL(string: base).flatMap { URL(string: string, relativeTo: $0) }
    } else {
      parsed = URL(string: string)
    }
    // A string Foundation does not parse cannot reach a request: nothing to compare.
    guard let url = parsed else { return }
    let now = HTTPRequest(url: url).validationProblem
    let nowVerdict = now.map { $0.hasPrefix("the URL's scheme") ? "scheme" : $0 }
    #expect(
      nowVerdict == Self.oldURLProblem(url),
      "host \(String(describing: url.host(percentEncoded: true))) decoded \(String(describing: url.host))"
    )
  }

  /// Header values: control characters, CR/LF, DEL, C1 controls (allowed before, as their
  /// UTF-8 bytes are above 0x7F), long values, non-ASCII values, values bridged from `NSString`
  /// or decoded from UTF-16. Each is judged as before, with the same message.
  static let headerValues: [String] = {
    var values = [
      "plain", "tab\there", "a\rb", "a\nb", "a\r\nX-Injected: 1", "nul\0", "del\u{7F}",
      "bell\u{07}", "esc\u{1B}[0m", "caf\u{E9}", "\u{85}next-line", "\u{2028}", "\u{FEFF}bom",
      "emoji \u{1F600}", "\u{9F}", "", " ", "\u{E9}\u{301}\r",
      String(repeating: "a", count: 100_000), String(repeating: "a", count: 100_000) + "\n",
      "\n" + String(repeating: "\u{E9}", count: 50_000),
      String(repeating: "\u{1F600}", count: 20_000) + "\u{7F}",
    ]
    for text in ["caf\u{E9}", "caf\u{E9}\r\n", "\u{1F600}\u{7F}", "x\ty", "\u{E9}\0"] {
      values.append(NSString(string: text).substring(from: 0))
      values.append(NSMutableString(string: text).appending(""))
      values.append(String(describing: NSString(string: text)))
      if let utf16 = text.data(using: .utf16), let decoded = String(data: utf16, encoding: .utf16) {
        values.append(decoded)
      }
      values.append(String(text[...]))
    }
    return values
  }()

  /// Header names: empty, with bytes at or above 0x80, separators, every `tchar`.
  static let headerNames: [String] = [
    "X-Ok", "!#$%&'*+-.^_`|~", "X Y", "X:Y", "X\tY", "X\u{80}", "\u{DC}nicode", "X-\u{E9}",
    "X-\u{1F600}", "(x)", "x\"y", "x/y", "x@y", "x\0", "x\r\n", "\u{7F}",
    NSString(string: "X-\u{E9}").substring(from: 0),
    NSString(string: "X-Bridged").substring(from: 0),
    String(repeating: "x", count: 70_000), String(repeating: "x", count: 70_000) + "\u{E9}",
  ]

  static func oldRefusesValue(_ value: String) -> Bool {
    value.utf8.contains { $0 < 0x20 && $0 != 0x09 || $0 == 0x7F }
      && value.unicodeScalars.contains { $0.value < 0x20 && $0.value != 0x09 || $0.value == 0x7F }
  }

  static func oldRefusesName(_ name: String) -> Bool {
    name.isEmpty || !name.utf8.allSatisfy(HTTPHeaders.isTokenByte)
  }

  static func shown(_ text: String) -> String {
    String(text.prefix(24)).debugDescription + " (\(text.utf8.count) bytes)"
  }

  @Test func headerNamesValuesAndMethodsAreJudgedAsBefore() throws {
    let url = try #require(URL(string: Self.dogs))
    for value in Self.headerValues {
      let problem = HTTPRequest(
        url: url, headers: HTTPHeaders([.init(name: "X-Value", value: value)])
      )
      .validationProblem
      #expect((problem != nil) == Self.oldRefusesValue(value), "\(Self.shown(value))")
      if let problem {
        #expect(
          problem.hasPrefix("the value of header \"X-Value\" contains "), "\(Self.shown(value))")
      }
      let oldCanSend = !value.utf8.contains { $0 < 0x20 && $0 != 0x09 || $0 == 0x7F }
      #expect(HTTPHeaders.canSend(value) == oldCanSend, "\(Self.shown(value))")
    }
    for name in Self.headerNames {
      let problem = HTTPRequest(url: url, headers: HTTPHeaders([.init(name: name, value: "v")]))
        .validationProblem
      #expect((problem != nil) == Self.oldRefusesName(name), "\(Self.shown(name))")
      if let problem {
        #expect(
          problem.hasPrefix("the header name \"") && problem.hasSuffix("\" is not a valid token."),
          "\(Self.shown(name))")
      }
      let method = HTTPMethod(rawValue: name)
      #expect(
        method.isValidToken == (!name.isEmpty && name.utf8.allSatisfy(HTTPHeaders.isTokenByte)),
        "\(Self.shown(name))")
    }
  }

  /// Every scalar up to U+02FF and some beyond, in a header value, a header name and a method:
  /// each judged as the old byte loops judged it.
  @Test func everyScalarIsJudgedAsBefore() throws {
    let url = try #require(URL(string: Self.dogs))
    var differences: [String] = []
    let scalars = Array(0..<0x300) + [0x85, 0x2028, 0xFEFF, 0xFFFD, 0x1F600, 0x10FFFF]
    for code in scalars {
      guard let scalar = Unicode.Scalar(UInt32(code)) else { continue }
      let text = "a" + String(Character(scalar)) + "b"
      if HTTPHeaders.canSend(text)
        != !text.utf8.contains(where: { $0 < 0x20 && $0 != 0x09 || $0 == 0x7F })
      {
        differences.append("canSend U+\(String(code, radix: 16))")
      }
      let value = HTTPRequest(url: url, headers: HTTPHeaders([.init(name: "X", value: text)]))
      if (value.validationProblem != nil) != Self.oldRefusesValue(text) {
        differences.append("value U+\(String(code, radix: 16))")
      }
      let name = HTTPRequest(url: url, headers: HTTPHeaders([.init(name: text, value: "v")]))
      if (name.validationProblem != nil) != Self.oldRefusesName(text) {
        differences.append("name U+\(String(code, radix: 16))")
      }
      if HTTPMethod(rawValue: text).isValidToken != !Self.oldRefusesName(text) {
        differences.append("method U+\(String(code, radix: 16))")
      }
    }
    #expect(differences.isEmpty)
  }

  // MARK: - Samples

  /// Which value carries a sample.
  enum Holder: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case endpoint, exchange, context
    var testDescription: String { rawValue }
  }

  /// A sample set, changed in place, cleared on one copy of an endpoint, an exchange or a
  /// context: no other copy sees it.
  @Test(arguments: Holder.allCases)
  func aCopysSampleIsItsOwn(_ holder: Holder) {
    switch holder {
    case .endpoint:
      Self.expectSampleIsAValue(Endpoint<Data>(path: "dogs", decoding: .data), \.sample)
    case .exchange: Self.expectSampleIsAValue(Exchange(), \.sample)
    case .context: Self.expectSampleIsAValue(RequestContext(endpoint: "GET dogs"), \.sample)
    }
  }

  static func expectSampleIsAValue<Value>(
    _ empty: Value, _ sample: WritableKeyPath<Value, HTTPResponse?>
  ) {
    let first = HTTPResponse(status: 200, headers: ["X-Which": "first"], body: Data("first".utf8))
    var one = empty
    #expect(one[keyPath: sample] == nil)
    one[keyPath: sample] = first
    var two = one
    #expect(two[keyPath: sample] == first)
    two[keyPath: sample]?.status = 500
    two[keyPath: sample]?.headers["X-Which"] = "second"
    two[keyPath: sample]?.body.append(Data("!".utf8))
    #expect(one[keyPath: sample] == first)
    #expect(one[keyPath: sample]?.headers["X-Which"] == "first")
    #expect(one[keyPath: sample]?.body == Data("first".utf8))
    #expect(two[keyPath: sample]?.status == 500)
    #expect(two[keyPath: sample]?.body == Data("first!".utf8))
    var three = one
    three[keyPath: sample] = nil
    #expect(one[keyPath: sample] == first)
    #expect(three[keyPath: sample] == nil)
    one[keyPath: sample]?.status = 404
    #expect(two[keyPath: sample]?.status == 500)
    #expect(three[keyPath: sample] == nil)
    #expect(one[keyPath: sample]?.status == 404)
  }

  /// A middleware of the app's that notes the sample its call's context carries.
  struct NotesSample: Middleware {
    let seen: Locked<[String]>

    func intercept(
      _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
      let sample = RequestContext.current?.sample.map { String(decoding: $0.body, as: UTF8.self) }
      seen.withLock { $0.append("middleware \(sample ?? "none")") }
      return try await next(request)
    }
  }

  /// Endpoints copied, then their samples changed, cleared or mutated: each call is answered
  /// with its own endpoint's sample (`StubTransport.samples`-style), the stub's handler and a
  /// middleware see it in `RequestContext.current`, and a cleared sample is not answered.
  @Test(arguments: Chain.allCases)
  func eachCallSeesItsOwnEndpointsSample(_ chain: Chain) async throws {
    let seen = Locked<[String]>([])
    let stub = StubTransport(samples: true)
    await stub.on(
      .path("/v1/routed"),
      .handler { _, _ in
        let sample = RequestContext.current?.sample.map { String(decoding: $0.body, as: UTF8.self) }
        seen.withLock { $0.append("stub \(sample ?? "none")") }
        return .status(200, body: Data("routed".utf8))
      })
    let middleware: [any Middleware] =
      chain == .errandsOwn ? chain.middleware : chain.middleware + [NotesSample(seen: seen)]
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(timeout: nil, middleware: middleware))
    var original = Endpoint<String>(path: "sampled")
    original.sample = HTTPResponse(status: 200, body: Data("original".utf8))
    var copy = original
    copy.sample = HTTPResponse(status: 200, body: Data("copy".utf8))
    var cleared = original
    cleared.sample = nil
    #expect(try await client.send(original) == "original")
    #expect(try await client.send(copy) == "copy")
    await #expect(throws: APIError.self) { _ = try await client.send(cleared) }
    original.sample?.body = Data("changed".utf8)
    #expect(try await client.send(original) == "changed")
    #expect(try await client.send(copy) == "copy")
    var routed = Endpoint<String>(path: "routed")
    routed.sample = HTTPResponse(status: 200, body: Data("r1".utf8))
    var routedCopy = routed
    routedCopy.sample = nil
    seen.withLock { $0 = [] }
    #expect(try await client.send(routed) == "routed")
    #expect(try await client.send(routedCopy) == "routed")
    let expected =
      chain == .errandsOwn
      ? ["stub r1", "stub none"] : ["middleware r1", "stub r1", "middleware none", "stub none"]
    #expect(seen.withLock { $0 } == expected)
  }

  /// Sixty-four calls at once, each with its own sample and its own header, some to the same
  /// path, with and without in-flight sharing: each gets its own sample as its value, and its
  /// own request in `Response.request` and in `response.request`.
  @Test(arguments: [false, true])
  func concurrentCallersEachGetTheirOwnSampleAndRequest(shares: Bool) async throws {
    var configuration = APIClient.Configuration(timeout: nil)
    configuration.sharesInFlightRequests = shares
    let client = APIClient(
      baseURL: base, transport: StubTransport.samples(), configuration: configuration)
    let problems = await withTaskGroup(of: [String].self) { group in
      for index in 0..<64 {
        group.addTask {
          var endpoint = Endpoint<String>(
            path: "dogs/\(index % 4)", headers: ["X-Caller": "\(index)"])
          endpoint.sample = HTTPResponse(status: 200, body: Data("sample-\(index)".utf8))
          do {
            let response = try await client.response(for: endpoint)
            var problems: [String] = []
            if response.value != "sample-\(index)" {
              problems.append("call \(index) got \(response.value)")
            }
            if response.request.headers["X-Caller"] != "\(index)" {
              problems.append("call \(index): Response.request is another's")
            }
            if response.response.request?.headers["X-Caller"] != "\(index)" {
              problems.append("call \(index): response.request is another's")
            }
            return problems
          } catch {
            return ["call \(index) threw \(error)"]
          }
        }
      }
      return await group.reduce(into: []) { $0 += $1 }
    }
    #expect(problems.isEmpty)
    #expect(client.inFlight.isEmpty)
  }

  // MARK: - HTTPResponse.request

  /// A response's request is a value: a copy's change stays in the copy; equality and hashing
  /// ignore it.
  @Test func aResponsesRequestIsAValueThatEqualityIgnores() throws {
    let first = HTTPRequest(
      url: try #require(URL(string: "https://api.example.com/v1/a")),
      headers: ["Authorization": "Bearer A"])
    let second = HTTPRequest(
      method: .post, url: try #require(URL(string: "https://api.example.com/v1/b")))
    var one = HTTPResponse(status: 200, body: Data("x".utf8), request: first)
    var two = one
    two.request = second
    #expect(one.request == first)
    #expect(two.request == second)
    var three = one
    three.request?.headers["Authorization"] = "Bearer C"
    #expect(one.request?.headers["Authorization"] == "Bearer A")
    #expect(three.request?.headers["Authorization"] == "Bearer C")
    #expect(one == two && two == three)
    #expect(one.hashValue == two.hashValue && two.hashValue == three.hashValue)
    #expect(Set([one, two, three]).count == 1)
    let four = one
    var five = HTTPResponse(status: 200)
    let six = five
    five.request = second
    #expect(five.request == second)
    #expect(six.request == nil)
    one.request = nil
    #expect(one.request == nil)
    #expect(two.request == second)
    #expect(four.request == first)
  }

  // MARK: - Printed forms

  /// An `ExchangeTransport` that keeps the exchange and the context of the last request.
  struct KeepsWhatItSees: ExchangeTransport {
    let kept: Locked<(exchange: Exchange?, context: RequestContext?)>

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
      try await exchange(request, Exchange())
    }

    func exchange(_ request: HTTPRequest, _ exchange: Exchange) async throws -> HTTPResponse {
      kept.withLock { $0 = (exchange, RequestContext.current) }
      return HTTPResponse(
        status: 200, headers: ["Content-Type": "application/json"], body: Data("{}".utf8))
    }
  }

  /// A call with a bearer token and an API key in the client's headers, a password in the URL's
  /// user info and an API key in its query, and a sample: no printed form (description, debug
  /// description, `dump`) of the `Response`, the `HTTPResponse`, both requests, the endpoint,
  /// the context or the exchange the transport saw shows any of them.
  @Test func noPrintedFormShowsASecret() async throws {
    let token = "BEARERSECRET7a1"
    let apiKey = "APIKEYSECRET9c2"
    let password = "PASSWORDSECRET4e8"
    let queryKey = "QUERYSECRET5d3"
    let kept = Locked<(exchange: Exchange?, context: RequestContext?)>((nil, nil))
    let client = APIClient(
      baseURL: base, transport: KeepsWhatItSees(kept: kept),
      configuration: APIClient.Configuration(
        headers: ["Authorization": "Bearer \(token)", "X-API-Key": apiKey], timeout: .seconds(30)))
    var endpoint = Endpoint<Data>(path: "", decoding: .data)
    endpoint.url = URL(
      string: "https://user:\(password)@api.example.com/v1/dogs?api_key=\(queryKey)&page=2")
    // A sample that carries a request with the token, as an app's fixture might.
    endpoint.sample = HTTPResponse(
      status: 200, body: Data("{}".utf8),
      request: HTTPRequest(
        url: try #require(URL(string: Self.dogs)), headers: ["Authorization": "Bearer \(token)"]))
    let response = try await client.response(for: endpoint)
    #expect(response.response.request?.headers["Authorization"] == "Bearer \(token)")
    let (exchange, context) = kept.withLock { $0 }
    let values: [(String, Any)] = [
      ("Response", response), ("HTTPResponse", response.response), ("request", response.request),
      ("response.request", response.response.request as Any), ("endpoint", endpoint),
      ("context", context as Any), ("exchange", exchange as Any),
    ]
    for (name, value) in values {
      for form in printedForms(of: value) {
        for secret in [token, apiKey, password, queryKey] {
          #expect(!form.contains(secret), "\(name) prints \(secret)")
        }
      }
    }
  }

  /// What is printed.
  enum Printed: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case response, context, exchange
    var testDescription: String { rawValue }
  }

  /// What `Mirror`, `print` and `String(describing:)` show of a `Response`, a `RequestContext`
  /// and an `Exchange` is what they showed at 9be3547: a `Response`'s fields as value, response,
  /// request; a context's and an exchange's `sample` under that name, printed as the response's
  /// description (an app's snapshot of a `dump` or a log line stays the same).
  @Test(arguments: Printed.allCases)
  func printedLayoutIsAsBefore(_ printed: Printed) throws {
    let sample = HTTPResponse(status: 200, body: Data("ok".utf8))
    switch printed {
    case .response:
      let response = Response(
        value: "v", response: sample,
        request: HTTPRequest(url: try #require(URL(string: Self.dogs))))
      let labels = Mirror(reflecting: response).children.map(\.label)
      #expect(labels == ["value", "response", "request"])
      #expect(String(describing: response).contains("(value: \"v\", response: HTTP 200 (2 bytes)"))
    case .context:
      let context = RequestContext(endpoint: "GET dogs", sample: sample)
      let labels = Mirror(reflecting: context).children.compactMap(\.label)
      #expect(labels.contains("sample"))
      #expect(!labels.contains("sampleBox"))
      #expect(String(describing: context).contains("sample: Optional(HTTP 200 (2 bytes))"))
    case .exchange:
      var exchange = Exchange()
      exchange.sample = sample
      let labels = Mirror(reflecting: exchange).children.compactMap(\.label)
      #expect(labels.contains("sample"))
      #expect(!labels.contains("sampleBox"))
      #expect(String(describing: exchange).contains("sample: Optional(HTTP 200 (2 bytes))"))
      // The deadline a transport's exchange carries, printed with its timeout as before.
      let timed = Exchange(timeout: .seconds(30))
      #expect(String(describing: timed).contains("RequestDeadline(timeout: 30.0 seconds"))
      // The app's own `Cookie` value, which an exchange carries for its redirects, is hidden.
      exchange.appCookieField = "session=s3cr3t-cookie"
      for form in [String(describing: exchange), String(reflecting: exchange)] {
        #expect(!form.contains("s3cr3t-cookie") && form.contains("appCookieField"))
      }
    }
  }

  // MARK: - Cross-origin calls, cookies, the cache

  /// A call to another origin (an absolute URL), withholding its secrets (a next page there) or
  /// not, over a client with or without a cookie jar and with or without a cache: the client's
  /// secret default headers never go; a withholding call loses what middleware added but the
  /// safe headers; the jar gives only that site's cookies. At home, everything goes as before.
  @Test(
    arguments: [false, true].flatMap { jar in
      [false, true].flatMap { cached in [false, true].map { (jar, cached, $0) } }
    })
  func crossOriginCallsWithholdAndGetCookiesAsBefore(
    jar hasJar: Bool, cached: Bool, withholds: Bool
  ) async throws {
    let stub = StubTransport()
    await stub.on(.any, .status(200))
    var middleware: [any Middleware] = [
      SetsHeader(name: "Authorization", value: "Bearer MIDDLEWARESECRET"),
      SetsHeader(name: "X-Trace", value: "t1"),
    ]
    if cached { middleware.append(CachingMiddleware(cache: HTTPCache(now: { Date() }))) }
    var configuration = APIClient.Configuration(
      headers: [
        "Authorization": "Bearer CLIENTSECRET", "X-Tenant": "TENANTSECRET", "Accept-Language": "en",
      ], middleware: middleware)
    if hasJar {
      let jar = CookieJar()
      jar.store(["mine=JARSECRET"], from: try #require(URL(string: "https://api.example.com/")))
      jar.store(["theirs=1"], from: try #require(URL(string: "https://pages.example.net/")))
      configuration.cookieJar = jar
    }
    let client = APIClient(baseURL: base, transport: stub, configuration: configuration)
    var away = Endpoint<Data>(path: "", decoding: .data)
    away.url = URL(string: "https://pages.example.net/page2")
    away.withholdsSecrets = withholds
    _ = try await client.response(for: away)
    _ = try await client.response(for: Endpoint<Data>(path: "me", decoding: .data))
    let requests = await stub.requests
    try #require(requests.count == 2)
    let sent = requests[0]
    #expect(sent.url.host == "pages.example.net")
    #expect(sent.headers["X-Tenant"] == nil)
    #expect(sent.headers["Accept-Language"] == "en")
    #expect(sent.headers["Authorization"] == (withholds ? nil : "Bearer MIDDLEWARESECRET"))
    #expect(sent.headers["X-Trace"] == (withholds ? nil : "t1"))
    #expect(sent.headers["Cookie"] == (hasJar ? "theirs=1" : nil))
    let home = requests[1]
    #expect(home.url.host == "api.example.com")
    #expect(home.headers["X-Tenant"] == "TENANTSECRET")
    #expect(home.headers["Authorization"] == "Bearer MIDDLEWARESECRET")
    #expect(home.headers["X-Trace"] == "t1")
    #expect(home.headers["Cookie"] == (hasJar ? "mine=JARSECRET" : nil))
  }

  /// A client without a jar and a call that withholds nothing: the app's own `Cookie` header
  /// goes as the app set it (nothing merged, nothing dropped), at home and, with the client's
  /// secret headers withheld, nowhere else.
  @Test(arguments: [false, true])
  func withoutAJarTheAppsCookieGoesAsSet(cached: Bool) async throws {
    let stub = StubTransport()
    await stub.on(.any, .status(200))
    let middleware: [any Middleware] =
      cached ? [CachingMiddleware(cache: HTTPCache(now: { Date() }))] : []
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        headers: ["Cookie": "app=APPCOOKIE"], middleware: middleware))
    _ = try await client.response(
      for: Endpoint<Data>(path: "me", headers: ["Cookie": "a=1; b=2"], decoding: .data))
    var away = Endpoint<Data>(path: "", decoding: .data)
    away.url = URL(string: "https://pages.example.net/page2")
    _ = try await client.response(for: away)
    let requests = await stub.requests
    try #require(requests.count == 2)
    #expect(requests[0].headers.values(for: "Cookie") == ["a=1; b=2"])
    #expect(requests[1].headers["Cookie"] == nil)
  }

  // MARK: - Deadlines

  /// Which clock a client runs on.
  enum ClockKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case continuous, test
    var testDescription: String { rawValue }
  }

  /// A call whose answer never comes times out at its deadline, on the continuous clock (a
  /// 100 ms timeout) and on a test clock (advanced past 5 s), inline or in a task of its own:
  /// `APIError.timedOut`, saying so, nothing left listed.
  @Test(arguments: ClockKind.allCases, Chain.allCases)
  func aTimeoutStillFires(_ kind: ClockKind, chain: Chain) async throws {
    let testClock = TestClock()
    let clock: any Clock<Duration>
    let timeout: Duration
    if kind == .test {
      clock = testClock
      timeout = .seconds(5)
    } else {
      clock = ContinuousClock()
      timeout = .milliseconds(100)
    }
    let stub = StubTransport(clock: clock)
    await stub.on(.any, .hang)
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        timeout: timeout, middleware: chain.middleware, clock: clock))
    let call = Task { try await client.send(Endpoint<Data>(path: "dogs", decoding: .data)) }
    if kind == .test {
      try #require(await testClock.waitForSleeper(dueIn: .seconds(5)))
      await testClock.advance(by: .seconds(5))
    }
    let error = await #expect(throws: APIError.self) { _ = try await call.value }
    #expect(error?.kind == .timedOut)
    #expect(error?.localizedDescription.hasPrefix("The request GET \(Self.dogs) timed out") == true)
    #expect(client.inFlight.isEmpty)
    #expect(client.calls.waitCount == 0)
  }

  /// A retry whose wait (`Retry-After: 40`) would end past the call's 30 s deadline is not
  /// made, on either clock: one attempt, the wait it would have made reported.
  @Test(arguments: ClockKind.allCases)
  func aRetryPastTheDeadlineIsStillRefused(_ kind: ClockKind) async throws {
    let clock: any Clock<Duration>
    if kind == .test {
      clock = TestClock()
    } else {
      clock = ContinuousClock()
    }
    let stub = StubTransport()
    await stub.on(
      .any, .sequence([.status(503, headers: ["Retry-After": "40"]), .status(200)]))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        timeout: .seconds(30), middleware: [RetryMiddleware()], clock: clock))
    let endpoint = Endpoint<Data>(path: "dogs", decoding: .data, acceptableStatusCodes: 200..<600)
    let response = try await client.response(for: endpoint).response
    #expect(response.status == 503)
    #expect(response.attempts == 1)
    #expect(response.retryPastDeadline == .seconds(40))
    #expect(await stub.requests.count == 1)
  }

  /// A stopwatch and a deadline on a test clock follow that clock alone (not the real one);
  /// on the continuous clock they measure real time and their timer fires; on another real
  /// clock they measure too. Copies of an exchange share one deadline.
  @Test func stopwatchesAndDeadlinesFollowTheirOwnClock() async throws {
    let clock = TestClock()
    let watch = Stopwatch(clock)
    let deadline = RequestDeadline(timeout: .seconds(10), clock: clock)
    let exchange = Exchange(timeout: .seconds(10), clock: clock)
    let copy = exchange
    #expect(watch.elapsed == .zero)
    #expect(deadline.remaining == .seconds(10))
    let fired = Locked(false)
    let stopTimer = watch.whenElapsed(.seconds(3)) { fired.withLock { $0 = true } }
    defer { stopTimer() }
    try #require(await clock.waitForSleeper(dueIn: .seconds(3)))
    await clock.advance(by: .seconds(2))
    #expect(watch.elapsed == .seconds(2))
    #expect(deadline.remaining == .seconds(8))
    #expect(exchange.remainingTime == .seconds(8))
    #expect(copy.remainingTime == .seconds(8))
    #expect(!fired.withLock { $0 })
    await clock.advance(by: .seconds(1))
    #expect(await eventually { fired.withLock { $0 } })

    let real = Stopwatch(ContinuousClock())
    #expect(real.elapsed >= .zero && real.elapsed < .seconds(60))
    let realFired = Locked(false)
    let stopReal = real.whenElapsed(.milliseconds(1)) { realFired.withLock { $0 = true } }
    defer { stopReal() }
    #expect(await eventually { realFired.withLock { $0 } })
    let realDeadline = RequestDeadline(timeout: .seconds(60), clock: ContinuousClock())
    #expect(realDeadline.remaining <= .seconds(60) && realDeadline.remaining > .seconds(0))
    let suspending = Stopwatch(SuspendingClock())
    #expect(suspending.elapsed >= .zero && suspending.elapsed < .seconds(60))
  }
}
