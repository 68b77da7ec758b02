import Foundation

/// How a transport reaches servers: through a proxy, over a Unix domain socket, at addresses you
/// choose, and with which HTTP version.
///
/// ```swift
/// var connection = ConnectionOptions()
/// connection.proxy = .init(host: "proxy.internal", port: 3128, username: "svc", password: secret)
/// connection.unixSockets = ["docker": "/var/run/docker.sock"]   // http://docker/v1.45/info
/// connection.httpVersion = .http1
/// let transport = try CurlTransport(connection: connection)
/// ```
///
/// `CurlTransport` honours every option; ``URLSessionTransport`` those its platform's URLSession
/// can, and refuses the rest when it is made
/// (``URLSessionTransport/init(configuration:trustedRedirectHosts:connection:trust:)``). Its
/// ``description`` never shows a proxy's password.
public struct ConnectionOptions: Sendable, Hashable, CustomStringConvertible {
  /// The proxy every request goes through, except to the hosts it bypasses; `nil` (the default)
  /// leaves the choice to the environment (`http_proxy`, `https_proxy`, `all_proxy`,
  /// `no_proxy`), as libcurl reads it.
  public var proxy: Proxy?
  /// Unix domain sockets by host name: a request to `http://docker/…` with
  /// `["docker": "/var/run/docker.sock"]` is sent over that socket, its `Host` header still
  /// `docker`. Names are matched exactly, ignoring case; a redirect never leads to or from such
  /// a host across origins.
  public var unixSockets: [String: String]
  /// Addresses to connect to in place of what the name resolves to, for tests and split-horizon
  /// setups. TLS still verifies the certificate against the name in the URL.
  /// A host reached through ``proxy`` is resolved by the proxy, so an override does not apply
  /// to it: bypass the proxy for it (``Proxy/bypassedHosts``) to connect to the address given.
  public var hostOverrides: [HostOverride]
  /// The HTTP version to use.
  public var httpVersion: HTTPVersion

  /// Options that change nothing: the environment's proxy, DNS, and HTTP/2 over TLS where the
  /// server offers it.
  /// - Parameters:
  ///   - proxy: The proxy every request goes through; `nil` leaves it to the environment.
  ///   - unixSockets: Unix domain sockets by host name.
  ///   - hostOverrides: Addresses to connect to in place of what names resolve to.
  ///   - httpVersion: The HTTP version to use.
  public init(
    proxy: Proxy? = nil, unixSockets: [String: String] = [:], hostOverrides: [HostOverride] = [],
    httpVersion: HTTPVersion = .automatic
  ) {
    self.proxy = proxy
    self.unixSockets = unixSockets
    self.hostOverrides = hostOverrides
    self.httpVersion = httpVersion
  }

  /// The Unix domain socket a request to `url` goes over, if its host has one.
  package func unixSocket(for url: URL) -> String? {
    guard !unixSockets.isEmpty, let host = url.host?.lowercased() else { return nil }
    return unixSockets.first { $0.key.lowercased() == host }?.value
  }

  /// The options, on one line, without a proxy's password.
  public var description: String {
    var parts: [String] = []
    if let proxy { parts.append("proxy \(proxy)") }
    for (host, path) in unixSockets.sorted(by: { $0.key < $1.key }) {
      parts.append("\(host) over \(path)")
    }
    parts += hostOverrides.map(\.description)
    if httpVersion != .automatic { parts.append(httpVersion.description) }
    return parts.isEmpty ? "default connection options" : parts.joined(separator: ", ")
  }
}

extension ConnectionOptions {
  /// A proxy that requests go through (``ConnectionOptions/proxy``).
  ///
  /// An HTTP proxy receives plain `http` requests whole and tunnels `https` ones with `CONNECT`;
  /// a SOCKS5 proxy tunnels both and resolves names itself. The credentials go to the proxy only,
  /// never to the server, and ``description`` never shows the password.
  public struct Proxy: Sendable, Hashable, CustomStringConvertible {
    /// How the proxy is spoken to.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
      let scheme: String

      /// An HTTP proxy (`CONNECT` for `https`).
      public static let http = Kind(scheme: "http")
      /// A SOCKS5 proxy that resolves host names itself (`socks5h`).
      public static let socks5 = Kind(scheme: "socks5h")

      /// The kind's name: `http` or `socks5h`.
      public var description: String { scheme }
    }

    /// How the proxy is spoken to.
    public var kind: Kind
    /// The proxy's host name, or its IPv4 or IPv6 address (without brackets).
    public var host: String
    /// The proxy's port.
    public var port: Int
    /// The user name the proxy asks for, if any.
    public var username: String?
    /// The password the proxy asks for, if any: never printed.
    public var password: String?
    /// Hosts reached directly, not through the proxy: a name matches itself and its subdomains,
    /// ignoring case (`example.com` and `.example.com` both match `example.com` and
    /// `api.example.com`, not `notexample.com`); an IPv4 or IPv6 address (without brackets)
    /// matches itself, and a range in CIDR notation (`10.0.0.0/8`, `fd00::/8`) every address in
    /// it (with libcurl 7.86 or later; an older one matches a range against nothing, so such a
    /// request goes through the proxy); `*`, as an entry of its own, bypasses the proxy for
    /// every host. There are no other wildcards: a `*` inside
    /// a name (`*.example.com`) is refused when the transport is made.
    public var bypassedHosts: [String]

    /// A proxy.
    /// - Parameters:
    ///   - kind: How the proxy is spoken to; HTTP by default.
    ///   - host: The proxy's host name or address.
    ///   - port: The proxy's port.
    ///   - username: The user name the proxy asks for, if any.
    ///   - password: The password the proxy asks for, if any.
    ///   - bypassedHosts: Hosts reached directly.
    public init(
      _ kind: Kind = .http, host: String, port: Int, username: String? = nil,
      password: String? = nil, bypassedHosts: [String] = []
    ) {
      self.kind = kind
      self.host = host
      self.port = port
      self.username = username
      self.password = password
      self.bypassedHosts = bypassedHosts
    }

    /// The proxy, as `http://user:***@host:port`, without its password (nor credentials
    /// pasted into ``host`` by mistake).
    public var description: String {
      let user = username.map { "\($0)\(password == nil ? "" : ":***")@" } ?? ""
      let bypass =
        bypassedHosts.isEmpty ? "" : " (bypassed: \(bypassedHosts.joined(separator: ", ")))"
      return "\(kind)://\(user)\(ConnectionOptions.hidingCredentials(in: authority))\(bypass)"
    }

    /// `host:port`, an IPv6 address in brackets: the proxy's part of its URL.
    package var authority: String {
      host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
  }

  /// `text` with whatever precedes its last `@` (a URL's user name and password, pasted where
  /// a host belongs) replaced by `***`, for every printed form.
  package static func hidingCredentials(in text: String) -> String {
    guard let at = text.lastIndex(of: "@") else { return text }
    return "***" + text[at...]
  }

  /// An address to connect to for a host and port, in place of what the name resolves to
  /// (``ConnectionOptions/hostOverrides``).
  public struct HostOverride: Sendable, Hashable, CustomStringConvertible {
    /// The host name, as in the URL.
    public var host: String
    /// The port, as in the URL (or its scheme's: 80, 443).
    public var port: Int
    /// The address to connect to: an IPv4 or IPv6 address.
    public var address: String

    /// An override.
    /// - Parameters:
    ///   - host: The host name, as in the URL.
    ///   - port: The port, as in the URL (or its scheme's).
    ///   - address: The IPv4 or IPv6 address to connect to.
    public init(host: String, port: Int, address: String) {
      self.host = host
      self.port = port
      self.address = address
    }

    /// The override, as `api.example.com:443 → 127.0.0.1` (an IPv6 address in brackets).
    public var description: String {
      "\(host):\(port) → \(address.contains(":") ? "[\(address)]" : address)"
    }
  }

  /// The HTTP version a transport speaks (``ConnectionOptions/httpVersion``).
  public struct HTTPVersion: Sendable, Hashable, CustomStringConvertible {
    let name: String

    /// HTTP/2 over TLS where the server offers it (ALPN), else HTTP/1.1: the default.
    public static let automatic = HTTPVersion(name: "automatic")
    /// HTTP/1.1 only.
    public static let http1 = HTTPVersion(name: "HTTP/1.1")
    /// HTTP/2 over TLS, negotiated (ALPN), HTTP/1.1 when the server does not offer it; plain
    /// `http` stays HTTP/1.1.
    public static let http2 = HTTPVersion(name: "HTTP/2")
    /// HTTP/2 from the first byte, over plain `http` too, for a server known to speak it (h2c).
    public static let http2PriorKnowledge = HTTPVersion(name: "HTTP/2 with prior knowledge")
    /// HTTP/3 over QUIC, falling back to HTTP/2 or HTTP/1.1 over TCP; a transport whose library
    /// has no HTTP/3 refuses it when it is created.
    public static let http3 = HTTPVersion(name: "HTTP/3")

    /// The version's name.
    public var description: String { name }
  }
}

extension ConnectionOptions.Proxy: CustomReflectable {
  /// The proxy's fields for `dump`, debuggers and test failures, with the password (if any) as
  /// `***` and credentials pasted into the host hidden: the synthesized mirror would show them.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "kind": kind, "host": ConnectionOptions.hidingCredentials(in: host), "port": port,
        "username": username as Any, "password": password.map { _ in "***" } as Any,
        "bypassedHosts": bypassedHosts,
      ], displayStyle: .struct)
  }
}
