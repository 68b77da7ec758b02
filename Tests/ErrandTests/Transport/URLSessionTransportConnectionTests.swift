import Foundation
import TestSupport
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(Network)
  import Network
#endif

/// What `URLSessionTransport` does with `ConnectionOptions`: what the platform's URLSession can
/// honour is set on the session, what it cannot is refused by name when the transport is made,
/// and the proxy's password is never printed.
@Suite(.timeLimit(.minutes(3))) struct URLSessionTransportConnectionTests {
  static let password = "hunter2-proxy-secret"
  static let proxy = ConnectionOptions.Proxy(
    host: "Proxy.Test", port: 3128, username: "svc", password: password)

  /// Options every platform's URLSession refuses, with the option each error names.
  static let refusedEverywhere: [(ConnectionOptions, String)] = [
    (ConnectionOptions(unixSockets: ["docker": "/var/run/docker.sock"]), "connection.unixSockets"),
    (
      ConnectionOptions(hostOverrides: [.init(host: "a.test", port: 443, address: "127.0.0.1")]),
      "connection.hostOverrides"
    ),
    (ConnectionOptions(httpVersion: .http1), "connection.httpVersion"),
    (ConnectionOptions(httpVersion: .http2PriorKnowledge), "connection.httpVersion"),
  ]

  #if canImport(FoundationNetworking)
    /// Linux's URLSession takes no proxy of a session's, no socket path, no address and no
    /// HTTP version: each is refused, naming the option and the transport that honours it.
    static let refused =
      refusedEverywhere + [
        (ConnectionOptions(proxy: proxy), "connection.proxy"),
        (
          ConnectionOptions(proxy: .init(.socks5, host: "proxy.test", port: 1080)),
          "connection.proxy"
        ),
        (
          ConnectionOptions(proxy: .init(host: "proxy.test", port: 1, bypassedHosts: ["*"])),
          "connection.proxy"
        ),
        (ConnectionOptions(httpVersion: .http3), "connection.httpVersion"),
      ]
    static let transport = "URLSessionTransport on Linux"
  #else
    /// Apple's URLSession has no Unix sockets, no address overrides and no HTTP version switch,
    /// and its proxy configuration excludes domains by name only.
    static let refused =
      refusedEverywhere + [
        (
          ConnectionOptions(proxy: .init(host: "proxy.test", port: 1, bypassedHosts: ["10.0.0.1"])),
          "connection.proxy.bypassedHosts"
        ),
        (
          ConnectionOptions(proxy: .init(host: "proxy.test", port: 1, bypassedHosts: ["fd00::/8"])),
          "connection.proxy.bypassedHosts"
        ),
      ]
    static let transport = "URLSessionTransport"
  #endif

  @Test(arguments: refused)
  func whatURLSessionCannotHonourIsRefusedByName(_ connection: ConnectionOptions, option: String) {
    let error = #expect(throws: UnsupportedTransportOption.self) {
      _ = try URLSessionTransport(connection: connection)
    }
    #expect(error?.option == option)
    #expect(error?.transport == Self.transport)
    #expect(error?.reason.contains("CurlTransport") == true)
    #expect(error.map { "\($0)" }?.contains(Self.password) == false)
  }

  /// HTTP/2 over TLS where the server offers it is what URLSession does anyway.
  @Test(arguments: [ConnectionOptions.HTTPVersion.automatic, .http2])
  func theDefaultVersionsAreAccepted(_ version: ConnectionOptions.HTTPVersion) throws {
    let transport = try URLSessionTransport(connection: ConnectionOptions(httpVersion: version))
    #expect(transport.delegate?.connection.assumesHTTP3 == false)
    #expect(transport.session.configuration.urlCache == nil)
  }

  /// A malformed option is an `InvalidConnectionOption`, as with CurlTransport, before the
  /// platform is asked; the password is never quoted.
  @Test func aMalformedOptionIsInvalidBeforeItIsUnsupported() {
    var proxy = Self.proxy
    proxy.password = Self.password + "\n"
    let error = #expect(throws: InvalidConnectionOption.self) {
      _ = try URLSessionTransport(connection: ConnectionOptions(proxy: proxy))
    }
    #expect(error?.option == "proxy.password")
    #expect(error.map { "\($0)" }?.contains(Self.password) == false)
  }

  /// A proxy's challenge gets the proxy's credential once, from that proxy only; any other
  /// challenge, or a second try, gets none from it.
  @Test(arguments: [
    ("proxy.test", 3128, true, 0, true),
    ("PROXY.TEST", 3128, true, 0, true),
    ("proxy.test", 3128, true, 1, false),
    ("proxy.test", 8080, true, 0, false),
    ("other.test", 3128, true, 0, false),
    ("proxy.test", 3128, false, 0, false),
  ])
  func theProxyCredentialAnswersItsProxyOnce(
    host: String, port: Int, isProxy: Bool, failures: Int, answered: Bool
  ) {
    let connection = SessionConnection(ConnectionOptions(proxy: Self.proxy))
    let credential = connection.credential(
      for: Self.challenge(host: host, port: port, isProxy: isProxy, failures: failures))
    #expect((credential != nil) == answered)
    if answered {
      #expect(credential?.user == "svc")
      #expect(credential?.password == Self.password)
    }
  }

  /// Without a user name there is no credential to give.
  @Test func aProxyWithoutUserNameHasNoCredential() {
    let connection = SessionConnection(
      ConnectionOptions(proxy: .init(host: "proxy.test", port: 3128)))
    #expect(connection.credential(for: Self.challenge(host: "proxy.test", port: 3128)) == nil)
  }

  /// The delegate answers the proxy's challenge with the credential, and a second one as any
  /// other challenge: rejected.
  @Test func theDelegateAnswersTheProxysChallenge() throws {
    let delegate = SessionDelegate(
      connection: SessionConnection(ConnectionOptions(proxy: Self.proxy)))
    let session = URLSession(configuration: .ephemeral)
    defer { session.invalidateAndCancel() }
    let task = session.dataTask(with: try #require(URL(string: "http://api.test/")))
    for (failures, expected) in [
      (0, URLSession.AuthChallengeDisposition.useCredential), (1, .rejectProtectionSpace),
    ] {
      let answer = Locked<(URLSession.AuthChallengeDisposition, URLCredential?)?>(nil)
      delegate.urlSession(
        session, task: task,
        didReceive: Self.challenge(host: "proxy.test", port: 3128, failures: failures)
      ) { disposition, credential in answer.withLock { $0 = (disposition, credential) } }
      let (disposition, credential) = try #require(answer.withLock { $0 })
      #expect(disposition == expected)
      #expect((credential?.password == Self.password) == (failures == 0))
    }
  }

  /// No printed form of what the session keeps shows the proxy's password.
  @Test func thePasswordIsNeverPrinted() {
    let connection = SessionConnection(
      ConnectionOptions(proxy: Self.proxy, httpVersion: .http3))
    for text in printedForms(of: connection)
      + printedForms(of: SessionDelegate(connection: connection))
    {
      #expect(!text.contains(Self.password))
    }
    #expect("\(connection)" == "proxy svc:***@proxy.test:3128, HTTP/3")
  }

  static func challenge(
    host: String, port: Int, isProxy: Bool = true, failures: Int = 0
  ) -> URLAuthenticationChallenge {
    let space =
      isProxy
      ? URLProtectionSpace(
        proxyHost: host, port: port, type: NSURLProtectionSpaceHTTPProxy, realm: nil,
        authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
      : URLProtectionSpace(
        host: host, port: port, protocol: "http", realm: nil,
        authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
    return URLAuthenticationChallenge(
      protectionSpace: space, proposedCredential: nil, previousFailureCount: failures,
      failureResponse: nil, error: nil, sender: IgnoredChallengeSender())
  }

  #if !canImport(FoundationNetworking)
    /// On Apple platforms the proxy is the session's, with its credential and exclusions, and
    /// never fails over to a direct connection.
    @Test func theProxyIsTheSessions() throws {
      var proxy = Self.proxy
      proxy.bypassedHosts = [".internal.test", "example.com"]
      guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) else {
        #expect(throws: UnsupportedTransportOption.self) {
          _ = try URLSessionTransport(connection: ConnectionOptions(proxy: proxy))
        }
        return
      }
      let transport = try URLSessionTransport(connection: ConnectionOptions(proxy: proxy))
      let configured = try #require(transport.session.configuration.proxyConfigurations.first)
      #expect(transport.session.configuration.proxyConfigurations.count == 1)
      #expect(configured.excludedDomains == ["internal.test", "example.com"])
      #expect(!configured.allowFailover)
    }

    /// `*` bypasses every proxy, the system's too.
    @Test func bypassingEveryHostTurnsEveryProxyOff() throws {
      let transport = try URLSessionTransport(
        connection: ConnectionOptions(
          proxy: .init(host: "proxy.test", port: 1, bypassedHosts: ["*"])))
      #expect(transport.session.configuration.connectionProxyDictionary?.isEmpty == true)
    }

    /// HTTP/3 marks every request as worth trying over QUIC first.
    @Test func http3MarksRequests() throws {
      let transport = try URLSessionTransport(connection: ConnectionOptions(httpVersion: .http3))
      #expect(transport.delegate?.connection.assumesHTTP3 == true)
      var request = URLRequest(url: try #require(URL(string: "https://api.test/")))
      transport.delegate?.connection.prepare(&request)
      #expect(request.assumesHTTP3Capable)
    }
  #endif
}
