import Errand
import ErrandStubs
import Foundation
import TestSupport
import Testing

/// `SigningMiddleware` signs the request as the transport sends it: after every other
/// middleware and the cache, again for each exchange, its signature hidden and kept home.
@Suite(.timeLimit(.minutes(3))) struct SigningMiddlewareTests {
  /// HMAC-SHA256 over the method, path, time, every header but the signature's, and the body.
  struct PartnerSigner: RequestSigner {
    let secret = Data("partner-s3cret".utf8)
    func sign(_ request: HTTPRequest, at date: Date) async throws -> HTTPRequest {
      var request = request
      let timestamp = String(Int(date.timeIntervalSince1970))
      let headers = request.headers.fields.map { "\($0.name.lowercased()):\($0.value)" }.sorted()
      let canonical = [
        request.method.rawValue, request.url.path(percentEncoded: true), timestamp,
        headers.joined(separator: ","), try RequestSigning.sha256Hex(of: request),
      ].joined(separator: "\n")
      let signature = RequestSigning.hmacSHA256(key: secret, Data(canonical.utf8))
      request.headers["X-Timestamp"] = timestamp
      request.headers["X-Signature"] = signature.base64EncodedString()
      return request
    }
  }

  struct AddsHeader: Middleware {
    func intercept(
      _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
      var request = request
      request.headers["X-Tenant"] = "t1"
      return try await next(request)
    }
  }

  /// A clock of dates that moves a second each time it is read.
  static func ticking() -> @Sendable () -> Date {
    let seconds = Locked(1_700_000_000.0)
    return {
      seconds.withLock {
        $0 += 1
        return Date(timeIntervalSince1970: $0)
      }
    }
  }

  static func client(_ stub: StubTransport, _ middleware: [any Middleware]) -> APIClient {
    APIClient(
      baseURL: URL(string: "https://api.example.com/v1/")!, transport: stub,
      configuration: APIClient.Configuration(middleware: middleware))
  }

  /// Whether `request` carries the signature `PartnerSigner` makes of it.
  static func isSigned(_ request: HTTPRequest) async throws -> Bool {
    var unsigned = request
    unsigned.headers["X-Signature"] = nil
    unsigned.headers["X-Timestamp"] = nil
    let timestamp = try #require(request.headers["X-Timestamp"].flatMap(Double.init))
    let expected = try await PartnerSigner().sign(
      unsigned, at: Date(timeIntervalSince1970: timestamp))
    return expected.headers["X-Signature"] == request.headers["X-Signature"]
  }

  @Test(arguments: [false, true])
  func theSignatureCoversWhatTheOtherMiddlewareAddWhateverTheOrder(signerFirst: Bool)
    async throws
  {
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs", .status(200))
    let signing = SigningMiddleware(PartnerSigner(), now: Self.ticking())
    let chain: [any Middleware] = signerFirst ? [signing, AddsHeader()] : [AddsHeader(), signing]
    _ = try await Self.client(stub, chain).response(for: Endpoint<Data>(path: "dogs"))
    let sent = try #require(await stub.requests.first)
    #expect(sent.headers["X-Tenant"] == "t1")
    #expect(try await Self.isSigned(sent))
  }

  @Test func theCacheKeysTheRequestUnsignedAndEveryExchangeIsSignedAnew() async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/dogs",
      .sequence([
        .status(503),
        .status(200, body: Data("rex".utf8), headers: ["Cache-Control": "max-age=600"]),
      ]))
    let cache = CachingMiddleware(cache: HTTPCache(now: { Date() }))
    let retry = RetryMiddleware(
      policy: RetryPolicy(maxAttempts: 2, baseDelay: .zero, jitter: .none))
    let client = Self.client(
      stub, [SigningMiddleware(PartnerSigner(), now: Self.ticking()), cache, retry])
    #expect(try await client.response(for: Endpoint<Data>(path: "dogs")).value == Data("rex".utf8))
    // From the cache, though the signature would differ: it is not part of what is keyed.
    #expect(try await client.response(for: Endpoint<Data>(path: "dogs")).value == Data("rex".utf8))
    let requests = await stub.requests
    #expect(requests.count == 2)
    #expect(Set(requests.compactMap { $0.headers["X-Timestamp"] }).count == 2)
    for request in requests {
      #expect(try await Self.isSigned(request))
    }
  }

  @Test func theSignatureIsHiddenInEveryPrintedFormAndStaysAtItsOrigin() async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      .get, "/v1/dogs", .status(302, headers: ["Location": "https://elsewhere.example.net/dogs"]))
    await stub.on(.get, "/dogs", .status(200))
    let client = Self.client(stub, [SigningMiddleware(PartnerSigner(), now: Self.ticking())])
    _ = try await client.response(for: Endpoint<Data>(path: "dogs"))
    let requests = await stub.requests
    let signed = try #require(requests.first)
    let signature = try #require(signed.headers["X-Signature"])
    #expect(signed.redaction.hidesHeader("X-Signature"))
    for form in [String(describing: signed), String(reflecting: signed), signed.cURLDescription] {
      #expect(!form.contains(signature), "\(form)")
    }
    #expect(requests.last?.url.host == "elsewhere.example.net")
    #expect(requests.last?.headers["X-Signature"] == nil)
  }
}
