#if os(Linux)
  import Errand
  import ErrandCurl
  import Foundation
  import LoopbackServer
  import TestSupport
  import Testing

  /// A hostile review of `ConnectionOptions` over `CurlTransport`: a proxy's password in every
  /// printed form and on the wire, a Unix socket reached from the network by a redirect, the
  /// proxy skipped or used against the options, options smuggled into libcurl's text, and
  /// failures that must end promptly. Each probe failed before its fix, or guards a rule the
  /// documentation states.
  @Suite(.timeLimit(.minutes(3))) struct ConnectionOptionsHostileTests {
    static let secret = "pr0xy-hunter2"
    static let host = "api.errand.test"

    static func proxy(
      _ port: UInt16, _ kind: ConnectionOptions.Proxy.Kind = .http, bypassing: [String] = []
    ) -> ConnectionOptions.Proxy {
      .init(
        kind, host: "127.0.0.1", port: Int(port), username: "svc", password: secret,
        bypassedHosts: bypassing)
    }

    // MARK: The proxy's password in printed forms

    /// `dump` (and so every debugger and test failure that walks the value's mirror) never
    /// shows the password, of the proxy, of the options holding it, or of the transport.
    @Test func noPrintedFormShowsThePassword() throws {
      let options = ConnectionOptions(proxy: Self.proxy(3128))
      let transport = try CurlTransport(connection: options)
      for form in printedForms(of: options) + printedForms(of: options.proxy as Any)
        + printedForms(of: transport)
      {
        #expect(!form.contains(Self.secret), "\(form)")
      }
      let children = Mirror(reflecting: try #require(options.proxy)).children
      #expect(children.contains { $0.label == "password" && "\($0.value)" == #"Optional("***")"# })
    }

    /// A proxy URL pasted in as the host, credentials and all, is refused without quoting them,
    /// and the options' description hides them too.
    @Test(arguments: ["svc:\(secret)@proxy.internal", "http://svc:\(secret)@proxy.internal:3128"])
    func credentialsPastedIntoTheHostAreNeverQuoted(_ host: String) {
      let options = ConnectionOptions(proxy: .init(host: host, port: 3128))
      let error = #expect(throws: InvalidConnectionOption.self) {
        _ = try CurlTransport(connection: options)
      }
      #expect(error?.option == "proxy.host")
      for form in printedForms(of: error as Any) + printedForms(of: options) {
        #expect(!form.contains(Self.secret), "\(form)")
      }
    }

    // MARK: The proxy's credentials on the wire

    /// The credentials go to the proxy only: a host the proxy bypasses gets none, neither
    /// directly nor after a redirect from a proxied host; and no log line, event, metric or
    /// error of the call shows the password.
    @Test func aBypassedHostNeverGetsTheProxyCredentials() async throws {
      let server = try LoopbackServer { _ in .text("direct") }
      defer { server.stop() }
      let proxy = try LoopbackServer { request in
        request.target.hasPrefix("http://\(Self.host)")
          ? .redirect(to: server.url("/landing")) : .text("via proxy", status: 500)
      }
      defer { proxy.stop() }
      let transport = try CurlTransport(
        connection: ConnectionOptions(proxy: Self.proxy(proxy.port, bypassing: ["127.0.0.1"])))
      let logs = Locked<[String]>([])
      let listener = RecordingListener()
      let client = APIClient(
        baseURL: url("http://\(Self.host)"), transport: transport,
        configuration: APIClient.Configuration(
          middleware: [
            LoggingMiddleware(level: .debug) { event in
              var dumped = ""
              dump(event, to: &dumped)
              logs.withLock { $0 += [event.message, dumped] }
            }
          ], eventListeners: [listener]))
      let body = try await client.send(Endpoint<String>(path: "start"))
      #expect(body == "direct")
      let proxied = try #require(proxy.requests.first)
      let credentials = Data("svc:\(Self.secret)".utf8).base64EncodedString()
      #expect(proxied.headers["Proxy-Authorization"] == "Basic \(credentials)")
      let direct = try #require(server.requests.first)
      #expect(direct.target == "/landing")
      #expect(direct.headers["Proxy-Authorization"] == nil)
      #expect(!"\(direct.headers)".contains(credentials))
      let events = await listener.eventsOfOneCall()
      for form in logs.withLock({ $0 }) + printedForms(of: events) {
        #expect(!form.contains(Self.secret) && !form.contains(credentials), "\(form)")
      }
    }

    /// An `https` request asks the proxy for a tunnel with the credentials; a proxy that
    /// refuses it fails the call with an error whose every printed form, context included,
    /// leaves the password out.
    @Test func aRefusedTunnelNeverShowsThePassword() async throws {
      let proxy = try LoopbackServer { _ in ScriptedResponse(status: 403) }
      defer { proxy.stop() }
      let transport = try CurlTransport(
        connection: ConnectionOptions(proxy: Self.proxy(proxy.port)))
      let client = APIClient(baseURL: url("https://\(Self.host)"), transport: transport)
      let error = await #expect(throws: APIError.self) {
        try await client.send(Endpoint<Data>(path: "vault"))
      }
      #expect(error?.kind == .transport)
      let connect = try #require(proxy.requests.first)
      #expect(connect.method == "CONNECT" && connect.target == "\(Self.host):443")
      let credentials = Data("svc:\(Self.secret)".utf8).base64EncodedString()
      #expect(connect.headers["Proxy-Authorization"] == "Basic \(credentials)")
      var forms = printedForms(of: error as Any)
      forms += [error?.localizedDescription ?? "", "\(error?.context as Any)"]
      for form in forms {
        #expect(!form.contains(Self.secret) && !form.contains(credentials), "\(form)")
      }
    }

    /// Through a SOCKS5 proxy the credentials go in SOCKS5's own handshake, the name is
    /// resolved by the proxy (`socks5h`), and the server at the end of the tunnel sees neither
    /// a password nor a `Proxy-Authorization` field.
    @Test func aSOCKS5ProxyKeepsTheCredentialsFromTheServer() async throws {
      let server = try LoopbackServer { _ in .text("through the tunnel") }
      defer { server.stop() }
      let socks = try SOCKS5Proxy(forwardingTo: server.port)
      defer { socks.stop() }
      let transport = try CurlTransport(
        connection: ConnectionOptions(proxy: Self.proxy(socks.port, .socks5)))
      let client = APIClient(baseURL: url("http://\(Self.host)"), transport: transport)
      let body = try await client.send(Endpoint<String>(path: "inside"))
      #expect(body == "through the tunnel")
      #expect(socks.handshakes == ["svc:\(Self.secret) → \(Self.host):80"])
      let seen = try #require(server.requests.first)
      #expect(seen.target == "/inside" && seen.headers["Host"] == Self.host)
      #expect(seen.headers["Proxy-Authorization"] == nil)
      #expect(!"\(seen.headers) \(seen.target)".contains(Self.secret))
    }

    // MARK: Through the proxy or around it

    struct Bypass: Sendable, CustomTestStringConvertible {
      var bypassed: [String]
      var host: String
      var direct: Bool
      var testDescription: String {
        "\(bypassed) \(direct ? "bypasses" : "does not bypass") \(host)"
      }
    }

    /// What the documentation says of `bypassedHosts`: a name matches itself and its
    /// subdomains, ignoring case; a leading dot changes nothing; `*` bypasses every host, even
    /// listed beside other names; a name that merely ends the same way is not a subdomain.
    @Test(arguments: [
      Bypass(bypassed: ["example.test"], host: "api.example.test", direct: true),
      Bypass(bypassed: ["example.test"], host: "example.test", direct: true),
      Bypass(bypassed: [".example.test"], host: "example.test", direct: true),
      Bypass(bypassed: [".example.test"], host: "a.b.example.test", direct: true),
      Bypass(bypassed: ["EXAMPLE.test"], host: "api.example.test", direct: true),
      Bypass(bypassed: ["example.test"], host: "notexample.test", direct: false),
      Bypass(bypassed: ["example.test"], host: "example.test.evil.test", direct: false),
      Bypass(bypassed: ["api.example.test"], host: "example.test", direct: false),
      Bypass(bypassed: ["*"], host: "api.example.test", direct: true),
      Bypass(bypassed: ["other.test", "*"], host: "api.example.test", direct: true),
      Bypass(bypassed: [], host: "api.example.test", direct: false),
    ])
    func bypassedHostsMatchAsDocumented(_ bypass: Bypass) async throws {
      let server = try LoopbackServer { _ in .text("direct") }
      defer { server.stop() }
      let proxy = try LoopbackServer { _ in .text("via proxy") }
      defer { proxy.stop() }
      let transport = try CurlTransport(
        connection: ConnectionOptions(
          proxy: Self.proxy(proxy.port, bypassing: bypass.bypassed),
          hostOverrides: [.init(host: bypass.host, port: Int(server.port), address: "127.0.0.1")]
        ))
      let client = APIClient(
        baseURL: url("http://\(bypass.host):\(server.port)"), transport: transport)
      let body = try await client.send(Endpoint<String>(path: "where"))
      #expect(body == (bypass.direct ? "direct" : "via proxy"))
      #expect(proxy.requests.count == (bypass.direct ? 0 : 1))
    }

    /// libcurl has no wildcards inside a name: `*.example.com` would match no host at all, so
    /// it is refused rather than silently sending everything through the proxy.
    @Test(arguments: ["*.example.test", "api.*", "ex*mple.test", "**"])
    func aWildcardInsideANameIsRefused(_ entry: String) {
      let error = #expect(throws: InvalidConnectionOption.self) {
        _ = try CurlTransport(
          connection: ConnectionOptions(proxy: .init(host: "p", port: 1, bypassedHosts: [entry])))
      }
      #expect(error?.option == "proxy.bypassedHosts")
      #expect(error?.reason.contains("*") == true)
    }

    /// A range whose prefix does not fit its address, or that is no range, is refused; an IPv6
    /// address and range are taken.
    @Test(arguments: [
      ("10.0.0.0/33", false), ("::/129", false), ("10.0.0.0/", false), ("/8", false),
      ("10.0.0.0/8/8", false), ("a.test/8", false), ("10.0.0.0/-1", false), ("10.0.0.0/+8", false),
      ("fd00::/8", true), ("::1", true), ("10.0.0.0/8", true), ("10.0.0.0/0", true),
    ])
    func aBypassedRangeMustBeOne(_ entry: String, valid: Bool) {
      let make = {
        _ = try CurlTransport(
          connection: ConnectionOptions(proxy: .init(host: "p", port: 1, bypassedHosts: [entry])))
      }
      if valid {
        #expect(throws: Never.self) { try make() }
      } else {
        let error = #expect(throws: InvalidConnectionOption.self) { try make() }
        #expect(error?.option == "proxy.bypassedHosts")
      }
    }

    // MARK: A Unix socket reached from the network

    struct Redirect: Sendable, CustomTestStringConvertible {
      var status: Int
      var location: String
      var testDescription: String { "\(status) to \(location)" }
    }

    static let redirectsIntoTheSocket: [Redirect] = [301, 302, 303, 307, 308].flatMap { status in
      [
        "http://docker/containers", "http://DOCKER/containers", "http://DoCkEr:80/containers",
        "http://docker:2375/containers", "http://x@docker/containers",
        "http://x:y@docker:80/containers", "//docker/containers", "https://docker/containers",
      ].map { Redirect(status: status, location: $0) }
    }

    /// A server on the network never reaches the daemon behind a Unix socket through a
    /// redirect, whatever the status, whatever the spelling of the socket's host, even when the
    /// socket's host is trusted with credentials across redirects.
    @Test(arguments: redirectsIntoTheSocket)
    func aRedirectNeverReachesTheSocket(_ redirect: Redirect) async throws {
      let scratch = try Scratch()
      defer { scratch.remove() }
      let daemon = try LoopbackServer(unixSocketAt: scratch.path("d.sock")) { _ in
        .text("daemon secrets")
      }
      defer { daemon.stop() }
      let remote = try LoopbackServer { _ in
        ScriptedResponse(status: redirect.status, headers: [("Location", redirect.location)])
      }
      defer { remote.stop() }
      let transport = try CurlTransport(
        trustedRedirectHosts: ["docker", "127.0.0.1"],
        connection: ConnectionOptions(unixSockets: ["docker": scratch.path("d.sock")]))
      let client = APIClient(baseURL: remote.baseURL, transport: transport)
      let error = await #expect(throws: APIError.self) {
        try await client.send(Endpoint<String>(method: .post, path: "go"))
      }
      #expect(error?.kind == .invalidRequest)
      #expect(error.map { "\($0)" }?.contains("Unix domain socket") == true)
      #expect(daemon.requests.isEmpty)
    }

    /// A host spelled like the socket's but not it (a trailing dot, a longer name, an address)
    /// is not sent over the socket: the daemon never sees it.
    @Test(arguments: [
      "http://docker./containers", "http://docker.evil.test/containers",
      "http://127.0.0.1:1/containers", "http://[::1]:1/containers",
    ])
    func aLookAlikeHostNeverReachesTheSocket(_ location: String) async throws {
      let scratch = try Scratch()
      defer { scratch.remove() }
      let daemon = try LoopbackServer(unixSocketAt: scratch.path("d.sock")) { _ in
        .text("daemon secrets")
      }
      defer { daemon.stop() }
      let remote = try LoopbackServer { _ in
        ScriptedResponse(status: 302, headers: [("Location", location)])
      }
      defer { remote.stop() }
      let transport = try CurlTransport(
        connection: ConnectionOptions(unixSockets: ["docker": scratch.path("d.sock")]))
      let client = APIClient(
        baseURL: remote.baseURL, transport: transport,
        configuration: APIClient.Configuration(timeout: .seconds(60)))
      await #expect(throws: APIError.self) {
        try await client.send(Endpoint<String>(path: "go"))
      }
      #expect(daemon.requests.isEmpty)
    }

    /// The daemon behind a socket cannot send the app elsewhere: a redirect from the socket's
    /// host to another origin is refused, even to a trusted host; one within it is followed.
    @Test(arguments: [
      ("http://127.0.0.1:{port}/outside", false), ("//127.0.0.1:{port}/outside", false),
      ("http://docker./outside", false), ("/inside", true), ("http://DOCKER:80/inside", true),
    ])
    func aRedirectFromTheSocketStaysOnIt(_ location: String, _ followed: Bool) async throws {
      let scratch = try Scratch()
      defer { scratch.remove() }
      let outside = try LoopbackServer { _ in .text("outside") }
      defer { outside.stop() }
      let target = location.replacingOccurrences(of: "{port}", with: "\(outside.port)")
      let daemon = try LoopbackServer(unixSocketAt: scratch.path("d.sock")) { request in
        request.path == "/start"
          ? ScriptedResponse(status: 307, headers: [("Location", target)]) : .text("inside")
      }
      defer { daemon.stop() }
      let transport = try CurlTransport(
        trustedRedirectHosts: ["docker", "127.0.0.1"],
        connection: ConnectionOptions(unixSockets: ["docker": scratch.path("d.sock")]))
      let client = APIClient(baseURL: url("http://docker"), transport: transport)
      let endpoint = Endpoint<String>(path: "start")
      if followed {
        #expect(try await client.send(endpoint) == "inside")
        #expect(daemon.requests.map(\.path) == ["/start", "/inside"])
      } else {
        let error = await #expect(throws: APIError.self) { try await client.send(endpoint) }
        #expect(error?.kind == .invalidRequest)
        #expect(outside.requests.isEmpty)
      }
    }

    // MARK: Options smuggled into libcurl's text

    /// Options libcurl would read differently than the app meant are refused when the transport
    /// is made: two sockets for one name (which one is used would depend on hashing), a name
    /// starting with `-` (libcurl's "remove this entry" in `CURLOPT_RESOLVE`), separators and
    /// line breaks, ports out of range, addresses that are names or carry brackets or scopes.
    @Test(
      arguments: [
        (
          "unixSockets",
          ConnectionOptions(unixSockets: ["docker": "/tmp/a.sock", "DOCKER": "/tmp/b"])
        ),
        (
          "hostOverrides",
          ConnectionOptions(hostOverrides: [.init(host: "-api", port: 80, address: "::1")])
        ),
        ("proxy.host", ConnectionOptions(proxy: .init(host: "-proxy", port: 1))),
        (
          "proxy.bypassedHosts",
          ConnectionOptions(proxy: .init(host: "p", port: 1, bypassedHosts: ["a,b"]))
        ),
        (
          "proxy.bypassedHosts",
          ConnectionOptions(proxy: .init(host: "p", port: 1, bypassedHosts: ["a b"]))
        ),
        (
          "proxy.bypassedHosts",
          ConnectionOptions(proxy: .init(host: "p", port: 1, bypassedHosts: ["a\r\nb"]))
        ),
        (
          "proxy.bypassedHosts",
          ConnectionOptions(proxy: .init(host: "p", port: 1, bypassedHosts: [""]))
        ),
        ("proxy.port", ConnectionOptions(proxy: .init(host: "p", port: 0))),
        ("proxy.port", ConnectionOptions(proxy: .init(host: "p", port: 65_536))),
        (
          "hostOverrides[\"h\"].port",
          ConnectionOptions(hostOverrides: [.init(host: "h", port: 0, address: "::1")])
        ),
        (
          "hostOverrides[\"h\"].address",
          ConnectionOptions(hostOverrides: [.init(host: "h", port: 80, address: "[::1]")])
        ),
        (
          "hostOverrides[\"h\"].address",
          ConnectionOptions(hostOverrides: [.init(host: "h", port: 80, address: "fe80::1%eth0")])
        ),
        (
          "hostOverrides[\"h\"].address",
          ConnectionOptions(hostOverrides: [.init(host: "h", port: 80, address: "1.2.3.4,5.6.7.8")])
        ),
        (
          "hostOverrides",
          ConnectionOptions(hostOverrides: [.init(host: "h\u{0}x", port: 80, address: "::1")])
        ),
        ("unixSockets[\"d\"]", ConnectionOptions(unixSockets: ["d": "/tmp/a\u{0}b.sock"])),
        ("unixSockets[\"d\"]", ConnectionOptions(unixSockets: ["d": "/tmp/a\nb.sock"])),
      ] as [(String, ConnectionOptions)])
    func aSmuggledOptionIsRefused(_ option: String, _ options: ConnectionOptions) {
      let error = #expect(throws: InvalidConnectionOption.self) {
        _ = try CurlTransport(connection: options)
      }
      #expect(error?.option == option)
      #expect((error?.description.count ?? .max) < 400)
    }

    /// Options longer than libcurl takes (8,000,000 bytes) are refused when the transport is
    /// made, not by every request; the error never quotes the password.
    @Test(arguments: ["proxy.username", "proxy.password", "proxy.bypassedHosts"])
    func anOversizedOptionIsRefused(_ option: String) {
      let huge = String(repeating: "p", count: 8_000_001)
      let entries = Array(repeating: String(repeating: "b", count: 250), count: 32_000)
      let proxy = ConnectionOptions.Proxy(
        host: "p", port: 1, username: option == "proxy.username" ? huge : "u",
        password: option == "proxy.password" ? huge : Self.secret,
        bypassedHosts: option == "proxy.bypassedHosts" ? entries : [])
      let error = #expect(throws: InvalidConnectionOption.self) {
        _ = try CurlTransport(connection: ConnectionOptions(proxy: proxy))
      }
      #expect(error?.option == option)
      #expect((error?.description.count ?? .max) < 400)
      #expect(error?.description.contains(Self.secret) == false)
    }

    /// A proxy given by IPv6 address (its documentation says "host name or address") is
    /// accepted and reached in brackets, of either kind: nothing listens there, so the call
    /// fails to connect, not on a malformed proxy URL.
    @Test(arguments: [ConnectionOptions.Proxy.Kind.http, .socks5])
    func aProxyAtAnIPv6AddressIsBracketed(_ kind: ConnectionOptions.Proxy.Kind) async throws {
      let refusing = try RefusingPort()
      let transport = try CurlTransport(
        connection: ConnectionOptions(
          proxy: .init(kind, host: "::1", port: Int(refusing.port), password: Self.secret)))
      let client = APIClient(baseURL: url("http://\(Self.host)"), transport: transport)
      let error = await #expect(throws: APIError.self) {
        try await client.send(Endpoint<Data>(path: "x"))
      }
      guard case .transport(let underlying) = error else {
        Issue.record("not a transport failure: \(error as Any)")
        return
      }
      #expect((underlying as? URLError)?.code == .cannotConnectToHost, "\(underlying)")
      #expect(!"\(underlying)".contains(Self.secret))
    }

    /// An IPv6 address in place of a name is handed to libcurl in brackets and reached.
    @Test func anIPv6HostOverrideIsReached() async throws {
      let server = try LoopbackServer { _ in .text("mapped") }
      defer { server.stop() }
      let transport = try CurlTransport(
        connection: ConnectionOptions(
          hostOverrides: [
            .init(host: Self.host, port: Int(server.port), address: "::ffff:127.0.0.1")
          ]))
      let client = APIClient(
        baseURL: url("http://\(Self.host):\(server.port)"), transport: transport)
      #expect(try await client.send(Endpoint<String>(path: "v6")) == "mapped")
    }

    // MARK: Failures that end promptly

    /// A socket path where nothing listens fails the call at once: no file, or a file that is
    /// no socket.
    @Test(arguments: [false, true])
    func aSocketWithNoListenerFailsToConnect(_ fileExists: Bool) async throws {
      let scratch = try Scratch()
      defer { scratch.remove() }
      let path = scratch.path("none.sock")
      if fileExists {
        #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8)))
      }
      let transport = try CurlTransport(connection: ConnectionOptions(unixSockets: ["d": path]))
      let client = APIClient(baseURL: url("http://d"), transport: transport)
      let error = await #expect(throws: APIError.self) {
        try await client.send(Endpoint<Data>(path: "x"))
      }
      guard case .transport(let underlying) = error else {
        Issue.record("not a transport failure: \(error as Any)")
        return
      }
      #expect((underlying as? URLError)?.code == .cannotConnectToHost, "\(underlying)")
    }

    /// A proxy that closes the connection without a word fails the call with a lost
    /// connection, whose printed forms leave the password out.
    @Test func aProxyThatClosesAtOnceFailsTheCall() async throws {
      let proxy = try LoopbackServer { _ in
        ScriptedResponse(status: 200, ending: .closeWithoutResponse)
      }
      defer { proxy.stop() }
      let transport = try CurlTransport(
        connection: ConnectionOptions(proxy: Self.proxy(proxy.port)))
      let client = APIClient(baseURL: url("http://\(Self.host)"), transport: transport)
      let error = await #expect(throws: APIError.self) {
        try await client.send(Endpoint<Data>(path: "x"))
      }
      #expect(error?.kind == .transport)
      for form in printedForms(of: error as Any) {
        #expect(!form.contains(Self.secret), "\(form)")
      }
    }

    /// A proxy that accepts the connection and never answers holds the call until its
    /// deadline, no longer: the call ends as timed out.
    @Test(arguments: [ConnectionOptions.Proxy.Kind.http, .socks5])
    func aSilentProxyEndsAtTheDeadline(_ kind: ConnectionOptions.Proxy.Kind) async throws {
      let silent = try SilentListener()
      let transport = try CurlTransport(
        connection: ConnectionOptions(proxy: Self.proxy(silent.port, kind)))
      let client = APIClient(
        baseURL: url("http://\(Self.host)"), transport: transport,
        configuration: APIClient.Configuration(timeout: .seconds(2)))
      let error = await #expect(throws: APIError.self) {
        try await client.send(Endpoint<Data>(path: "x"))
      }
      #expect(error?.kind == .timedOut)
    }

    /// HTTP/3 from a libcurl without it is refused when the transport is made; from one with
    /// it, a plain `http` call still works over TCP.
    @Test func http3IsRefusedOrWorks() async throws {
      let server = try LoopbackServer { _ in .text("tcp") }
      defer { server.stop() }
      do {
        let transport = try CurlTransport(connection: ConnectionOptions(httpVersion: .http3))
        let client = APIClient(baseURL: server.baseURL, transport: transport)
        #expect(try await client.send(Endpoint<String>(path: "h3")) == "tcp")
      } catch let error as InvalidConnectionOption {
        #expect(error.option == "httpVersion")
        #expect(error.reason.contains("HTTP/3"))
      }
    }

    /// HTTP/2 with prior knowledge against a server that speaks only HTTP/1.1 fails the call
    /// with a transport error, well before its deadline.
    @Test func priorKnowledgeAgainstHTTP1FailsClearly() async throws {
      let server = try LoopbackServer { _ in .text("HTTP/1.1 only") }
      defer { server.stop() }
      let transport = try CurlTransport(
        connection: ConnectionOptions(httpVersion: .http2PriorKnowledge))
      let client = APIClient(
        baseURL: server.baseURL, transport: transport,
        configuration: APIClient.Configuration(timeout: .seconds(120)))
      let error = await #expect(throws: APIError.self) {
        try await client.send(Endpoint<String>(path: "h2c"))
      }
      #expect(error?.kind == .transport, "\(error as Any)")
    }

    // MARK: LoopbackServer(unixSocketAt:)

    /// A server asked to listen where a regular file already is refuses, and leaves the file;
    /// one that started removes its socket file once stopped.
    @Test func theServerRemovesOnlyTheSocketItMade() async throws {
      let scratch = try Scratch()
      defer { scratch.remove() }
      let taken = scratch.path("taken")
      #expect(FileManager.default.createFile(atPath: taken, contents: Data("keep".utf8)))
      #expect(throws: (any Error).self) {
        _ = try LoopbackServer(unixSocketAt: taken) { _ in .text("never") }
      }
      #expect(FileManager.default.contents(atPath: taken) == Data("keep".utf8))

      let made = scratch.path("made.sock")
      let server = try LoopbackServer(unixSocketAt: made) { _ in .text("up") }
      #expect(FileManager.default.fileExists(atPath: made))
      server.stop()
      #expect(await eventually { !FileManager.default.fileExists(atPath: made) })
    }

    /// A server whose socket file was replaced while it ran (moved away, a regular file put in
    /// its place) leaves the new file alone when it stops: it is not the file it made.
    @Test func theServerNeverRemovesAFileThatTookItsPlace() async throws {
      let scratch = try Scratch()
      defer { scratch.remove() }
      let path = scratch.path("s.sock")
      let moved = scratch.path("moved.sock")
      let server = try LoopbackServer(unixSocketAt: path) { _ in .text("up") }
      #expect(rename(path, moved) == 0)
      #expect(FileManager.default.createFile(atPath: path, contents: Data("theirs".utf8)))
      #expect(RawSocket.accepts(unixSocketAt: moved))
      server.stop()
      // The server decides about the file before it closes its socket.
      #expect(await eventually { !RawSocket.accepts(unixSocketAt: moved) })
      #expect(FileManager.default.contents(atPath: path) == Data("theirs".utf8))
    }

    /// Socket paths at the limits: 103 bytes works end to end; 104 to 107 bytes the server
    /// takes (Linux holds 107) but the transport refuses (Apple platforms hold 103); 108 bytes
    /// fits nowhere.
    @Test(arguments: [103, 104, 107, 108])
    func socketPathsAtTheLimits(_ length: Int) async throws {
      let scratch = try Scratch()
      defer { scratch.remove() }
      let path = scratch.path(
        String(repeating: "s", count: length - scratch.directory.utf8.count - 1))
      try #require(path.utf8.count == length)
      guard length < 108 else {
        #expect(throws: (any Error).self) {
          _ = try LoopbackServer(unixSocketAt: path) { _ in .text("never") }
        }
        return
      }
      let server = try LoopbackServer(unixSocketAt: path) { _ in .text("at the limit") }
      defer { server.stop() }
      let options = ConnectionOptions(unixSockets: ["d": path])
      guard length <= 103 else {
        let error = #expect(throws: InvalidConnectionOption.self) {
          _ = try CurlTransport(connection: options)
        }
        #expect(error?.reason.contains("\(length) bytes") == true)
        return
      }
      let client = APIClient(
        baseURL: url("http://d"), transport: try CurlTransport(connection: options))
      #expect(try await client.send(Endpoint<String>(path: "x")) == "at the limit")
    }
  }
#endif
