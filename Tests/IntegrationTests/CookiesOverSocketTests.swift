import Errand
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// A client's cookie jar over a real socket, on every transport: the same cookies stored (the
/// redirect's too, a comma in an `Expires` date kept) and the same `Cookie` fields sent.
@Suite(.timeLimit(.minutes(3))) struct CookiesOverSocketTests {
  static func server() throws -> LoopbackServer {
    try LoopbackServer { request in
      switch request.path {
      case "/login":
        var answer = ScriptedResponse.redirect(to: URL(string: "/home")!)
        answer.headers += [
          ("Set-Cookie", "session=abc; Path=/; HttpOnly"),
          ("Set-Cookie", "hop=1; Path=/home"),
          ("Set-Cookie", "remember=yes; Expires=Wed, 21 Oct 2099 07:28:00 GMT; Path=/"),
        ]
        return answer
      case "/home":
        var answer = ScriptedResponse.text("home")
        answer.headers.append(("Set-Cookie", "theme=dark"))
        return answer
      default:
        return .text(request.headers["Cookie"] ?? "")
      }
    }
  }

  @Test(arguments: TransportKind.allCases)
  func theJarStoresAndSendsTheSameOnEveryTransport(_ transport: TransportKind) async throws {
    let server = try Self.server()
    defer { server.stop() }
    var configuration = APIClient.Configuration()
    let jar = CookieJar()
    configuration.cookieJar = jar
    let client = transport.client(server.baseURL, configuration: configuration)
    #expect(try await client.send(Endpoint<String>(path: "login")) == "home")
    let echoed = try await client.send(Endpoint<String>(path: "me"))
    #expect(echoed == "session=abc; remember=yes; theme=dark")
    #expect(server.requests.map(\.path) == ["/login", "/home", "/me"])
    // The redirect's cookies went with its hop, the one for `/home` first (the longer path).
    #expect(server.requests[1].headers["Cookie"] == "hop=1; session=abc; remember=yes")
    #expect(jar.allCookies.map(\.name) == ["session", "hop", "remember", "theme"])
  }

  @Test(arguments: TransportKind.allCases)
  func withoutAJarTheTransportKeepsNoCookie(_ transport: TransportKind) async throws {
    let server = try Self.server()
    defer { server.stop() }
    let client = transport.client(server.baseURL)
    #expect(try await client.send(Endpoint<String>(path: "login")) == "home")
    #expect(try await client.send(Endpoint<String>(path: "me")) == "")
    #expect(server.requests.allSatisfy { $0.headers["Cookie"] == nil })
  }
}
