#if os(Linux)
  import Errand
  import ErrandCurl
  import Foundation
  import LoopbackServer
  import TestSupport
  import Testing

  /// `CurlTransport(connection:)`: a Unix domain socket per host, addresses in place of names, an
  /// HTTP proxy with credentials and hosts it bypasses, over real sockets; malformed options
  /// refused when the transport is made, never quoting a password.
  @Suite(.timeLimit(.minutes(3))) struct CurlConnectionOptionsTests {
    /// A name no resolver knows (RFC 6761 reserves `.test`): reached only as the options say.
    static let host = "api.errand.test"

    /// A directory for this test's socket files, removed after.
    static func scratch() throws -> URL {
      // Short: a socket's path has at most 103 bytes.
      let directory = URL(fileURLWithPath: "/tmp/errand-\(UUID().uuidString.prefix(8))")
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
      return directory
    }

    @Test func aHostWithAUnixSocketIsReachedOverIt() async throws {
      let directory = try Self.scratch()
      defer { try? FileManager.default.removeItem(at: directory) }
      let path = directory.appendingPathComponent("d.sock").path
      let server = try LoopbackServer(unixSocketAt: path) { _ in .json(#"{"ok":true}"#) }
      defer { server.stop() }
      let transport = try CurlTransport(
        connection: ConnectionOptions(unixSockets: ["Docker": path]))
      let client = APIClient(baseURL: url("http://docker/v1.45"), transport: transport)
      let answer = try await client.send(Endpoint<[String: Bool]>(path: "info"))
      #expect(answer == ["ok": true])
      let request = try #require(server.requests.first)
      #expect(request.target == "/v1.45/info")
      #expect(request.headers["Host"] == "docker")
    }

    @Test func aHostOverrideConnectsToTheAddressGiven() async throws {
      let server = try LoopbackServer { _ in .json(#"["Rex"]"#) }
      defer { server.stop() }
      let port = Int(server.port)
      let transport = try CurlTransport(
        connection: ConnectionOptions(
          hostOverrides: [.init(host: Self.host, port: port, address: "127.0.0.1")]))
      let client = APIClient(baseURL: url("http://\(Self.host):\(port)/v1"), transport: transport)
      #expect(try await client.send(Endpoint<[String]>(path: "dogs")) == ["Rex"])
      #expect(server.requests.first?.headers["Host"] == "\(Self.host):\(port)")
    }

    /// A plain `http` request goes to the proxy whole, with the proxy's credentials; the
    /// server's own credentials go in `Authorization`, the proxy's in `Proxy-Authorization`.
    @Test func anHTTPProxyGetsTheRequestWithItsCredentials() async throws {
      let proxy = try LoopbackServer { _ in .json(#"["via proxy"]"#) }
      defer { proxy.stop() }
      let transport = try CurlTransport(
        connection: ConnectionOptions(
          proxy: .init(
            host: "127.0.0.1", port: Int(proxy.port), username: "svc", password: "pr0xy-s3cret")))
      let client = APIClient(
        baseURL: url("http://\(Self.host)/v1"), transport: transport,
        configuration: APIClient.Configuration(headers: ["Authorization": "Bearer server-token"]))
      #expect(try await client.send(Endpoint<[String]>(path: "dogs")) == ["via proxy"])
      let seen = try #require(proxy.requests.first)
      #expect(seen.target == "http://\(Self.host)/v1/dogs")
      let credentials = Data("svc:pr0xy-s3cret".utf8).base64EncodedString()
      #expect(seen.headers["Proxy-Authorization"] == "Basic \(credentials)")
      #expect(seen.headers["Authorization"] == "Bearer server-token")
    }

    /// A host the proxy bypasses is reached directly: the proxy sees nothing; named as itself or
    /// as a range that holds it.
    @Test(arguments: ["127.0.0.1", "127.0.0.0/8", "127.0.0.1/32"])
    func aBypassedHostIsReachedDirectly(_ bypassed: String) async throws {
      let proxy = try LoopbackServer { _ in .json(#"["via proxy"]"#) }
      defer { proxy.stop() }
      let server = try LoopbackServer { _ in .json(#"["direct"]"#) }
      defer { server.stop() }
      let transport = try CurlTransport(
        connection: ConnectionOptions(
          proxy: .init(host: "127.0.0.1", port: Int(proxy.port), bypassedHosts: [bypassed])))
      let client = APIClient(baseURL: server.baseURL, transport: transport)
      #expect(try await client.send(Endpoint<[String]>(path: "dogs")) == ["direct"])
      #expect(proxy.requests.isEmpty)
    }

    /// A server on the network cannot reach a local daemon through the app: a redirect to a
    /// host served over a Unix socket is not followed, and the socket sees nothing.
    @Test func aRedirectIntoAUnixSocketIsNotFollowed() async throws {
      let directory = try Self.scratch()
      defer { try? FileManager.default.removeItem(at: directory) }
      let path = directory.appendingPathComponent("d.sock").path
      let daemon = try LoopbackServer(unixSocketAt: path) { _ in .json(#"{"secret":1}"#) }
      defer { daemon.stop() }
      let remote = try LoopbackServer { _ in
        ScriptedResponse(status: 302, headers: [("Location", "http://docker/containers")])
      }
      defer { remote.stop() }
      let transport = try CurlTransport(
        connection: ConnectionOptions(unixSockets: ["docker": path]))
      let client = APIClient(baseURL: remote.baseURL, transport: transport)
      let error = await #expect(throws: APIError.self) {
        try await client.send(Endpoint<Data>(path: "go", decoding: .data))
      }
      #expect(error?.kind == .invalidRequest)
      #expect(error.map { "\($0)" }?.contains("Unix domain socket") == true)
      #expect(daemon.requests.isEmpty)
    }

    /// A malformed option is refused when the transport is made, naming the option; a proxy's
    /// password is never quoted, in the error or in the options' description.
    @Test(arguments: [
      ("proxy.host", ConnectionOptions(proxy: .init(host: "proxy host", port: 3128))),
      ("proxy.port", ConnectionOptions(proxy: .init(host: "proxy", port: 70_000))),
      ("proxy.password", ConnectionOptions(proxy: .init(host: "p", port: 1, password: "a\r\nb"))),
      ("proxy.username", ConnectionOptions(proxy: .init(host: "p", port: 1, username: "u\u{0}"))),
      ("unixSockets[\"d\"]", ConnectionOptions(unixSockets: ["d": "relative.sock"])),
      (
        "unixSockets[\"d\"]",
        ConnectionOptions(unixSockets: ["d": "/" + String(repeating: "a", count: 200)])
      ),
      ("unixSockets", ConnectionOptions(unixSockets: ["a/b": "/tmp/x.sock"])),
      (
        "hostOverrides[\"h\"].address",
        ConnectionOptions(hostOverrides: [.init(host: "h", port: 80, address: "evil.example")])
      ),
      (
        "hostOverrides",
        ConnectionOptions(hostOverrides: [.init(host: "h:1", port: 80, address: "::1")])
      ),
    ])
    func aMalformedOptionIsRefused(_ option: String, _ options: ConnectionOptions) throws {
      let error = #expect(throws: InvalidConnectionOption.self) {
        _ = try CurlTransport(connection: options)
      }
      #expect(error?.option == option)
      #expect(error.map { "\($0)" }?.contains("a\r\nb") == false)
    }

    @Test func theDescriptionNeverShowsTheProxyPassword() {
      let options = ConnectionOptions(
        proxy: .init(.socks5, host: "proxy", port: 1080, username: "svc", password: "hunter2"),
        unixSockets: ["docker": "/var/run/docker.sock"],
        hostOverrides: [.init(host: "api", port: 443, address: "10.0.0.7")], httpVersion: .http1)
      #expect(
        options.description
          == "proxy socks5h://svc:***@proxy:1080, docker over /var/run/docker.sock, "
          + "api:443 → 10.0.0.7, HTTP/1.1")
      #expect(!"\(options)".contains("hunter2") && !String(reflecting: options).contains("hunter2"))
    }
  }
#endif
