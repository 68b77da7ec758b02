import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// A `Link` to another origin is followed without the credentials the first page carried,
/// whoever supplied them: the endpoint, the client's headers or an authentication middleware.
@Suite(.timeLimit(.minutes(3))) struct PaginationCredentialTests {
  struct Tokens: TokenProvider {
    func currentToken() async throws -> String? { "t0k3n" }
    func refreshToken() async throws -> String { "t0k3n" }
  }

  /// Signs every request with a secret header of its own, wherever it goes.
  struct Signs: Middleware {
    func intercept(
      _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
      var request = request
      request.headers["X-Auth-Token"] = "middleware-s3cret"
      return try await next(request)
    }
  }

  static func client(_ stub: StubTransport, trusting hosts: Set<String> = []) -> APIClient {
    var configuration = APIClient.Configuration(
      headers: ["X-API-Key": "client-k3y", "PRIVATE-TOKEN": "glpat-client"],
      middleware: [BearerAuthenticationMiddleware(provider: Tokens()), Signs()])
    configuration.redaction.headers.formUnion(["private-token", "dpop"])
    configuration.trustedHosts = hosts
    return APIClient(baseURL: base, transport: stub, configuration: configuration)
  }

  static let first = Endpoint<[Dog]>(
    path: "dogs",
    headers: [
      "Authorization": "Bearer endpoint-token", "X-API-Key": "endpoint-k3y", "DPoP": "proof",
      "X-Trace": "abc",
    ], requiresAuthentication: true)

  static let secretNames = ["Authorization", "X-API-Key", "PRIVATE-TOKEN", "DPoP", "X-Auth-Token"]

  /// A stub whose first page links to `next`, which answers with no further link.
  static func stub(next: String) async -> StubTransport {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/dogs",
      .status(200, body: Data("[]".utf8), headers: ["Link": "<\(next)>; rel=next"]))
    await stub.on(.any, .status(200, body: Data("[]".utf8)))
    return stub
  }

  @Test(arguments: [
    "https://evil.example/steal", "http://api.example.com/v1/dogs?page=2",
    "https://api.example.com:8443/v1/dogs?page=2",
  ])
  func aNextPageAtAnotherOriginGetsNoSecrets(next: String) async throws {
    let stub = await Self.stub(next: next)
    var pages = 0
    for try await _ in Self.client(stub).pages(Self.first) { pages += 1 }
    #expect(pages == 2)
    let sent = await stub.requests(matching: .any)
    try #require(sent.count == 2)
    for name in Self.secretNames {
      #expect(sent[0].headers[name] != nil, "the first page carries \(name)")
      #expect(sent[1].headers[name] == nil, "\(name) went to \(next)")
    }
    #expect(sent[1].url.absoluteString == next)
    // The server chose that origin: only headers safe anywhere go, whoever set them.
    #expect(sent[0].headers["X-Trace"] == "abc")
    #expect(sent[1].headers["X-Trace"] == nil)
    #expect(sent[1].headers["Accept"] == sent[0].headers["Accept"])
  }

  @Test func aNextPageAtTheSameOriginKeepsThem() async throws {
    let stub = await Self.stub(next: "https://api.example.com/v1/dogs?page=2")
    for try await _ in Self.client(stub).pages(Self.first) {}
    let sent = await stub.requests(matching: .any)
    try #require(sent.count == 2)
    #expect(sent[1].headers["Authorization"] == "Bearer t0k3n")  // the middleware's, as on page 1
    #expect(sent[1].headers["X-API-Key"] == "endpoint-k3y")
    #expect(sent[1].headers["PRIVATE-TOKEN"] == "glpat-client")
    #expect(sent[1].headers["DPoP"] == "proof")
    #expect(sent[1].headers["X-Auth-Token"] == "middleware-s3cret")
  }

  @Test func aTrustedHostGetsThem() async throws {
    let stub = await Self.stub(next: "https://cdn.example.net/dogs?page=2")
    for try await _ in Self.client(stub, trusting: ["CDN.example.net"]).pages(Self.first) {}
    let sent = await stub.requests(matching: .any)
    try #require(sent.count == 2)
    #expect(sent[1].headers["Authorization"] == "Bearer t0k3n")
    #expect(sent[1].headers["X-API-Key"] == "endpoint-k3y")
    #expect(sent[1].headers["PRIVATE-TOKEN"] == "glpat-client")
  }

  @Test func anAbsoluteURLElsewhereGetsNoneOfTheClientsSecretsTheAppNamed() async throws {
    let stub = StubTransport { _ in .status(200) }
    let url = try #require(URL(string: "https://uploads.example.net/put"))
    _ = try await Self.client(stub).send(Endpoint<Data>(url: url, decoding: .data))
    let sent = try await stub.nextRequest()
    #expect(sent.headers["PRIVATE-TOKEN"] == nil)
    #expect(sent.headers["X-API-Key"] == nil)
    #expect(sent.redaction.hidesHeader("private-token"))
  }

  @Test func aNextLinkThatCannotBeRequestedEndsAfterThePageThatNamedIt() async throws {
    let stub = await Self.stub(next: "ftp://files.example.com/dogs?page=2")
    var iterator = Self.client(stub).pages(Self.first).makeAsyncIterator()
    let page = try await iterator.next()
    #expect(page?.request.url.path == "/v1/dogs")
    let error = await #expect(throws: APIError.self) { _ = try await iterator.next() }
    #expect(error?.kind == .invalidRequest)
    #expect(error?.invalidRequestReason?.contains("http or https") == true)
    #expect(try await iterator.next() == nil)
    #expect(await stub.requests(matching: .any).count == 1)
  }
}
