import Errand
import ErrandTesting
import Foundation
import Testing

/// A stub made with the trust policy and connection options an app gives its real transport:
/// the options kept for the test and checked as a real transport checks them, and the answers
/// of a pinning failure and of a server that wants a client certificate.
@Suite(.timeLimit(.minutes(3))) struct StubTrustTests {
  static let current = Data(repeating: 1, count: 32).base64EncodedString()
  static let backup = Data(repeating: 2, count: 32).base64EncodedString()
  static let base = URL(string: "https://api.example.com/v1")!

  static let trust = TrustPolicy(pins: [
    .init(hosts: ["api.example.com"], sha256: [current, "sha256//" + backup])
  ])

  @Test func theStubKeepsTheOptionsItWasMadeWith() throws {
    let connection = ConnectionOptions(httpVersion: .http2)
    let stub = try StubTransport(trust: Self.trust, connection: connection)
    #expect(stub.trust == Self.trust)
    #expect(stub.connection == connection)
    #expect(StubTransport().trust == nil)
    #expect(StubTransport().connection == nil)
  }

  /// App code that handles a pinning failure sees what a real transport throws: the host and
  /// the pins expected, as `APIError.transport`.
  @Test func aPinMismatchNamesTheHostAndThePoliciesPins() async throws {
    let stub = try StubTransport(trust: Self.trust)
    await stub.on(.get, "/v1/me", .pinMismatch)
    let client = APIClient(baseURL: Self.base, transport: stub)
    let error = await #expect(throws: APIError.self) {
      try await client.send(Endpoint<Data>(path: "me"))
    }
    guard case .transport(let underlying) = error else {
      Issue.record("expected a transport error, got \(String(describing: error))")
      return
    }
    #expect(
      underlying as? PinMismatchError
        == PinMismatchError(host: "api.example.com", expected: [Self.current, Self.backup]))
  }

  /// A stub without a policy names no pins; a handler can answer with a mismatch too.
  @Test func aStubWithoutAPolicyNamesNoPins() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/me", .handler { _, _ in .pinMismatch })
    let error = await #expect(throws: APIError.self) {
      try await APIClient(baseURL: Self.base, transport: stub).send(Endpoint<Data>(path: "me"))
    }
    #expect(
      error?.underlyingError as? PinMismatchError
        == PinMismatchError(host: "api.example.com", expected: []))
  }

  /// A pinning failure is never retried: the retry middleware sends nothing more.
  @Test func aPinMismatchIsNotRetried() async throws {
    let stub = try StubTransport(trust: Self.trust)
    await stub.on(.get, "/v1/me", .sequence([.pinMismatch, .json(["ok": true])]))
    let client = APIClient(
      baseURL: Self.base, transport: stub,
      configuration: .init(middleware: [RetryMiddleware(clock: ImmediateClock())]))
    await #expect(throws: APIError.self) { try await client.send(Endpoint<Data>(path: "me")) }
    #expect(await stub.requests.count == 1)
  }

  @Test func aServerThatWantsAClientCertificateIsReportedAsURLSessionDoes() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/me", .clientCertificateRequired)
    let error = await #expect(throws: APIError.self) {
      try await APIClient(baseURL: Self.base, transport: stub).send(Endpoint<Data>(path: "me"))
    }
    #expect(error?.urlError?.code == .clientCertificateRequired)
  }

  /// What a real transport refuses when it is made, the stub refuses too.
  @Test(arguments: [
    (TrustPolicy(pins: [.init(hosts: ["api.example.com"], sha256: ["abc"])]), ConnectionOptions()),
    (TrustPolicy(), ConnectionOptions(proxy: .init(host: "bad host", port: 8080))),
    (
      TrustPolicy(
        certificateAuthorities: .adding([.file(URL(fileURLWithPath: "/nonexistent.pem"))])),
      ConnectionOptions()
    ),
  ])
  func whatARealTransportRefusesTheStubRefuses(_ trust: TrustPolicy, connection: ConnectionOptions)
  {
    #expect(throws: InvalidConnectionOption.self) {
      _ = try StubTransport(trust: trust, connection: connection)
    }
  }
}
