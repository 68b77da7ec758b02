import Errand
import ErrandStubs
import Foundation
import TestSupport
import Testing

/// A server that quotes a secret of the request in a response header (`WWW-Authenticate`'s
/// `error_description`, a debugging echo): neither a log line nor a listener's `responseHead`
/// may print it, as an ``APIError`` does not.
@Suite(.timeLimit(.minutes(2))) struct EchoedHeaderSecretsTests {
  /// Where the secret rides, and how the client is told it is one.
  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    /// The client's default headers.
    var headers: HTTPHeaders
    /// Whether the header is added by a middleware that names it in the request's own
    /// ``HTTPRequest/redaction`` (the client's redaction does not know it).
    var addedByMiddleware = false
    var secret: String
    var testDescription: String { name }
  }

  static let rows = [
    Row(
      name: "a bearer token", headers: ["Authorization": "Bearer tok-echo-5d1e"],
      secret: "tok-echo-5d1e"),
    Row(name: "an API key", headers: ["X-API-Key": "key-echo-77a0"], secret: "key-echo-77a0"),
    Row(
      name: "a header only the request's redaction names", headers: [:],
      addedByMiddleware: true, secret: TenantSecret.value),
  ]

  /// Adds a tenant secret the client's redaction does not know, named in the request's own.
  struct TenantSecret: Middleware {
    static let value = "tenant-echo-3b9c"

    func intercept(
      _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
      var request = request
      request.headers["X-Tenant-Secret"] = Self.value
      request.redaction.headers.insert("X-Tenant-Secret")
      return try await next(request)
    }
  }

  /// A stub that answers 401 quoting every request header's value in two response headers.
  static func echoingStub() -> StubTransport {
    StubTransport { request in
      let quoted = request.headers.map(\.value).joined(separator: " ")
      return .status(
        401,
        headers: [
          "WWW-Authenticate": "Bearer error=\"invalid_token\", error_description=\"\(quoted)\"",
          "X-Debug-Echo": quoted,
        ])
    }
  }

  static let endpoint = Endpoint<Data>(path: "me", decoding: .data)

  @Test(arguments: rows)
  func aLogLineNeverPrintsAnEchoedSecret(_ row: Row) async throws {
    let lines = Locked<[LogEvent]>([])
    let client = APIClient(
      baseURL: base, transport: Self.echoingStub(),
      configuration: APIClient.Configuration(
        headers: row.headers,
        middleware: (row.addedByMiddleware ? [TenantSecret()] : [])
          + [LoggingMiddleware { event in lines.withLock { $0.append(event) } }]))
    await #expect(throws: APIError.self) { try await client.send(Self.endpoint) }
    let logged = lines.withLock { $0 }
    let received = try #require(logged.first { $0.kind == .responseReceived })
    // The echo is there, scrubbed: the test would pass vacuously without it.
    #expect(received.headers["X-Debug-Echo"]?.contains(HTTPHeaders.redactedValue) == true)
    for form in logged.flatMap({ printedForms(of: $0 as Any) }) {
      #expect(!form.contains(row.secret), "\(form)")
    }
  }

  @Test(arguments: rows)
  func aListenerNeverHearsAnEchoedSecret(_ row: Row) async throws {
    let listener = RecordingListener()
    let client = APIClient(
      baseURL: base, transport: Self.echoingStub(),
      configuration: APIClient.Configuration(
        headers: row.headers, middleware: row.addedByMiddleware ? [TenantSecret()] : [],
        eventListeners: [listener]))
    await #expect(throws: APIError.self) { try await client.send(Self.endpoint) }
    let events = await listener.eventsOfOneCall()
    let head = try #require(
      events.lazy.compactMap { event -> HTTPHeaders? in
        if case .responseHead(_, let headers) = event.kind { return headers }
        return nil
      }.first)
    #expect(head["X-Debug-Echo"]?.contains(HTTPHeaders.redactedValue) == true)
    for form in printedForms(of: events) {
      #expect(!form.contains(row.secret), "\(form)")
    }
  }
}
