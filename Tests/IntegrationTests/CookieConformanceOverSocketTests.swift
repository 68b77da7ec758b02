import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The IETF http-state working group's cookie parser suite (the fixture
/// `cookies/http-state-parser.json`, sources in `Fixtures/cookies/SOURCE.md`) through a client
/// with a jar over a real socket, on every transport: each case's `Set-Cookie` fields come from
/// a loopback server, and the `Cookie` field the next request carries is what the jar gives
/// for the same fields stored by hand (which `CookieConformanceTests` checks against the suite).
/// Cases that send to another host than the one that set are left out: a loopback server has
/// one.
///
/// Where a transport cannot hand the jar the fields as sent, the expectation says so:
/// - `URLSessionTransport` gets them from `HTTPURLResponse`, which joins a response's
///   `Set-Cookie` fields with commas into one value, and `HTTPResponse` splits that value where a
///   comma starts a cookie; a field that itself holds `, name=` is split too (14 cases). Its
///   expectation is the jar given what that split hands over.
/// - A field holding a NUL byte fails the answer on every transport (the transfer refuses it).
/// - FoundationNetworking fails an answer with a header line whose value is blank (`Failed
///   writing header`): three cases whose only fields are blank, where nothing is stored anyway.
@Suite(.timeLimit(.minutes(3))) struct CookieConformanceOverSocketTests {
  struct Case: Decodable, Sendable, CustomTestStringConvertible {
    var test: String
    var received: [String]
    var sentTo: String?
    var testDescription: String { test }

    enum CodingKeys: String, CodingKey {
      case test, received
      case sentTo = "sent-to"
    }
  }

  static let suiteDate = Date(timeIntervalSince1970: 1_502_265_742)  // 2017-08-09T08:02:22Z

  /// The suite's cases whose second request goes to the host that set the cookies.
  static func cases() throws -> [Case] {
    try Fixtures.nearest().decode([Case].self, from: "cookies/http-state-parser.json").filter {
      $0.sentTo.map { $0.hasPrefix("/") } ?? true
    }
  }

  /// Cases whose answer a transport refuses, by name: every transport, or URLSession's.
  static let refusedEverywhere: Set<String> = ["DISABLED_CHROMIUM0022"]
  static let blankFieldsOnly: Set<String> = ["0026", "0028", "CHROMIUM0018"]

  @Test func theSuiteGoesOverTheSocketButForTheCasesOfAnotherHost() throws {
    let cases = try Self.cases()
    #expect(cases.count == 178)
    #expect(Self.refusedEverywhere.union(Self.blankFieldsOnly).isSubset(of: Set(cases.map(\.test))))
  }

  /// The fields the transport hands the jar: as sent, or as `HTTPURLResponse` joins them and
  /// `HTTPResponse` splits them again.
  static func handedOver(_ fields: [String], by transport: TransportKind) throws -> [String] {
    guard transport == .urlSession else { return fields }
    let joined = try #require(
      HTTPURLResponse(
        url: URL(string: "http://127.0.0.1/")!, statusCode: 200, httpVersion: "HTTP/1.1",
        headerFields: ["Set-Cookie": fields.joined(separator: ", ")]))
    return HTTPResponse(joined, body: Data()).headers.values(for: "Set-Cookie")
  }

  /// One server and one transport per transport kind, the cases one after another: a server
  /// and a transport per case, all started at once, would hold hundreds of threads and sockets
  /// while every other suite runs beside them.
  @Test(arguments: TransportKind.allCases)
  func theJarOverASocketSendsWhatItSendsByHand(_ transport: TransportKind) async throws {
    let cases = try Self.cases()
    let received = Dictionary(
      cases.map { ($0.test.lowercased(), $0.received) }, uniquingKeysWith: { first, _ in first })
    let server = try LoopbackServer { request in
      guard request.path == "/cookie-parser" else {
        return .text(request.headers["Cookie"] ?? "")
      }
      let name = String(request.target.drop { $0 != "?" }.dropFirst())
      var answer = ScriptedResponse.text("set")
      answer.headers += (received[name] ?? []).map { ("Set-Cookie", $0) }
      return answer
    }
    defer { server.stop() }
    let shared = transport.make()
    var checked = 0
    for check in cases {
      try await Self.check(check, transport, shared, server)
      checked += 1
    }
    #expect(checked == 178)
  }

  /// One case: its fields set through the client's jar, then the `Cookie` field of the next
  /// request compared with what a jar given the same fields by hand sends.
  static func check(
    _ check: Case, _ transport: TransportKind, _ shared: any Transport, _ server: LoopbackServer
  ) async throws {
    let name = check.test.lowercased()
    let setter = try #require(
      URL(string: "cookie-parser?\(name)", relativeTo: server.baseURL)?.absoluteURL)
    let target = try #require(
      URL(string: check.sentTo ?? "/cookie-parser-result?\(name)", relativeTo: setter)?.absoluteURL)
    let byHand = CookieJar(now: { Self.suiteDate })
    byHand.store(try Self.handedOver(check.received, by: transport), from: setter)
    var configuration = APIClient.Configuration()
    configuration.cookieJar = CookieJar(now: { Self.suiteDate })
    let client = APIClient(baseURL: server.baseURL, transport: shared, configuration: configuration)
    let refused =
      Self.refusedEverywhere.contains(check.test)
      || (transport == .urlSession && Self.blankFieldsOnly.contains(check.test))
    do {
      _ = try await client.send(Endpoint<Data>(url: setter))
      #expect(
        !refused || Self.blankFieldsOnly.contains(check.test), "\(check.test): the answer was read")
    } catch let error as APIError {
      #expect(refused, "\(check.test): \(error)")
      #expect(error.kind == .transport, "\(check.test)")
      #expect(configuration.cookieJar?.allCookies.isEmpty == true, "\(check.test)")
      return
    }
    let sent = try await client.send(Endpoint<String>(url: target))
    #expect(
      sent == byHand.cookieHeader(for: target) ?? "",
      "\(check.test): received \(check.received)")
  }
}
