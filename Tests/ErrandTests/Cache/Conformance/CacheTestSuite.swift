import ErrandTesting
import Foundation

/// The HTTP caching test suite behind https://cache-tests.fyi
/// (https://github.com/http-tests/cache-tests, at the commit `Fixtures/cache-tests/tests.json`
/// names), as `scripts/convert-cache-tests.mjs` writes it: every suite and test, each test a list
/// of requests with what the suite's server answers and what its client then checks.
struct CacheTestSuite: Decodable, Sendable {
  /// Where the fixture comes from.
  struct Source: Decodable, Sendable {
    var repository: String
    var commit: String
    var committed: String
  }

  /// A suite: one feature's tests.
  struct Feature: Decodable, Sendable {
    var id: String
    var name: String
    var tests: [CacheTest]
  }

  var source: Source
  var suites: [Feature]

  /// Every test of every suite, in the suite's order.
  var tests: [CacheTest] { suites.flatMap(\.tests) }

  /// The suite, read from `Fixtures/cache-tests/tests.json`.
  static func load() throws -> CacheTestSuite {
    try Fixtures.nearest().decode(
      CacheTestSuite.self, from: "cache-tests/tests.json", decoder: decoder)
  }

  /// Reads the suite's own member names (`depends_on`, `response_headers`, ...).
  static var decoder: JSONDecoder {
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    return decoder
  }
}

/// One test of the suite.
struct CacheTest: Decodable, Sendable {
  enum Kind: String, Decodable, Sendable {
    /// A conformance test for a requirement of the standard.
    case required
    /// Whether the cache behaves optimally (stores and reuses what it may).
    case optimal
    /// Information on how caches behave; no right answer.
    case check
  }

  var id: String
  var name: String
  var kind: Kind
  var dependsOn: [String]
  var browserOnly: Bool
  var browserSkip: Bool
  var cdnOnly: Bool
  var requests: [CacheTestRequest]
}

/// A header the suite's server sends or its client adds: a value, or a date `delta` seconds from
/// the server's now; the server's own headers are compared with what the client received unless
/// `check` is false.
struct CacheTestHeader: Decodable, Sendable {
  var name: String
  var value: String?
  var delta: Int?
  var check: Bool?
}

/// A response header the client expects: present, equal to a value (or a magic date), greater
/// than a number, or the same as another header.
struct ExpectedResponseHeader: Decodable, Sendable {
  enum Test: String, Decodable, Sendable {
    case present, equals, greater, same
  }

  var name: String
  var test: Test
  var value: String?
  var delta: Int?
  var number: Int?
  var other: String?
}

/// A header expected absent, or (with a value) absent or without that value.
struct MissingHeader: Decodable, Sendable {
  var name: String
  var value: String?
}

/// One request of a test, with the suite's member names.
struct CacheTestRequest: Decodable, Sendable {
  enum ExpectedType: String, Decodable, Sendable {
    case cached
    case notCached = "not_cached"
    case lmValidated = "lm_validated"
    case etagValidated = "etag_validated"
  }

  /// An interim (`1xx`) response the server sends first, or the client expects.
  struct Interim: Decodable, Sendable {
    var status: Int
    var headers: [CacheTestHeader]
  }

  var requestMethod: String?
  var requestHeaders: [CacheTestHeader]?
  var requestBody: String?
  var queryArg: String?
  var filename: String?
  /// The Fetch cache mode (`no-cache`), which a browser turns into request headers.
  var cache: String?
  var redirect: String?
  var pauseAfter: Bool?
  var disconnect: Bool?
  var magicLocations: Bool?
  var magicIms: Bool?
  var rfc850date: [String]?
  var responseStatus: Int?
  var responseReason: String?
  var responseHeaders: [CacheTestHeader]?
  /// The body; `null` in the suite (a `204`) means the default, which such a status never sends.
  var responseBody: String?
  var interimResponses: [Interim]?
  var responsePause: Int?
  var checkBody: Bool?
  var expectedType: ExpectedType?
  var expectedMethod: String?
  /// The status the client expects; `hasExpectedStatus` tells a `null` (check nothing) from no
  /// member at all (check the default).
  var expectedStatus: Int?
  var hasExpectedStatus = false
  var expectedRequestHeaders: [MissingHeader]?
  var expectedRequestHeadersMissing: [MissingHeader]?
  var expectedResponseHeaders: [ExpectedResponseHeader]?
  var expectedResponseHeadersMissing: [MissingHeader]?
  /// The body the client expects; `hasExpectedResponseText` tells a `null` (check nothing) from
  /// no member at all.
  var expectedResponseText: String?
  var hasExpectedResponseText = false
  /// Whether the member `response_body` is there (a `null` one included).
  var hasResponseBody = false
  var expectedInterimResponses: [Interim]?
  var setup: Bool?
  var setupTests: [String]?

  enum CodingKeys: String, CodingKey {
    case requestMethod, requestHeaders, requestBody, queryArg, filename, cache, redirect
    case pauseAfter, disconnect, magicLocations, magicIms, rfc850date, responseStatus
    case responseReason, responseHeaders, responseBody, interimResponses, responsePause
    case checkBody, expectedType, expectedMethod, expectedStatus, expectedRequestHeaders
    case expectedRequestHeadersMissing, expectedResponseHeaders, expectedResponseHeadersMissing
    case expectedResponseText, expectedInterimResponses, setup, setupTests
  }

  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    func decode<T: Decodable>(_ key: CodingKeys) throws -> T? {
      try container.decodeIfPresent(T.self, forKey: key)
    }
    requestMethod = try decode(.requestMethod)
    requestHeaders = try decode(.requestHeaders)
    requestBody = try decode(.requestBody)
    queryArg = try decode(.queryArg)
    filename = try decode(.filename)
    cache = try decode(.cache)
    redirect = try decode(.redirect)
    pauseAfter = try decode(.pauseAfter)
    disconnect = try decode(.disconnect)
    magicLocations = try decode(.magicLocations)
    magicIms = try decode(.magicIms)
    rfc850date = try decode(.rfc850date)
    responseStatus = try decode(.responseStatus)
    responseReason = try decode(.responseReason)
    responseHeaders = try decode(.responseHeaders)
    responseBody = try decode(.responseBody)
    hasResponseBody = container.contains(.responseBody)
    interimResponses = try decode(.interimResponses)
    responsePause = try decode(.responsePause)
    checkBody = try decode(.checkBody)
    expectedType = try decode(.expectedType)
    expectedMethod = try decode(.expectedMethod)
    expectedStatus = try decode(.expectedStatus)
    hasExpectedStatus = container.contains(.expectedStatus)
    expectedRequestHeaders = try decode(.expectedRequestHeaders)
    expectedRequestHeadersMissing = try decode(.expectedRequestHeadersMissing)
    expectedResponseHeaders = try decode(.expectedResponseHeaders)
    expectedResponseHeadersMissing = try decode(.expectedResponseHeadersMissing)
    expectedResponseText = try decode(.expectedResponseText)
    hasExpectedResponseText = container.contains(.expectedResponseText)
    expectedInterimResponses = try decode(.expectedInterimResponses)
    setup = try decode(.setup)
    setupTests = try decode(.setupTests)
  }

  /// Whether a failed check of `member` (the suite's name for it) is a setup failure.
  func isSetup(_ member: String) -> Bool {
    setup == true || (setupTests ?? []).contains(member)
  }
}
