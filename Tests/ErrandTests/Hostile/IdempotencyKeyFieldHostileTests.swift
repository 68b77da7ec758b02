import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Probes of the `Idempotency-Key` field as an attacker would write it: a fixed key that would
/// split the header (CR/LF), smuggle bytes (NUL, DEL, non-ASCII) or break the quoting, and keys
/// on methods that must not carry one, on every kind of call.
@Suite(.timeLimit(.minutes(3))) struct IdempotencyKeyFieldHostileTests {
  static func client(_ stub: StubTransport, passes: CountsPasses = CountsPasses()) -> APIClient {
    APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(timeout: nil, middleware: [passes]))
  }

  /// A fixed key that a Structured Field String cannot carry is refused before anything runs:
  /// no middleware, no request, no listed call; the message shows the key escaped, never a raw
  /// line break.
  @Test(arguments: [
    "a\r\nX-Evil: 1", "line\nfeed", "cr\rhere", "tab\there", "nul\u{0}", "del\u{7F}", "caf\u{E9}",
    "emoji \u{1F642}", "",
  ])
  func aKeyThatCannotBeSentIsRefused(key: String) async throws {
    let stub = StubTransport()
    await stub.on(.any, .status(201))
    let passes = CountsPasses()
    let client = Self.client(stub, passes: passes)
    let error = await #expect(throws: APIError.self) {
      try await client.send(
        Endpoint<Void>(method: .post, path: "orders").withIdempotencyKey(.fixed(key)))
    }
    #expect(error?.kind == .invalidRequest)
    let message = error.map { "\($0)" } ?? ""
    #expect(!message.contains("\r") && !message.contains("\n"))
    #expect(passes.passes == 0)
    #expect(await stub.requests.isEmpty)
    #expect(client.inFlight.isEmpty)
  }

  /// Quotes and backslashes in a fixed key are escaped as RFC 8941 says, so the value stays
  /// one string, and passes the header check every transport makes.
  @Test(arguments: [
    (#"a"b"#, #""a\"b""#), (#"a\b"#, #""a\\b""#), (#"\""#, #""\\\"""#),
    (" padded ", #"" padded ""#),
    (#"x", "y"#, #""x\", \"y""#),
  ])
  func quotesAndBackslashesStayInsideTheString(key: String, sent: String) async throws {
    let stub = StubTransport()
    await stub.on(.any, .status(201))
    try await Self.client(stub).send(
      Endpoint<Void>(method: .post, path: "orders").withIdempotencyKey(.fixed(key)))
    let values = await stub.requests.map { $0.headers.values(for: "Idempotency-Key") }
    // The stub checks every request as Errand's transports do: it got one, so it passed.
    #expect(values == [[sent]])
  }

  /// A key on a safe method is refused on every kind of call, before anything is sent.
  @Test(arguments: ["GET", "HEAD", "OPTIONS", "TRACE"] as [HTTPMethod], CallKind.allCases)
  func aKeyOnASafeMethodIsRefused(method: HTTPMethod, kind: CallKind) async throws {
    let stub = StubTransport()
    await stub.on(.any, .events([ServerSentEvent(data: "1")]))
    let passes = CountsPasses()
    let client = Self.client(stub, passes: passes)
    var endpoint = Endpoint<Data>(path: "feed", decoding: .data).withIdempotencyKey()
    endpoint.method = method
    let error = await #expect(throws: APIError.self) { try await kind.make(endpoint, on: client) }
    #expect(error?.kind == .invalidRequest)
    #expect(passes.passes == 0)
    #expect(await stub.requests.isEmpty)
    #expect(client.inFlight.isEmpty)
  }
}
