import Errand
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// The OAuth 2 provider against a token endpoint on a real socket (127.0.0.1), through each
/// production transport: the form and Basic credentials as sent on the wire, the rotated refresh
/// token saved, `invalid_grant` told apart.
@Suite(.timeLimit(.minutes(3))) struct OAuth2OverSocketTests {
  @Test(arguments: TransportKind.allCases)
  func aRefreshTokenGrantOverASocket(kind: TransportKind) async throws {
    let server = try LoopbackServer { request in
      let form = String(decoding: request.body, as: UTF8.self)
      guard form.contains("refresh_token=refresh-0") else {
        return .json(#"{"error":"invalid_grant","error_description":"used"}"#, status: 400)
      }
      return .json(
        #"{"access_token":"access-1","token_type":"Bearer","expires_in":3600,"#
          + #""refresh_token":"refresh-1"}"#)
    }
    defer { server.stop() }
    let storage = InMemoryTokenStorage(StoredTokens(refreshToken: "refresh-0"))
    let provider = try OAuth2TokenProvider(
      tokenEndpoint: server.url("/oauth/token"), grant: .refreshToken(scope: "dogs read"),
      client: .basic(clientID: "dog patch", secret: "s:cr t"), storage: storage,
      transport: kind.make())

    let token = try await provider.refreshAccessToken()
    #expect(token.value == "access-1" && token.lifetime == .seconds(3600))
    #expect(try await storage.load()?.refreshToken == "refresh-1")
    let sent = try await server.takeRequest()
    #expect(sent.method == "POST" && sent.path == "/oauth/token")
    #expect(sent.headers["content-type"] == "application/x-www-form-urlencoded")
    #expect(
      sent.headers["authorization"]
        == "Basic " + Data("dog+patch:s%3Acr+t".utf8).base64EncodedString())
    #expect(
      String(decoding: sent.body, as: UTF8.self)
        == "grant_type=refresh_token&refresh_token=refresh-0&scope=dogs+read")

    // refresh-1 is not what this server accepts: invalid_grant, and the storage is emptied.
    let error = await #expect(throws: OAuth2Error.self) { try await provider.refreshAccessToken() }
    #expect(error?.isInvalidGrant == true && error?.message == "used")
    #expect(try await storage.load() == nil)
  }
}
