#if os(Linux)
  import Errand
  import Foundation
  import LoopbackServer
  import TestSupport
  import Testing

  /// Both production transports go through the proxy the environment names, as libcurl reads it
  /// (URLSession on Linux drives libcurl too, and leaves proxies to it).
  ///
  /// libcurl reads `http_proxy`, `https_proxy` and `no_proxy` from the process environment, and
  /// changing that environment would reroute the suites running beside this one, so each case
  /// runs ``probe()`` in a child test process with its own environment, and checks what the proxy
  /// (a loopback server) received.
  ///
  /// Its cases run one at a time: Foundation's `Process.run()` crashed once (a bad read inside it)
  /// while two cases launched children at the same moment beside the whole suite, and one child
  /// at a time costs a few seconds at most.
  @Suite(.timeLimit(.minutes(3)), .serialized) struct ProxyEnvironmentTests {
    struct Case: Sendable, CustomTestStringConvertible {
      var testDescription: String
      /// The variable that names the loopback proxy.
      var variable: String
      /// `no_proxy`, when set.
      var noProxy: String?
      /// The URL the child requests; `{refusing}` is a port where nothing listens.
      var target: String
      /// What the child must see: `status 200` or `URLError <code>`.
      var expectation: String
      /// The request line the proxy must receive, or `nil` for none.
      var proxied: String?
    }

    static let cases: [Case] = [
      Case(
        testDescription: "http_proxy carries a plain request in absolute form",
        variable: "http_proxy", target: "http://errand-proxy-probe.invalid/resource?x=1",
        expectation: "status 200", proxied: "GET http://errand-proxy-probe.invalid/resource?x=1"),
      Case(
        testDescription: "https_proxy is asked for a tunnel; a refused one cannot reach the server",
        variable: "https_proxy", target: "https://errand-proxy-probe.invalid/resource",
        expectation: "URLError \(URLError.Code.cannotConnectToHost.rawValue)",
        proxied: "CONNECT errand-proxy-probe.invalid:443"),
      Case(
        testDescription: "all_proxy stands in for the others",
        variable: "all_proxy", target: "http://errand-proxy-probe.invalid/all",
        expectation: "status 200", proxied: "GET http://errand-proxy-probe.invalid/all"),
      Case(
        testDescription: "no_proxy sends the request straight to the server",
        variable: "http_proxy", noProxy: "127.0.0.1",
        target: "http://127.0.0.1:{refusing}/resource",
        expectation: "URLError \(URLError.Code.cannotConnectToHost.rawValue)", proxied: nil),
    ]

    @Test(arguments: TransportKind.allCases, cases)
    func theProxyVariablesApplyAsLibcurlReadsThem(
      _ kind: TransportKind, _ proxyCase: Case
    ) async throws {
      let proxy = try LoopbackServer { request in
        request.method == "CONNECT"
          ? ScriptedResponse(status: 403) : .text("through the proxy")
      }
      defer { proxy.stop() }
      let refusing = try RefusingPort()
      var environment = ProcessInfo.processInfo.environment
      for name in ["http_proxy", "https_proxy", "all_proxy", "no_proxy"] {
        environment[name] = nil
        environment[name.uppercased()] = nil
      }
      environment[proxyCase.variable] = proxy.baseURL.absoluteString
      environment["no_proxy"] = proxyCase.noProxy
      environment[ProxyProbe.targetVariable] = proxyCase.target.replacingOccurrences(
        of: "{refusing}", with: String(refusing.port))
      environment[ProxyProbe.expectationVariable] = proxyCase.expectation
      environment[ProxyProbe.transportVariable] = kind.rawValue

      let (status, output) = try await ProxyProbe.runChild(environment: environment)
      #expect(status == 0, "the probe in the child process failed:\n\(output)")
      #expect(output.contains("1 test"), "the child ran no probe:\n\(output)")
      let received = proxy.requests.map { "\($0.method) \($0.target)" }
      #expect(received == (proxyCase.proxied.map { [$0] } ?? []))
    }

    /// The request a child process makes with the environment it was given; skipped anywhere
    /// else.
    @Test(.enabled(if: ProxyProbe.target != nil, "runs in the child process of the test above"))
    func probe() async throws {
      let target = try #require(ProxyProbe.target)
      let request = HTTPRequest(url: target, timeout: .seconds(20))
      let expectation = ProxyProbe.expectation
      let transport = try #require(ProxyProbe.transport).make()
      if expectation == "status 200" {
        let response = try await transport.send(request)
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "through the proxy")
      } else {
        let error = await #expect(throws: URLError.self) {
          _ = try await transport.send(request)
        }
        #expect(error.map { "URLError \($0.code.rawValue)" } == expectation)
      }
    }
  }

  /// Runs ``ProxyEnvironmentTests/probe()`` in a child process of this test binary.
  enum ProxyProbe {
    static let targetVariable = "ERRAND_PROXY_PROBE_URL"
    static let expectationVariable = "ERRAND_PROXY_PROBE_EXPECT"
    static let transportVariable = "ERRAND_PROXY_PROBE_TRANSPORT"
    static let target = ProcessInfo.processInfo.environment[targetVariable].flatMap {
      URL(string: $0)
    }
    static let expectation = ProcessInfo.processInfo.environment[expectationVariable] ?? ""
    static let transport = ProcessInfo.processInfo.environment[transportVariable].flatMap {
      TransportKind(rawValue: $0)
    }

    /// Run the probe with `environment`; its exit status and everything it printed.
    static func runChild(environment: [String: String]) async throws -> (Int32, String) {
      try await ChildTestProcess.run(
        filter: "ProxyEnvironmentTests/probe", environment: environment)
    }
  }
#endif
