import Errand
import ErrandTesting
import Foundation

/// What one run of a suite test came to, as the suite's client records it: passed, or the first
/// check that failed (a setup check's failure is a setup failure: the test could not be run).
enum CacheTestOutcome: Sendable, Equatable {
  case passed
  /// A check of the behaviour under test failed.
  case failed(String)
  /// A check the test needs to hold first failed.
  case setupFailed(String)
  /// The cache sent one request twice (the suite cannot judge that).
  case retried
  /// The call threw where no response was expected to be missing.
  case error(String)
}

/// Runs one test of the suite as its client (`test-engine/client/test.mjs`) does, through a
/// `CachingMiddleware` over a `StubTransport` that plays the suite's server, on a `TestClock`:
/// each request in turn (a `pause_after` advances the clock 3 s), each response checked as the
/// client checks it, then what the server saw.
///
/// Where the port differs from the suite's own client, it is because Errand is a library and
/// not a browser: a call that throws where the server closed the connection (`disconnect`)
/// stands for the error response a proxy would make, without headers or body, and is checked as
/// such; a Fetch cache mode `no-cache` is sent as the header Fetch adds for it
/// (`Cache-Control: max-age=0`); two-element `expected_response_headers_missing` entries are
/// checked as written (the suite's client reads them from a property Fetch never sets, so they
/// never fail there).
struct CacheTestRunner: Sendable {
  /// The origin every test's URLs are under.
  static let base = URL(string: "https://cache-tests.example")!
  /// The pause after a request that sets `pause_after`.
  static let pause: Duration = .seconds(3)

  /// Makes the cache a test runs against, given the test's wall clock.
  let makeCache: @Sendable (CacheTestWallClock) -> HTTPCache

  /// What running `test` comes to.
  func run(_ test: CacheTest) async -> CacheTestOutcome {
    let clock = TestClock()
    let wallClock = CacheTestWallClock(clock: clock)
    let uuid = UUID().uuidString.lowercased()
    let origin = CacheTestOrigin(
      requests: test.requests, uuid: uuid, clock: clock, wallClock: wallClock)
    let stub = StubTransport(clock: clock) { request in try await origin.answer(request) }
    let cache = makeCache(wallClock)
    let client = APIClient(
      baseURL: Self.base, transport: stub,
      configuration: APIClient.Configuration(
        timeout: nil, acceptableStatusCodes: 0..<1000,
        middleware: [CachingMiddleware(cache: cache)], clock: clock))
    var received: [CacheTestResponse] = []
    do {
      for (index, config) in test.requests.enumerated() {
        let response: CacheTestResponse
        do {
          let endpoint = try Self.endpoint(
            for: config, number: index + 1, uuid: uuid, previous: received.last)
          response = CacheTestResponse(try await client.response(for: endpoint).response)
        } catch {
          guard config.disconnect == true else {
            return .error("request \(index + 1) threw \(error)")
          }
          response = CacheTestResponse()
        }
        received.append(response)
        try CacheTestChecks.check(response, number: index + 1, config: config, uuid: uuid)
        await cache.waitForRevalidations()
        if config.pauseAfter == true {
          await clock.advance(by: Self.pause)
        }
      }
      try await CacheTestChecks.checkServer(
        test.requests, responses: received, seen: origin.seen)
      return .passed
    } catch let failure as CacheTestChecks.Failure {
      return failure.outcome
    } catch {
      return .error("\(error)")
    }
  }

  /// The endpoint of request `number`, as the suite's client makes it (`fetching.mjs`).
  static func endpoint(
    for config: CacheTestRequest, number: Int, uuid: String, previous: CacheTestResponse?
  ) throws -> Endpoint<Data> {
    var path = "test/\(uuid)"
    if let filename = config.filename {
      path += "/\(filename)"
    }
    var headers = HTTPHeaders()
    for header in config.requestHeaders ?? [] {
      var header = header
      if config.magicIms == true, header.name.lowercased() == "if-modified-since" {
        header = CacheTestOrigin.render(
          header, now: previous?.headers["Server-Now"].flatMap { Int64($0) }, base: nil,
          config: config)
      }
      headers.add(header.name, header.value ?? header.delta.map(String.init) ?? "")
    }
    if config.cache == "no-cache", headers["Cache-Control"] == nil {
      // What Fetch sends for its "no-cache" mode: revalidate whatever is stored.
      headers["Cache-Control"] = "max-age=0"
    }
    headers["Test-ID"] = uuid
    headers["Req-Num"] = String(number)
    var endpoint = Endpoint<Data>(
      method: HTTPMethod(rawValue: config.requestMethod ?? "GET"), path: path,
      query: Self.query(config.queryArg), headers: headers,
      body: config.requestBody.map { .data(Data($0.utf8), contentType: "text/plain") },
      decoding: .data)
    endpoint.acceptableStatusCodes = 0..<1000
    return endpoint
  }

  /// The query items of a `query_arg`.
  static func query(_ argument: String?) -> [URLQueryItem] {
    guard let argument else { return [] }
    return argument.split(separator: "&").map { item in
      let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
      return URLQueryItem(name: parts[0], value: parts.count > 1 ? parts[1] : nil)
    }
  }
}

/// A response as the suite's client reads it: Fetch's `Headers` (`get` joins a name's values with
/// `", "`), the status and the body; no status and no headers for a call that threw because the
/// server closed the connection.
struct CacheTestResponse: Sendable {
  var status: Int?
  var headers: HTTPHeaders
  var body: String

  init(_ response: HTTPResponse) {
    status = response.status
    headers = response.headers
    body = String(decoding: response.body, as: UTF8.self)
  }

  /// The stand-in for a call that threw.
  init() {
    status = nil
    headers = HTTPHeaders()
    body = ""
  }

  /// Fetch's `headers.get(name)`.
  func get(_ name: String) -> String? {
    let values = headers.values(for: name)
    return values.isEmpty ? nil : values.joined(separator: ", ")
  }
}
