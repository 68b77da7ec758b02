#if os(Linux)
  import CErrandCurl
  @_spi(Transports) import Errand
  import Foundation
  import FoundationNetworking

  /// Setting up how a transfer connects (`ConnectionOptions`): the proxy, a Unix domain
  /// socket, addresses in place of names, the HTTP version. The options were checked when the
  /// transport was created (`ConnectionOptions.validate()`).
  extension CurlTransfer {
    func configure(_ connection: ConnectionOptions, for request: HTTPRequest) throws {
      if let socket = connection.unixSocket(for: request.url) {
        try setString(CurlOption.unixSocketPath, socket)
        // Over the socket, never through a proxy (the environment's included).
        try setString(CurlOption.proxy, "")
      } else if let proxy = connection.proxy {
        try setString(CurlOption.proxy, "\(proxy.kind)://\(proxy.authority)")
        if let username = proxy.username {
          try setString(CurlOption.proxyUsername, username)
        }
        if let password = proxy.password {
          try setString(CurlOption.proxyPassword, password)
        }
        // Set even when empty, so that the environment's `no_proxy` does not apply to a proxy
        // the app chose. libcurl honours `*` only as the whole list, so `*` anywhere in it
        // stands for the whole list.
        try setString(
          CurlOption.noProxy,
          proxy.bypassedHosts.contains("*") ? "*" : proxy.bypassedHosts.joined(separator: ","))
      }
      if !connection.hostOverrides.isEmpty {
        var list: UnsafeMutableRawPointer?
        for override in connection.hostOverrides {
          let address =
            override.address.contains(":") ? "[\(override.address)]" : override.address
          let line = "\(override.host):\(override.port):\(address)"
          guard let appended = errand_curl_slist_append(list, line) else {
            resolveList = list
            throw URLError(.cannotCreateFile, userInfo: [NSURLErrorFailingURLErrorKey: url])
          }
          list = appended
        }
        resolveList = list
        try setPointer(CurlOption.resolve, list)
      }
      if let version = Self.curlHTTPVersion(connection.httpVersion) {
        try setLong(CurlOption.httpVersion, version)
      }
    }

    /// Whether a request to `url` may share a connection with others (HTTP/2): over TLS, unless
    /// HTTP/1.1 is asked for, or over cleartext with HTTP/2 by prior knowledge.
    static func multiplexes(_ url: URL, _ version: ConnectionOptions.HTTPVersion) -> Bool {
      switch version {
      case .http1: false
      case .http2PriorKnowledge: true
      default: url.scheme?.lowercased() == "https"
      }
    }

    /// libcurl's `CURL_HTTP_VERSION_…` for `version`; `nil` for libcurl's default.
    static func curlHTTPVersion(_ version: ConnectionOptions.HTTPVersion) -> Int? {
      switch version {
      case .http1: 2  // CURL_HTTP_VERSION_1_1
      case .http2: 4  // CURL_HTTP_VERSION_2TLS
      case .http2PriorKnowledge: 5  // CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
      case .http3: 30  // CURL_HTTP_VERSION_3
      default: nil
      }
    }
  }
#endif
