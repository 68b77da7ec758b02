import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(Network)
  import Network
#endif

extension URLSessionTransport {
  /// Create a transport with its own session that connects as `connection` says (a proxy with
  /// its credentials, HTTP/3) and trusts servers as `trust` says.
  ///
  /// ```swift
  /// var connection = ConnectionOptions()
  /// connection.proxy = .init(.socks5, host: "proxy.internal", port: 1080)
  /// let transport = try URLSessionTransport(connection: connection)
  /// ```
  ///
  /// URLSession honours fewer connection options than `CurlTransport` (module ErrandCurl), and
  /// fewer on Linux than on Apple platforms; what it cannot honour is refused here, by name,
  /// rather than left out:
  ///
  /// | Option | Apple platforms | Linux |
  /// |---|---|---|
  /// | ``ConnectionOptions/proxy`` | macOS 14, iOS 17, tvOS 17, watchOS 10 and later (`proxyConfigurations`) | refused |
  /// | ``ConnectionOptions/Proxy/bypassedHosts`` | names, and `*`; addresses and ranges refused | refused |
  /// | ``ConnectionOptions/unixSockets`` | refused | refused |
  /// | ``ConnectionOptions/hostOverrides`` | refused | refused |
  /// | ``ConnectionOptions/HTTPVersion/automatic``, ``ConnectionOptions/HTTPVersion/http2`` | yes (the default) | yes (the default) |
  /// | ``ConnectionOptions/HTTPVersion/http3`` | yes (`assumesHTTP3Capable`); refused beside a proxy | refused |
  /// | ``ConnectionOptions/HTTPVersion/http1``, ``ConnectionOptions/HTTPVersion/http2PriorKnowledge`` | refused | refused |
  ///
  /// On Apple platforms an HTTP proxy tunnels every request with `CONNECT`, plain `http` ones
  /// too, and a proxy that cannot be reached fails the call: it never falls back to a direct
  /// connection. The proxy's credentials go to the proxy only; `*` among the bypassed hosts
  /// turns every proxy off, the system's included.
  /// - Parameters:
  ///   - configuration: The session configuration, used as
  ///     ``init(configuration:trustedRedirectHosts:)`` uses it, with the proxy set on a copy.
  ///   - trustedRedirectHosts: Hosts that may receive the request's credentials across origins.
  ///   - connection: How requests connect.
  ///   - trust: Whom requests trust and what they present; the system's rules by default.
  /// - Throws: ``UnsupportedTransportOption`` for an option this platform's URLSession cannot
  ///   honour (see the table above, and ``init(configuration:trustedRedirectHosts:trust:)`` for
  ///   `trust`); ``InvalidConnectionOption`` for an option that is malformed.
  public convenience init(
    configuration: URLSessionConfiguration = URLSessionTransport.defaultConfiguration(),
    trustedRedirectHosts: Set<String> = [], connection: ConnectionOptions,
    trust: TrustPolicy = TrustPolicy()
  ) throws {
    try connection.validate()
    try Self.checkSupported(connection)
    try Self.checkSupported(trust)
    let loaded = try LoadedTrust(trust)
    #if canImport(Security)
      // Opened now, so that a wrong passphrase fails here and not at a server's challenge.
      if case .pkcs12 = trust.clientCertificate?.storage, SessionDelegate.identity(loaded) == nil {
        throw InvalidConnectionOption(
          option: "trust.clientCertificate",
          reason: "the PKCS#12 data could not be opened with the passphrase given")
      }
    #endif
    self.init(
      configuration: try Self.configuration(configuration, connecting: connection),
      trustedRedirectHosts: trustedRedirectHosts, loadedTrust: loaded,
      connection: SessionConnection(connection))
  }

  /// Refuse the connection options this platform's URLSession cannot honour.
  static func checkSupported(_ connection: ConnectionOptions) throws {
    #if canImport(FoundationNetworking)
      let transport = "URLSessionTransport on Linux"
      let instead = "; use CurlTransport (module ErrandCurl), which honours every ConnectionOptions"
      if connection.proxy != nil {
        throw UnsupportedTransportOption(
          option: "connection.proxy", transport: transport,
          reason: "FoundationNetworking ignores a session's proxy settings (it reads only the "
            + "environment's proxy variables)" + instead)
      }
    #else
      let transport = "URLSessionTransport"
      let instead = "; CurlTransport (module ErrandCurl, Linux) honours it"
      if connection.proxy != nil, connection.httpVersion == .http3 {
        // QUIC does not go through an HTTP CONNECT proxy, and Apple does not document whether
        // URLSession would then connect around it: refused rather than risked.
        throw UnsupportedTransportOption(
          option: "connection.httpVersion", transport: transport,
          reason: "HTTP/3 with a proxy could reach servers around the proxy" + instead)
      }
      if let proxy = connection.proxy, !proxy.bypassedHosts.contains("*"),
        let address = proxy.bypassedHosts.first(where: {
          ConnectionOptions.isAddress($0) || ConnectionOptions.isRange($0)
        })
      {
        throw UnsupportedTransportOption(
          option: "connection.proxy.bypassedHosts", transport: transport,
          reason: "URLSession's proxy configuration excludes domains by name, and \(address) is "
            + "an address" + instead)
      }
    #endif
    if !connection.unixSockets.isEmpty {
      throw UnsupportedTransportOption(
        option: "connection.unixSockets", transport: transport,
        reason: "URLSession connects over TCP only" + instead)
    }
    if !connection.hostOverrides.isEmpty {
      throw UnsupportedTransportOption(
        option: "connection.hostOverrides", transport: transport,
        reason: "URLSession resolves names itself and takes no address in their place" + instead)
    }
    switch connection.httpVersion {
    case .automatic, .http2:
      break
    case .http3:
      #if canImport(FoundationNetworking)
        throw UnsupportedTransportOption(
          option: "connection.httpVersion", transport: transport,
          reason: "FoundationNetworking has no HTTP/3" + instead)
      #else
        break
      #endif
    default:
      throw UnsupportedTransportOption(
        option: "connection.httpVersion", transport: transport,
        reason: "URLSession negotiates HTTP/2 over TLS itself and has no switch for "
          + "\(connection.httpVersion)" + instead)
    }
  }

  /// A copy of `configuration` that goes through `connection`'s proxy; `configuration` itself
  /// when there is none.
  static func configuration(
    _ configuration: URLSessionConfiguration, connecting connection: ConnectionOptions
  ) throws -> URLSessionConfiguration {
    guard let proxy = connection.proxy else { return configuration }
    let copy = configuration.copy() as? URLSessionConfiguration ?? configuration
    if proxy.bypassedHosts.contains("*") {
      // No proxy for any host: an empty dictionary, not `nil`, which means the system's.
      copy.connectionProxyDictionary = [:]
      return copy
    }
    #if canImport(Network)
      guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) else {
        throw UnsupportedTransportOption(
          option: "connection.proxy", transport: "URLSessionTransport",
          reason: "URLSession takes a proxy with its credentials from macOS 14, iOS 17, tvOS 17 "
            + "and watchOS 10 (proxyConfigurations); on an earlier system leave the proxy to "
            + "the system's settings, or set the configuration's connectionProxyDictionary")
      }
      guard let port = NWEndpoint.Port(rawValue: UInt16(clamping: proxy.port)) else {
        throw InvalidConnectionOption(option: "proxy.port", reason: "\(proxy.port) is not a port")
      }
      let endpoint = NWEndpoint.hostPort(host: NWEndpoint.Host(proxy.host), port: port)
      var configured =
        proxy.kind == .socks5
        ? ProxyConfiguration(socksv5Proxy: endpoint)
        : ProxyConfiguration(httpCONNECTProxy: endpoint, tlsOptions: nil)
      if proxy.username != nil || proxy.password != nil {
        configured.applyCredential(
          username: proxy.username ?? "", password: proxy.password ?? "")
      }
      configured.excludedDomains = proxy.bypassedHosts.map {
        $0.hasPrefix(".") ? String($0.dropFirst()) : $0
      }
      configured.allowFailover = false
      copy.proxyConfigurations = [configured]
    #endif
    return copy
  }
}

/// What a session Errand creates needs of its ``ConnectionOptions`` at run time: the proxy's
/// credential, for a challenge from the proxy, and whether requests try HTTP/3 first.
struct SessionConnection: Sendable, CustomStringConvertible, CustomReflectable {
  /// The proxy's host and port, and its credential, if it has one.
  private let proxy: (host: String, port: Int, isSOCKS: Bool, username: String, password: String)?
  /// Whether every request is sent assuming the server speaks HTTP/3.
  let assumesHTTP3: Bool

  /// Nothing: no proxy credential, no HTTP/3 hint.
  init() {
    proxy = nil
    assumesHTTP3 = false
  }

  /// What `options` asks of a session at run time.
  init(_ options: ConnectionOptions) {
    // A password without a user name goes with an empty one, as CurlTransport sends it.
    if let proxy = options.proxy, proxy.username != nil || proxy.password != nil {
      self.proxy = (
        host: proxy.host.lowercased(), port: proxy.port, isSOCKS: proxy.kind == .socks5,
        username: proxy.username ?? "", password: proxy.password ?? ""
      )
    } else {
      self.proxy = nil
    }
    assumesHTTP3 = options.httpVersion == .http3
  }

  /// The proxy's credential for `challenge`: only from the proxy it belongs to (its host, port
  /// and kind), only for a method that takes a password, and only the first time (a proxy that
  /// refused it once does not get it again). A server-trust or client-certificate challenge
  /// never gets it: it goes on to the trust policy.
  func credential(for challenge: URLAuthenticationChallenge) -> URLCredential? {
    let space = challenge.protectionSpace
    guard let proxy, space.isProxy(), challenge.previousFailureCount == 0,
      Self.passwordMethods.contains(space.authenticationMethod),
      Self.isSOCKS(space.proxyType) == proxy.isSOCKS,
      Self.unbracketed(space.host.lowercased()) == proxy.host, space.port == proxy.port
    else { return nil }
    return URLCredential(user: proxy.username, password: proxy.password, persistence: .none)
  }

  /// The authentication methods a user name and password answer.
  static let passwordMethods: Set<String> = [
    NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodHTTPDigest,
    NSURLAuthenticationMethodDefault,
  ]

  /// Whether a protection space's proxy type is SOCKS's (`nil` or any other is an HTTP proxy's
  /// only when it names HTTP or HTTPS).
  private static func isSOCKS(_ type: String?) -> Bool? {
    switch type?.lowercased() {
    case NSURLProtectionSpaceSOCKSProxy.lowercased(): return true
    case NSURLProtectionSpaceHTTPProxy.lowercased(), NSURLProtectionSpaceHTTPSProxy.lowercased():
      return false
    default: return nil
    }
  }

  /// An IPv6 literal without the brackets that wrap it (`[::1]` is `::1`); any other host as it
  /// is.
  private static func unbracketed(_ host: String) -> String {
    guard host.hasPrefix("["), host.hasSuffix("]"), host.count > 2 else { return host }
    let inner = host.dropFirst().dropLast()
    return inner.contains(":") && !inner.contains("[") && !inner.contains("]")
      ? String(inner) : host
  }

  /// `request` as this connection sends it: marked as HTTP/3-capable when HTTP/3 is asked for
  /// (Apple platforms; Linux refuses HTTP/3 when the transport is made).
  func prepare(_ request: inout URLRequest) {
    #if canImport(Network)
      if assumesHTTP3 { request.assumesHTTP3Capable = true }
    #endif
  }

  /// The proxy's host and port, and the user name; never the password.
  var description: String {
    let proxy =
      proxy.map { "proxy \($0.username):***@\($0.host):\($0.port)" } ?? "no proxy credential"
    return assumesHTTP3 ? "\(proxy), HTTP/3" : proxy
  }

  /// The same as ``description``, for `dump` and debuggers: the synthesized mirror would show
  /// the password.
  var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
