import Foundation
import TestSupport
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Hostile review of `URLSessionTransport.init(configuration:trustedRedirectHosts:connection:trust:)`
/// and what it leaves behind at run time (`SessionConnection`, the challenge answer in
/// `SessionDelegate`): the proxy's password must never be printed, must go to the proxy's own
/// password challenge only, and every option the platform's URLSession cannot honour must be
/// refused (malformed ones as `InvalidConnectionOption`, first). Each test asserts the safe
/// behaviour, so a failure is a finding.
@Suite(.timeLimit(.minutes(3))) struct URLSessionConnectionHostileTests {
  static let password = "hunter2-proxy-secret-7f3a"
  static let proxy = ConnectionOptions.Proxy(
    host: "proxy.test", port: 3128, username: "svc", password: password)
  static let serverTrust = "NSURLAuthenticationMethodServerTrust"
  static let clientCertificate = "NSURLAuthenticationMethodClientCertificate"

  // MARK: - Printed forms

  /// Attack: make a malformed option's error quote the password, whichever option is
  /// malformed (the password itself, or another one next to it), including credentials pasted
  /// into the host or a bypassed host.
  @Test(arguments: [
    (variant(password: password + "\n"), "proxy.password"),
    (variant(password: password + "\u{0}"), "proxy.password"),
    (variant(password: password + "\u{7F}"), "proxy.password"),
    (
      variant(password: String(repeating: password, count: 8_000_000 / password.utf8.count + 1)),
      "proxy.password"
    ),
    (variant(host: "svc:\(password)@proxy test"), "proxy.host"),
    (variant(host: "proxy\u{0}.test"), "proxy.host"),
    (variant(host: ""), "proxy.host"),
    (variant(port: 0), "proxy.port"),
    (variant(port: 70_000), "proxy.port"),
    (variant(username: "svc\n"), "proxy.username"),
    (variant(bypassedHosts: ["svc:\(password)@internal test"]), "proxy.bypassedHosts"),
    (variant(bypassedHosts: ["*.internal.test"]), "proxy.bypassedHosts"),
    (variant(bypassedHosts: [""]), "proxy.bypassedHosts"),
  ])
  func aMalformedOptionsErrorNeverQuotesThePassword(
    _ proxy: ConnectionOptions.Proxy, option: String
  ) {
    let error = #expect(throws: InvalidConnectionOption.self) {
      _ = try URLSessionTransport(connection: ConnectionOptions(proxy: proxy))
    }
    #expect(error?.option == option)
    for text in error.map({ printedForms(of: $0) }) ?? [] {
      #expect(!text.contains(Self.password), "printed the password: \(text.prefix(200))")
    }
    // Bounded: an 8 MB password or host must not become an 8 MB message.
    #expect((error?.description.utf8.count ?? 0) < 400)
  }

  /// Attack: print the password through any form of what holds it: the options, the proxy,
  /// the run-time `SessionConnection`, the delegate that keeps it, a transport made with it,
  /// walking every mirror child as a debugger would.
  @Test func noPrintedFormOfWhatHoldsTheProxyShowsThePassword() throws {
    var proxy = Self.proxy
    proxy.bypassedHosts = ["internal.test"]
    let options = ConnectionOptions(proxy: proxy, httpVersion: .http3)
    let connection = SessionConnection(options)
    let delegate = SessionDelegate(connection: connection)
    let transport = URLSessionTransport(
      configuration: URLSessionTransport.defaultConfiguration(), trustedRedirectHosts: [],
      loadedTrust: try LoadedTrust(TrustPolicy()), connection: connection)
    let values: [Any] = [
      options, proxy, Optional(proxy) as Any, [options], connection, delegate, transport,
      transport.delegate as Any,
    ]
    for value in values {
      for text in Self.deepPrintedForms(value) {
        #expect(!text.contains(Self.password), "printed the password: \(text.prefix(300))")
      }
    }
    #expect("\(connection)" == "proxy svc:***@proxy.test:3128, HTTP/3")
  }

  // MARK: - Whom the credential goes to

  /// Attack: a server's challenge (not a proxy's) at the proxy's very host and port, over
  /// either scheme, with any password method, directly and through the delegate.
  @Test(arguments: ["http", "https", NSURLProtectionSpaceHTTP, NSURLProtectionSpaceHTTPS])
  func aServerAtTheProxysHostAndPortGetsNothing(_ scheme: String) throws {
    let connection = SessionConnection(ConnectionOptions(proxy: Self.proxy))
    let delegate = SessionDelegate(connection: connection)
    for method in [
      NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodDefault,
      NSURLAuthenticationMethodHTTPDigest, NSURLAuthenticationMethodNTLM,
    ] {
      let challenge = Self.serverChallenge(
        host: "proxy.test", port: 3128, protocol: scheme, method: method)
      #expect(connection.credential(for: challenge) == nil, "\(method)")
      let (disposition, user, secret) = try Self.answer(delegate, challenge)
      #expect(disposition == URLSession.AuthChallengeDisposition.rejectProtectionSpace.rawValue)
      #expect(user == nil)
      #expect(secret == nil)
    }
  }

  /// Attack: a proxy challenge from another port, or a host that only resembles the proxy's
  /// (a suffix, a prefix, a trailing dot, an address, an IPv6 spelling).
  @Test(arguments: [
    ("proxy.test", 3129), ("proxy.test", 80), ("proxy.test", 443), ("proxy.test", 0),
    ("proxy.test", -3128), ("evil.proxy.test", 3128), ("proxy.test.evil", 3128),
    ("proxy.tes", 3128), ("xproxy.test", 3128), ("proxy.test.", 3128), ("127.0.0.1", 3128),
    ("", 3128), ("proxy.test:3128", 3128), ("svc@proxy.test", 3128),
  ])
  func aProxyChallengeFromElsewhereGetsNothing(host: String, port: Int) {
    let connection = SessionConnection(ConnectionOptions(proxy: Self.proxy))
    #expect(connection.credential(for: Self.proxyChallenge(host: host, port: port)) == nil)
  }

  /// Attack: brackets are an IPv6 literal's spelling only: a bracketed name, or doubled
  /// brackets, is not the proxy (control: `[::1]` is the proxy `::1`).
  @Test func bracketsOnlyWrapAnIPv6Literal() {
    let named = SessionConnection(ConnectionOptions(proxy: Self.proxy))
    for host in ["[proxy.test]", "[proxy.test", "proxy.test]", "]proxy.test["] {
      #expect(named.credential(for: Self.proxyChallenge(host: host, port: 3128)) == nil, "\(host)")
    }
    var v6 = Self.proxy
    v6.host = "::1"
    let literal = SessionConnection(ConnectionOptions(proxy: v6))
    #expect(literal.credential(for: Self.proxyChallenge(host: "[::1]", port: 3128)) != nil)
    #expect(literal.credential(for: Self.proxyChallenge(host: "::1", port: 3128)) != nil)
    #expect(literal.credential(for: Self.proxyChallenge(host: "[[::1]]", port: 3128)) == nil)
  }

  /// Attack: a proxy space of another kind at the proxy's host and port: an HTTP proxy's
  /// credential answering a SOCKS proxy's challenge, a SOCKS proxy's answering an HTTP
  /// one. (An HTTP proxy that tunnels `https` may report itself as an HTTPS proxy: allowed.)
  @Test func aProxySpaceOfAnotherKindGetsNothing() {
    let http = SessionConnection(ConnectionOptions(proxy: Self.proxy))
    var socksProxy = Self.proxy
    socksProxy.kind = .socks5
    let socks = SessionConnection(ConnectionOptions(proxy: socksProxy))
    for type in [NSURLProtectionSpaceSOCKSProxy, nil] {
      #expect(
        http.credential(for: Self.proxyChallenge(host: "proxy.test", port: 3128, type: type))
          == nil, "HTTP proxy's credential for a \(type ?? "nil") proxy space")
    }
    for type in [NSURLProtectionSpaceHTTPProxy, NSURLProtectionSpaceHTTPSProxy] {
      #expect(
        socks.credential(for: Self.proxyChallenge(host: "proxy.test", port: 3128, type: type))
          == nil, "SOCKS proxy's credential for a \(type) proxy space")
    }
    // Controls: the kinds that are this proxy's.
    for type in [NSURLProtectionSpaceHTTPProxy, NSURLProtectionSpaceHTTPSProxy] {
      #expect(
        http.credential(for: Self.proxyChallenge(host: "proxy.test", port: 3128, type: type)) != nil
      )
    }
    #expect(
      socks.credential(
        for: Self.proxyChallenge(
          host: "proxy.test", port: 3128, type: NSURLProtectionSpaceSOCKSProxy))
        != nil)
  }

  /// Attack: a proxy-space challenge that asks for no password (server trust, a client
  /// certificate) must not be answered with the user and password, nor skip the trust policy's
  /// own answer, nor be answered `.useCredential` with a password credential.
  @Test(arguments: [serverTrust, clientCertificate])
  func aChallengeForACertificateOrTrustGetsNoPassword(_ method: String) throws {
    let connection = SessionConnection(ConnectionOptions(proxy: Self.proxy))
    let challenge = Self.proxyChallenge(host: "proxy.test", port: 3128, method: method)
    #expect(connection.credential(for: challenge) == nil)
    let (disposition, user, secret) = try Self.answer(
      SessionDelegate(connection: connection), challenge)
    #expect(secret == nil)
    #expect(user == nil)
    #expect(disposition != URLSession.AuthChallengeDisposition.useCredential.rawValue)
  }

  /// Attack: loop the proxy's challenge: once refused (any failure count but 0, however odd),
  /// the delegate answers as any other challenge, without the password; the one credential it
  /// gives is not stored anywhere.
  @Test(arguments: [1, 2, 50, Int.max, -1, Int.min])
  func aRefusedCredentialIsNotOfferedAgain(_ failures: Int) throws {
    let connection = SessionConnection(ConnectionOptions(proxy: Self.proxy))
    let delegate = SessionDelegate(connection: connection)
    let challenge = Self.proxyChallenge(host: "proxy.test", port: 3128, failures: failures)
    #expect(connection.credential(for: challenge) == nil)
    let (disposition, user, secret) = try Self.answer(delegate, challenge)
    #expect(disposition == URLSession.AuthChallengeDisposition.rejectProtectionSpace.rawValue)
    #expect(user == nil)
    #expect(secret == nil)
    // Control: the first try gets it, for this session only.
    let first = connection.credential(for: Self.proxyChallenge(host: "proxy.test", port: 3128))
    #expect(first?.password == Self.password)
    #expect(first?.persistence == URLCredential.Persistence.none)
  }

  /// Attack: a proxy challenge when no user name is configured: nothing is invented (no
  /// password with an empty user, no proposed credential echoed back).
  @Test func noUserNameNoCredential() throws {
    let connection = SessionConnection(
      ConnectionOptions(proxy: .init(host: "proxy.test", port: 3128)))
    let proposed = URLCredential(user: "someone", password: "else", persistence: .none)
    let challenge = Self.proxyChallenge(host: "proxy.test", port: 3128, proposed: proposed)
    #expect(connection.credential(for: challenge) == nil)
    let (disposition, user, secret) = try Self.answer(
      SessionDelegate(connection: connection), challenge)
    #expect(disposition == URLSession.AuthChallengeDisposition.rejectProtectionSpace.rawValue)
    #expect(user == nil)
    #expect(secret == nil)
  }

  /// Attack: a password without a user name is an option URLSessionTransport silently drops
  /// (`SessionConnection` keeps no credential; on Apple platforms `applyCredential` is skipped),
  /// while CurlTransport sends it (libcurl's `CURLOPT_PROXYPASSWORD` with an empty user). It
  /// must be refused as malformed, or answered as CurlTransport does: never dropped.
  @Test func aPasswordWithoutAUserNameIsNotSilentlyDropped() {
    let proxy = ConnectionOptions.Proxy(host: "proxy.test", port: 3128, password: Self.password)
    let refused = (try? ConnectionOptions(proxy: proxy).validate()) == nil
    let answered =
      SessionConnection(ConnectionOptions(proxy: proxy))
      .credential(for: Self.proxyChallenge(host: "proxy.test", port: 3128))?.password
      == Self.password
    #expect(refused || answered, "the password is neither refused nor ever sent")
  }

  // MARK: - What Linux refuses

  #if canImport(FoundationNetworking)
    static let instead =
      "; use CurlTransport (module ErrandCurl), which honours every ConnectionOptions"
    static let proxyReason =
      "FoundationNetworking ignores a session's proxy settings (it reads only the environment's "
      + "proxy variables)" + instead

    /// Attack: get any proxy past Linux's URLSessionTransport, which would silently ignore it
    /// (and send requests direct, or through the environment's proxy): `*` alone, `*` among
    /// names, SOCKS, a user without a password, an empty user and password, a proxy combined
    /// with every other option. Each is refused as `connection.proxy`, naming CurlTransport.
    @Test(arguments: [
      ConnectionOptions.Proxy(host: "proxy.test", port: 1, bypassedHosts: ["*"]),
      ConnectionOptions.Proxy(host: "proxy.test", port: 1, bypassedHosts: ["a.test", "*"]),
      ConnectionOptions.Proxy(.socks5, host: "proxy.test", port: 1080),
      ConnectionOptions.Proxy(host: "proxy.test", port: 3128, username: "svc"),
      ConnectionOptions.Proxy(host: "proxy.test", port: 3128, username: "", password: ""),
      ConnectionOptions.Proxy(
        host: "10.0.0.1", port: 3128, bypassedHosts: ["10.0.0.0/8", "fd00::/8"]),
      ConnectionOptions.Proxy(host: "::1", port: 65_535, password: password),
    ])
    func everyProxyIsRefusedOnLinux(_ proxy: ConnectionOptions.Proxy) {
      for connection in [
        ConnectionOptions(proxy: proxy),
        ConnectionOptions(proxy: proxy, httpVersion: .http2),
        ConnectionOptions(
          proxy: proxy, unixSockets: ["docker": "/var/run/docker.sock"],
          hostOverrides: [.init(host: "a.test", port: 443, address: "127.0.0.1")],
          httpVersion: .http1),
      ] {
        let error = #expect(throws: UnsupportedTransportOption.self) {
          _ = try URLSessionTransport(connection: connection)
        }
        #expect(
          error
            == UnsupportedTransportOption(
              option: "connection.proxy", transport: "URLSessionTransport on Linux",
              reason: Self.proxyReason))
        for text in error.map({ printedForms(of: $0) }) ?? [] {
          #expect(!text.contains(Self.password))
        }
      }
    }

    /// Attack: every other non-default option on Linux, alone and in pairs, including an HTTP
    /// version made with a name that is not one of the listed ones: each is refused by name.
    @Test func everyOtherNonDefaultOptionIsRefusedOnLinux() {
      let cases: [(ConnectionOptions, String, String)] = [
        (
          ConnectionOptions(unixSockets: ["docker": "/var/run/docker.sock"]),
          "connection.unixSockets", "URLSession connects over TCP only"
        ),
        (
          ConnectionOptions(
            unixSockets: ["docker": "/var/run/docker.sock"], httpVersion: .http2),
          "connection.unixSockets", "URLSession connects over TCP only"
        ),
        (
          ConnectionOptions(hostOverrides: [.init(host: "a.test", port: 443, address: "::1")]),
          "connection.hostOverrides",
          "URLSession resolves names itself and takes no address in their place"
        ),
        (
          ConnectionOptions(httpVersion: .http3), "connection.httpVersion",
          "FoundationNetworking has no HTTP/3"
        ),
        (
          ConnectionOptions(httpVersion: .http1), "connection.httpVersion",
          "URLSession negotiates HTTP/2 over TLS itself and has no switch for HTTP/1.1"
        ),
        (
          ConnectionOptions(httpVersion: .http2PriorKnowledge), "connection.httpVersion",
          "URLSession negotiates HTTP/2 over TLS itself and has no switch for HTTP/2 with "
            + "prior knowledge"
        ),
        (
          ConnectionOptions(httpVersion: .init(name: "HTTP/2 ")), "connection.httpVersion",
          "URLSession negotiates HTTP/2 over TLS itself and has no switch for HTTP/2 "
        ),
      ]
      for (connection, option, reason) in cases {
        let error = #expect(throws: UnsupportedTransportOption.self, "\(connection)") {
          _ = try URLSessionTransport(connection: connection)
        }
        #expect(
          error
            == UnsupportedTransportOption(
              option: option, transport: "URLSessionTransport on Linux",
              reason: reason + Self.instead))
      }
    }

    /// Control for the two above: what Linux accepts is exactly the defaults, and it leaves
    /// nothing behind (no credential, no HTTP/3 hint, the configuration untouched).
    @Test(arguments: [ConnectionOptions.HTTPVersion.automatic, .http2])
    func onlyTheDefaultsAreAcceptedOnLinux(_ version: ConnectionOptions.HTTPVersion) throws {
      let configuration = URLSessionTransport.defaultConfiguration()
      let transport = try URLSessionTransport(
        configuration: configuration, connection: ConnectionOptions(httpVersion: version))
      #expect(transport.delegate?.connection.assumesHTTP3 == false)
      #expect(transport.delegate.map { "\($0.connection)" } == "no proxy credential")
      #expect(configuration.connectionProxyDictionary == nil)
    }

    /// Attack: malformed options next to unsupported ones: the malformed one is reported, as
    /// `InvalidConnectionOption`, before the platform is asked, and never quotes the password.
    @Test func aMalformedOptionIsReportedBeforeAnUnsupportedOne() {
      let cases: [(ConnectionOptions, String)] = [
        (
          ConnectionOptions(proxy: Self.proxy, unixSockets: ["docker": "var/run/docker.sock"]),
          "unixSockets[\"docker\"]"
        ),
        (
          ConnectionOptions(
            hostOverrides: [.init(host: "a.test", port: 443, address: "not-an-address")],
            httpVersion: .http3),
          "hostOverrides[\"a.test\"].address"
        ),
        (
          ConnectionOptions(
            proxy: Self.variant(password: Self.password + "\r"), httpVersion: .http1),
          "proxy.password"
        ),
        (
          ConnectionOptions(
            proxy: Self.proxy, unixSockets: ["Docker": "/a.sock", "docker": "/b.sock"]),
          "unixSockets"
        ),
        (
          ConnectionOptions(
            proxy: Self.proxy,
            hostOverrides: [.init(host: "a.test", port: 0, address: "127.0.0.1")]),
          "hostOverrides[\"a.test\"].port"
        ),
      ]
      for (connection, option) in cases {
        let error = #expect(throws: InvalidConnectionOption.self, "\(option)") {
          _ = try URLSessionTransport(connection: connection)
        }
        #expect(error?.option == option)
        #expect(error.map { "\($0)" }?.contains(Self.password) == false)
      }
    }

    /// Attack: odd and enormous input must neither crash (a port that does not fit 16 bits,
    /// NUL in a host) nor hang construction (10,000 bypassed hosts, 100,000 socket mappings);
    /// each ends in the right error.
    @Test(.ownThread) func oddOrEnormousInputEndsInAnError() {
      for port in [0, -1, 65_536, 70_000, Int.max, Int.min] {
        let error = #expect(throws: InvalidConnectionOption.self) {
          _ = try URLSessionTransport(
            connection: ConnectionOptions(proxy: Self.variant(port: port)))
        }
        #expect(
          error
            == InvalidConnectionOption(
              option: "proxy.port", reason: "\(port) is not a port (1 to 65535)"))
      }
      let nul = #expect(throws: InvalidConnectionOption.self) {
        _ = try URLSessionTransport(
          connection: ConnectionOptions(proxy: Self.variant(host: "proxy.test\u{0}evil.test")))
      }
      #expect(nul?.option == "proxy.host")
      #expect(nul?.reason.contains("\u{0}") == false)

      let hosts = (0..<10_000).map { "host\($0).internal.test" }
      let many = #expect(throws: UnsupportedTransportOption.self) {
        _ = try URLSessionTransport(
          connection: ConnectionOptions(proxy: Self.variant(bypassedHosts: hosts)))
      }
      #expect(many?.option == "connection.proxy")
      let lastBad = #expect(throws: InvalidConnectionOption.self) {
        _ = try URLSessionTransport(
          connection: ConnectionOptions(proxy: Self.variant(bypassedHosts: hosts + ["bad host"])))
      }
      #expect(lastBad?.option == "proxy.bypassedHosts")

      let sockets = Dictionary(
        uniqueKeysWithValues: (0..<100_000).map { ("s\($0)", "/run/s\($0).sock") })
      let map = #expect(throws: UnsupportedTransportOption.self) {
        _ = try URLSessionTransport(connection: ConnectionOptions(unixSockets: sockets))
      }
      #expect(map?.option == "connection.unixSockets")
      var clashing = sockets
      clashing["S1"] = "/run/other.sock"
      let clash = #expect(throws: InvalidConnectionOption.self) {
        _ = try URLSessionTransport(connection: ConnectionOptions(unixSockets: clashing))
      }
      #expect(clash?.option == "unixSockets")
    }
  #endif

  /// Attack: a name made only of dots passes as a host name; on Apple platforms `.` becomes the
  /// excluded domain `""` (its leading dot dropped) and `..` becomes `.`, whose meaning to
  /// Network is undocumented; as the proxy's host it names no machine. Malformed: refused.
  @Test(arguments: [
    variant(bypassedHosts: ["."]), variant(bypassedHosts: [".."]), variant(bypassedHosts: ["..."]),
    variant(host: "."), variant(host: ".."),
  ])
  func aNameOfDotsIsMalformed(_ proxy: ConnectionOptions.Proxy) {
    #expect(throws: InvalidConnectionOption.self) {
      try ConnectionOptions(proxy: proxy).validate()
    }
  }

  // MARK: - Helpers

  /// The test proxy with one field changed.
  static func variant(
    host: String = "proxy.test", port: Int = 3128, username: String? = "svc",
    password: String? = password, bypassedHosts: [String] = []
  ) -> ConnectionOptions.Proxy {
    ConnectionOptions.Proxy(
      host: host, port: port, username: username, password: password,
      bypassedHosts: bypassedHosts)
  }

  /// Every printed form of `value`, and of each child its mirrors show, as a debugger walks
  /// them (each object once, at most 20,000 values, so that a session's internals end).
  static func deepPrintedForms(_ value: Any) -> [String] {
    var forms = printedForms(of: value)
    var seen = Set<ObjectIdentifier>()
    var budget = 20_000
    func walk(_ mirror: Mirror, depth: Int) {
      guard depth < 8 else { return }
      for child in mirror.children {
        guard budget > 0 else { return }
        budget -= 1
        if type(of: child.value) is AnyClass {
          let object = child.value as AnyObject
          guard seen.insert(ObjectIdentifier(object)).inserted else { continue }
        }
        forms.append(String(describing: child.value))
        forms.append(String(reflecting: child.value))
        walk(Mirror(reflecting: child.value), depth: depth + 1)
      }
      if let parent = mirror.superclassMirror { walk(parent, depth: depth + 1) }
    }
    walk(Mirror(reflecting: value), depth: 0)
    return forms
  }

  static func proxyChallenge(
    host: String, port: Int, type: String? = NSURLProtectionSpaceHTTPProxy,
    method: String = NSURLAuthenticationMethodHTTPBasic, failures: Int = 0,
    proposed: URLCredential? = nil
  ) -> URLAuthenticationChallenge {
    URLAuthenticationChallenge(
      protectionSpace: URLProtectionSpace(
        proxyHost: host, port: port, type: type, realm: "proxy", authenticationMethod: method),
      proposedCredential: proposed, previousFailureCount: failures, failureResponse: nil,
      error: nil, sender: SilentSender())
  }

  static func serverChallenge(
    host: String, port: Int, protocol scheme: String, method: String
  ) -> URLAuthenticationChallenge {
    URLAuthenticationChallenge(
      protectionSpace: URLProtectionSpace(
        host: host, port: port, protocol: scheme, realm: "server", authenticationMethod: method),
      proposedCredential: nil, previousFailureCount: 0, failureResponse: nil, error: nil,
      sender: SilentSender())
  }

  /// What `delegate` answers `challenge` with: the disposition's raw value, and the user and
  /// password of the credential, if any.
  static func answer(
    _ delegate: SessionDelegate, _ challenge: URLAuthenticationChallenge
  ) throws -> (Int, String?, String?) {
    let session = URLSession(configuration: .ephemeral)
    defer { session.invalidateAndCancel() }
    let task = session.dataTask(with: try #require(URL(string: "http://api.test/")))
    let answer = Locked<(Int, String?, String?)?>(nil)
    delegate.urlSession(session, task: task, didReceive: challenge) { disposition, credential in
      answer.withLock { $0 = (disposition.rawValue, credential?.user, credential?.password) }
    }
    return try #require(answer.withLock { $0 })
  }

  /// A challenge's sender, which URLSession's delegate API never calls.
  final class SilentSender: NSObject, URLAuthenticationChallengeSender {
    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
    func cancel(_ challenge: URLAuthenticationChallenge) {}
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
  }
}
