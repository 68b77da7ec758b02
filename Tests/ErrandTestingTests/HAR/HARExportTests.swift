import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// A secret a request carries, and how the request carries it.
struct HARSecretCase: Sendable, CustomTestStringConvertible {
  var label: String
  var secret: String
  var endpoint: Endpoint<Data>
  var testDescription: String { label }

  static let all = [
    HARSecretCase(
      label: "a header the client's redaction names", secret: "sess-8c1f9e2d",
      endpoint: Endpoint<Data>(path: "echo", headers: ["X-Session": "sess-8c1f9e2d"])),
    HARSecretCase(
      label: "Authorization", secret: "tok-77aa01b2",
      endpoint: Endpoint<Data>(path: "echo", headers: ["Authorization": "Bearer tok-77aa01b2"])),
    HARSecretCase(
      label: "a query value the client's redaction names", secret: "qk-5b3e88c1",
      endpoint: Endpoint<Data>(
        path: "echo", query: [URLQueryItem(name: "sessionKey", value: "qk-5b3e88c1")])),
    HARSecretCase(
      label: "a JSON body field the client's redaction names", secret: "pin-90d1f3e4",
      endpoint: Endpoint<Data>(
        method: .post, path: "echo",
        body: .data(
          Data(#"{"name":"Rex","pin":"pin-90d1f3e4"}"#.utf8), contentType: "application/json"))),
    HARSecretCase(
      label: "a form field", secret: "pw-33ab12cd",
      endpoint: Endpoint<Data>(
        method: .post, path: "echo", body: .form([("user", "rex"), ("password", "pw-33ab12cd")]))),
    HARSecretCase(
      label: "a cookie", secret: "ck-41d2a9b0",
      endpoint: Endpoint<Data>(path: "echo", headers: ["Cookie": "session=ck-41d2a9b0"])),
  ]
}

@Suite(.timeLimit(.minutes(3))) struct HARExportTests {
  /// A client whose redaction names secrets of its own, as an app's would.
  static func client(_ transport: any Transport) -> APIClient {
    var configuration = APIClient.Configuration()
    configuration.redaction = Redaction.default.merging(
      Redaction(headers: ["X-Session"], queryParameters: ["sessionKey"], bodyFields: ["pin"]))
    return APIClient(baseURL: base, transport: transport, configuration: configuration)
  }

  /// A server that echoes everything it was sent: the URL, the headers and the body, in its body
  /// and in a header.
  static func echo() -> StubTransport {
    StubTransport { request in
      let headers = request.headers.fields.map { "\($0.name)=\($0.value)" }.joined(separator: ";")
      let echo =
        "\(request.url.absoluteString) \(headers) \(String(decoding: request.body ?? Data(), as: UTF8.self))"
      return .status(
        200, body: Data(echo.utf8),
        headers: [
          "Content-Type": "text/plain", "X-Echo": headers,
          "Location": request.url.absoluteString,
        ])
    }
  }

  @Test(arguments: HARSecretCase.all)
  func theJournalIsExportedWithEverySecretHidden(_ secretCase: HARSecretCase) async throws {
    let stub = Self.echo()
    let answer = try await Self.client(stub).response(for: secretCase.endpoint)
    #expect(utf8Text(answer.value).contains(secretCase.secret))  // the echo did carry it
    let har = await stub.har()
    let bytes = try har.encoded()
    #expect(!utf8Text(bytes).contains(secretCase.secret), "\(utf8Text(bytes))")
    let exchanges = await stub.exchanges
    for form in printedForms(of: har) + printedForms(of: exchanges) {
      #expect(!form.contains(secretCase.secret), "printed: \(form)")
    }
    #expect(exchanges.count == 1)
    #expect(exchanges.first?.response?.status == 200)
  }

  @Test func theJournalExportIsByteStableAndReplays() async throws {
    let stub = Self.echo()
    let client = Self.client(stub)
    for secretCase in HARSecretCase.all {
      _ = try await client.response(for: secretCase.endpoint)
    }
    let bytes = try await stub.har().encoded()
    let reread = try HAR(data: bytes)
    #expect(try reread.encoded() == bytes)
    #expect(reread.log.entries.count == HARSecretCase.all.count)
    let query = reread.log.entries[2].request
    #expect(query.url == "https://api.example.com/v1/echo?sessionKey=%3Credacted%3E")
    #expect(query.queryString == [HAR.QueryParameter(name: "sessionKey", value: "<redacted>")])
    // The redacted query value matches any value when the export is replayed.
    let replay = StubTransport()
    try await replay.on(har: reread)
    let replayed = try await client.response(
      for: Endpoint<Data>(
        path: "echo", query: [URLQueryItem(name: "sessionKey", value: "another")]))
    #expect(replayed.response.status == 200)
    _ = replay
  }

  @Test func answersThatFailedOrStreamedAreExportedForWhatTheyAre() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/offline", .error(URLError(.notConnectedToInternet)))
    await stub.on(.get, "/v1/feed", .chunks([Data("a".utf8), Data("b".utf8)]))
    let client = APIClient(baseURL: base, transport: stub)
    await #expect(throws: APIError.self) {
      _ = try await client.send(Endpoint<Data>(path: "offline"))
    }
    _ = try await client.send(Endpoint<Data>(path: "feed"))
    let har = await stub.har()
    #expect(har.log.entries.map(\.response.status) == [0, 200])
    #expect(har.log.entries[0].comment == "The stub threw URLError -1009.")
    #expect(har.log.entries[1].comment == "The body was streamed; the journal keeps the head only.")
    #expect(try HAR(data: har.encoded()).skippedEntries.map(\.index) == [0])
  }

  @Test func theJournalTimesAnswersOnTheStubsClock() async throws {
    let stub = StubTransport(clock: ImmediateClock())
    await stub.on(.get, "/v1/slow", .json(Dog(name: "Rex")).delayed(by: .milliseconds(1500)))
    _ = try await APIClient(baseURL: base, transport: stub).send(Endpoint<Data>(path: "slow"))
    let entry = try #require(await stub.har().log.entries.first)
    #expect(entry.timings.wait == 1500)
    #expect(entry.timings.receive == 0)
    #expect(entry.time == 1500)
  }

  @Test func theJournalKeepsThePhasesAndAddressAnAnswerReports() async throws {
    var reported = TransferMetrics()
    reported.domainLookupStart = .zero
    reported.domainLookupEnd = .milliseconds(3)
    reported.connectStart = .milliseconds(3)
    reported.connectEnd = .milliseconds(40)
    reported.secureConnectionStart = .milliseconds(10)
    reported.secureConnectionEnd = .milliseconds(40)
    reported.remoteAddress = "203.0.113.5"
    let stub = StubTransport(clock: ImmediateClock())
    await stub.on(
      .get, "/v1/dogs",
      .json([Dog(name: "Rex")]).delayed(by: .milliseconds(50)).withMetrics(reported))
    _ = try await APIClient(baseURL: base, transport: stub).send(Endpoint<Data>(path: "dogs"))
    let entry = try #require(await stub.har().log.entries.first)
    #expect(
      entry.timings == HAR.Timings(dns: 3, connect: 37, send: 0, wait: 50, receive: 0, ssl: 30))
    #expect(entry.time == 90)
    #expect(entry.serverIPAddress == "203.0.113.5")
  }

  @Test(arguments: CassetteTests.bodies)
  func aCassetteGoesToHARAndBackByteForByte(_ bodyCase: BodyCase) async throws {
    let file = temporaryCassette()
    let upstream = StubTransport { _ in
      .status(201, body: bodyCase.body, headers: ["Content-Type": bodyCase.contentType])
    }
    _ = try await CassetteTransport(url: file, mode: .all, upstream: upstream).send(
      HTTPRequest(
        method: .post, url: url("https://api.example.com/v1/upload?token=t0k-5e6f&page=2"),
        headers: ["Content-Type": bodyCase.contentType, "Authorization": "Bearer abcd-s3cret"],
        body: bodyCase.body.isEmpty ? nil : bodyCase.body))
    let first = try HAR(cassetteAt: file).encoded()
    let copy = temporaryCassette()
    try HAR(data: first).writeCassette(to: copy)
    let second = try HAR(cassetteAt: copy).encoded()
    #expect(first == second)
    #expect(
      try String(contentsOf: copy, encoding: .utf8) == String(contentsOf: file, encoding: .utf8))
    for secret in ["t0k-5e6f", "abcd-s3cret"] {
      #expect(!utf8Text(first).contains(secret))
    }
    let replayed = try await CassetteTransport(url: copy, mode: .none).send(
      HTTPRequest(
        method: .post, url: url("https://api.example.com/v1/upload?token=other&page=2")))
    #expect(replayed.status == 201)
    #expect(replayed.body == bodyCase.body)
  }
}
