import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Basic credentials (RFC 7617) and API keys: sent to endpoints that need authentication only,
/// encoded as the RFC says, hidden in every printed form.
@Suite(.timeLimit(.minutes(3))) struct BasicAndAPIKeyTests {
  static let secured = Endpoint<Data>(path: "me", requiresAuthentication: true)
  static let open = Endpoint<Data>(path: "open")

  static func client(_ stub: StubTransport, _ middleware: any Middleware) -> APIClient {
    APIClient(
      baseURL: URL(string: "https://api.example.com/v1")!, transport: stub,
      configuration: .init(middleware: [middleware]))
  }

  /// RFC 7617 §2's example, and §2.1's UTF-8 one (`test` / `123£`).
  @Test(arguments: [
    ("Aladdin", "open sesame", "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="),
    ("test", "123\u{A3}", "Basic dGVzdDoxMjPCow=="),
  ])
  func basicCredentialsAreEncodedAsTheRFCSays(
    username: String, password: String, header: String
  ) async throws {
    let stub = StubTransport { _ in .status(200) }
    let client = Self.client(
      stub, try BasicAuthenticationMiddleware(username: username, password: password))
    _ = try await client.send(Self.secured)
    _ = try await client.send(Self.open)
    let sent = await stub.requests.map { $0.headers["Authorization"] }
    #expect(sent == [header, nil])
  }

  @Test(arguments: [
    ("a:b", "p", "the user name holds a ':', which Basic cannot carry"),
    ("a\u{0}", "p", "the user name holds a control character"),
    ("a", "p\r\nX-Injected: 1", "the password holds a control character"),
  ])
  func credentialsBasicCannotCarryAreRefused(username: String, password: String, reason: String) {
    let error = #expect(throws: InvalidCredentialError.self) {
      _ = try BasicAuthenticationMiddleware(username: username, password: password)
    }
    #expect(error?.reason == reason)
    #expect(error.map { "\($0)" }?.contains("Injected") == false)
  }

  /// A key goes in its header or query parameter, to endpoints that need it only, and no printed
  /// form of the request shows it.
  @Test(arguments: [
    APIKeyMiddleware.Placement.header("X-Partner-Key"), .queryParameter("partner_key"),
  ])
  func anAPIKeyIsSentWhereAskedAndHidden(_ placement: APIKeyMiddleware.Placement) async throws {
    let key = "K3Y+with/odd=chars"
    let stub = StubTransport { _ in .status(200) }
    let middleware = APIKeyMiddleware(key: key, in: placement)
    let client = Self.client(stub, middleware)
    _ = try await client.send(Self.secured)
    _ = try await client.send(Self.open)
    let requests = await stub.requests
    let sent = try #require(requests.first)
    if placement == .header("X-Partner-Key") {
      #expect(sent.headers["X-Partner-Key"] == key)
    } else {
      let items = URLComponents(url: sent.url, resolvingAgainstBaseURL: true)?.queryItems
      #expect(items?.first { $0.name == "partner_key" }?.value == key)
    }
    #expect(requests.last?.url.absoluteString == "https://api.example.com/v1/open")
    #expect(requests.last?.headers["X-Partner-Key"] == nil)
    // What the transport was given holds the key, and none of its printed forms shows it.
    for text in printedForms(of: sent) + [sent.cURLDescription]
      + printedForms(of: middleware)
    {
      #expect(!text.contains("K3Y"), "\(text)")
    }
  }
}
