import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// Round six, follow-up: the configuration's user agent on a redirect to another origin over
/// real transports: left behind when `crossOriginHeaders` no longer names it, carried when it
/// does (the default).
@Suite(.timeLimit(.minutes(2))) struct RoundSixFollowUpUserAgentHostileTests {
  static let agent = "Tenant-R6F-int/7.2"

  @Test(arguments: TransportKind.allCases, [false, true])
  func theUserAgentCrossesARedirectOnlyWhenListed(_ transport: TransportKind, listed: Bool)
    async throws
  {
    let other = try LoopbackServer { _ in .text("elsewhere") }
    defer { other.stop() }
    let server = try LoopbackServer { _ in .redirect(to: other.url("/x")) }
    defer { server.stop() }
    var configuration = APIClient.Configuration()
    configuration.userAgent = Self.agent
    if !listed { configuration.crossOriginHeaders.remove("user-agent") }
    let client = transport.client(server.baseURL, configuration: configuration)
    #expect(try await client.send(Endpoint<String>(path: "start")) == "elsewhere")
    #expect(server.requests.first?.headers["user-agent"] == Self.agent)
    let received = try #require(other.requests.first)
    if listed {
      #expect(received.headers["user-agent"] == Self.agent)
    } else {
      // The transport may send a user agent of its own, never the client's.
      #expect(received.headers["user-agent"] != Self.agent)
    }
  }
}
