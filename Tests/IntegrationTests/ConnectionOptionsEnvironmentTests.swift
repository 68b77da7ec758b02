#if os(Linux)
  import Errand
  import ErrandCurl
  import Foundation
  import LoopbackServer
  import TestSupport
  import Testing

  /// The environment's proxy variables never override the proxy an app chose in
  /// `ConnectionOptions`, nor reach a host served over a Unix socket.
  ///
  /// libcurl reads `http_proxy` and `no_proxy` from the process environment, and changing it
  /// would reroute the suites running beside this one, so ``probe()`` runs in a child test
  /// process with an environment of its own that names a second proxy (`http_proxy`) and
  /// bypasses everything (`no_proxy=*`).
  @Suite(.timeLimit(.minutes(3)), .serialized) struct ConnectionOptionsEnvironmentTests {
    static let appProxyVariable = "ERRAND_APP_PROXY_PORT"
    static let directVariable = "ERRAND_DIRECT_PORT"
    static let socketVariable = "ERRAND_SOCKET_PATH"

    @Test func theEnvironmentNeverOverridesTheAppsProxy() async throws {
      let scratch = try Scratch()
      defer { scratch.remove() }
      let environmentProxy = try LoopbackServer { _ in .text("environment proxy") }
      defer { environmentProxy.stop() }
      let appProxy = try LoopbackServer { _ in .text("app proxy") }
      defer { appProxy.stop() }
      let direct = try LoopbackServer { _ in .text("direct") }
      defer { direct.stop() }
      let daemon = try LoopbackServer(unixSocketAt: scratch.path("d.sock")) { _ in .text("daemon") }
      defer { daemon.stop() }
      var environment = ProcessInfo.processInfo.environment
      for name in ["http_proxy", "https_proxy", "all_proxy", "no_proxy"] {
        environment[name] = nil
        environment[name.uppercased()] = nil
      }
      environment["http_proxy"] = environmentProxy.baseURL.absoluteString
      environment["no_proxy"] = "*"
      environment[Self.appProxyVariable] = "\(appProxy.port)"
      environment[Self.directVariable] = "\(direct.port)"
      environment[Self.socketVariable] = scratch.path("d.sock")
      let (status, output) = try await ChildTestProcess.run(
        filter: "ConnectionOptionsEnvironmentTests/probe", environment: environment)
      #expect(status == 0, "the probe in the child process failed:\n\(output)")
      #expect(output.contains("1 test"), "the child ran no probe:\n\(output)")
      #expect(environmentProxy.requests.isEmpty)
      #expect(appProxy.requests.map(\.target) == ["http://api.errand.test/through"])
      #expect(direct.requests.map(\.target) == ["/around"])
      #expect(daemon.requests.map(\.target) == ["/local"])
    }

    /// In the child: a proxied host goes to the app's proxy despite `no_proxy=*`; a host the
    /// app's proxy bypasses goes direct, not to `http_proxy`; the socket's host goes over it.
    @Test(
      .enabled(
        if: ProcessInfo.processInfo.environment[appProxyVariable] != nil,
        "runs in the child process of the test above"))
    func probe() async throws {
      let variables = ProcessInfo.processInfo.environment
      let proxyPort = try #require(variables[Self.appProxyVariable].flatMap { Int($0) })
      let directPort = try #require(variables[Self.directVariable].flatMap { Int($0) })
      let socket = try #require(variables[Self.socketVariable])
      let transport = try CurlTransport(
        connection: ConnectionOptions(
          proxy: .init(host: "127.0.0.1", port: proxyPort, bypassedHosts: ["127.0.0.1"]),
          unixSockets: ["daemon": socket]))
      let answers = [
        ("http://api.errand.test/through", "app proxy"),
        ("http://127.0.0.1:\(directPort)/around", "direct"), ("http://daemon/local", "daemon"),
      ]
      for (target, expected) in answers {
        let response = try await transport.send(
          HTTPRequest(url: url(target), timeout: .seconds(20)))
        #expect(String(decoding: response.body, as: UTF8.self) == expected, "\(target)")
      }
    }
  }
#endif
