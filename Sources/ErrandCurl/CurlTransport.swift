#if os(Linux)
  @_spi(Transports) import Errand
  import Foundation
  import FoundationNetworking

  /// A Linux `Transport` that drives libcurl's multi interface from one thread of its own,
  /// without going through URLSession.
  ///
  /// ```swift
  /// let client = APIClient(baseURL: base, transport: CurlTransport())
  /// ```
  ///
  /// FoundationNetworking drives libcurl too, but schedules every callback of every request
  /// through operation queues and bridging; this transport hands requests to one thread that owns
  /// a libcurl multi handle and resumes the caller when the answer is in. It keeps every rule
  /// `URLSessionTransport` has: redirects followed by Errand's own policy (credentials and secret
  /// headers never cross origins, no HTTPS to HTTP, only `http` and `https`, `307`/`308` bodies
  /// sent again within the origin), conflicting `Content-Length` refused, size limits enforced as
  /// bytes arrive, the deadline and cancellation ending the wait at once, and libcurl's failures
  /// reported as the `URLError` URLSession reports for the same fault. A streamed body whose
  /// reader falls a memory budget behind pauses the transfer until the reader catches up.
  ///
  /// libcurl is loaded at run time from `libcurl.so.4` (which FoundationNetworking also needs),
  /// so building needs no libcurl development package. Connections are reused across requests;
  /// HTTP/2 is used over TLS where the server offers it; servers are verified against the
  /// system's CA store (or the certificate authorities you name); the proxy environment
  /// variables (`http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`) apply as libcurl reads
  /// them.
  ///
  /// Linux only: on Apple platforms use `URLSessionTransport`.
  public final class CurlTransport: Transport {
    private let engine: Result<CurlEngine, CurlUnavailableError>
    private let trustedRedirectHosts: Set<String>
    private let certificateAuthorities: String?
    /// How requests connect; `nil` for libcurl's defaults.
    private let connection: ConnectionOptions?
    /// Whom requests trust and what they present, its files read; `nil` for libcurl's defaults.
    private let trust: LoadedTrust?

    /// Create a transport with its own libcurl thread and connection pool.
    /// - Parameters:
    ///   - maximumConnectionsPerHost: How many connections to one host at once; more requests
    ///     wait for one. 16 by default, as `URLSessionTransport`'s configuration.
    ///   - trustedRedirectHosts: Hosts that may receive the request's credentials, secret headers
    ///     and (after a `307`/`308`) body when a redirect from another origin leads to them; none
    ///     by default. Matched exactly, ignoring case.
    ///   - certificateAuthorities: A PEM file of the certificate authorities that HTTPS servers'
    ///     certificates must lead to, in place of the system's CA store: for a private CA or a
    ///     test server. `nil` (the default) trusts the system's store. A file that cannot be read
    ///     fails each HTTPS request with `URLError.secureConnectionFailed`, naming the file.
    public init(
      maximumConnectionsPerHost: Int = 16, trustedRedirectHosts: Set<String> = [],
      certificateAuthorities: URL? = nil
    ) {
      engine = Result { () throws(CurlUnavailableError) in
        try CurlEngine(maximumConnectionsPerHost: max(1, maximumConnectionsPerHost))
      }
      self.trustedRedirectHosts = Set(trustedRedirectHosts.map { $0.lowercased() })
      self.certificateAuthorities = certificateAuthorities?.path
      self.connection = nil
      self.trust = nil
    }

    /// Create a transport that connects as `connection` says: through a proxy, over Unix domain
    /// sockets, to addresses you choose, with the HTTP version you choose.
    ///
    /// ```swift
    /// let docker = try CurlTransport(
    ///   connection: ConnectionOptions(unixSockets: ["docker": "/var/run/docker.sock"]))
    /// let client = APIClient(baseURL: URL(string: "http://docker/v1.45")!, transport: docker)
    /// ```
    /// - Parameters:
    ///   - maximumConnectionsPerHost: How many connections to one host at once (16 by default).
    ///   - trustedRedirectHosts: Hosts that may receive credentials after a cross-origin
    ///     redirect; none by default.
    ///   - certificateAuthorities: A PEM file of the certificate authorities to trust in place
    ///     of the system's; `nil` trusts the system's store.
    ///   - connection: How requests connect.
    /// - Throws: `InvalidConnectionOption` for an option that is malformed (a host name with
    ///   spaces, a port out of range, a relative socket path, a control character anywhere), or
    ///   for `ConnectionOptions.HTTPVersion.http3` when the libcurl loaded has no HTTP/3.
    public init(
      maximumConnectionsPerHost: Int = 16, trustedRedirectHosts: Set<String> = [],
      certificateAuthorities: URL? = nil, connection: ConnectionOptions
    ) throws {
      try connection.validate()
      self.engine = try Self.makeEngine(
        maximumConnectionsPerHost: maximumConnectionsPerHost, httpVersion: connection.httpVersion)
      self.trustedRedirectHosts = Set(trustedRedirectHosts.map { $0.lowercased() })
      self.certificateAuthorities = certificateAuthorities?.path
      self.connection = connection
      self.trust = nil
    }

    /// Create a transport that trusts servers, and presents itself to them, as `trust` says:
    /// public keys pinned per host, your own certificate authorities, a client certificate.
    ///
    /// ```swift
    /// let transport = try CurlTransport(
    ///   trust: TrustPolicy(
    ///     pins: [.init(hosts: ["api.example.com"], sha256: [current, backup])],
    ///     clientCertificate: .pem(
    ///       certificate: .file(certificateFile), key: .file(keyFile), for: ["api.example.com"])))
    /// ```
    ///
    /// Every file the policy names is read here, once: a change to it later is not seen.
    /// - Parameters:
    ///   - maximumConnectionsPerHost: How many connections to one host at once (16 by default).
    ///   - trustedRedirectHosts: Hosts that may receive credentials after a cross-origin
    ///     redirect; none by default.
    ///   - connection: How requests connect; libcurl's defaults by default.
    ///   - trust: Whom requests trust and what they present.
    /// - Throws: `InvalidConnectionOption` for a part of either that is malformed or a file
    ///   that cannot be read or does not hold what it should (never quoting a passphrase or what
    ///   a file holds), and for `ConnectionOptions.HTTPVersion.http3` when the libcurl loaded has
    ///   no HTTP/3; `UnsupportedTransportOption` for a keychain identity (Apple platforms only).
    public init(
      maximumConnectionsPerHost: Int = 16, trustedRedirectHosts: Set<String> = [],
      connection: ConnectionOptions = ConnectionOptions(), trust: TrustPolicy
    ) throws {
      if case .keychain = trust.clientCertificate?.storage {
        throw UnsupportedTransportOption(
          option: "trust.clientCertificate", transport: "CurlTransport",
          reason: "a keychain identity exists on Apple platforms only (URLSessionTransport); "
            + "give the certificate as PEM or PKCS#12")
      }
      try connection.validate()
      let loaded = try LoadedTrust(trust)
      let engine = try Self.makeEngine(
        maximumConnectionsPerHost: maximumConnectionsPerHost, httpVersion: connection.httpVersion)
      var systemPaths = Self.wellKnownBundles
      if case .success(let running) = engine, let path = running.defaultCertificateBundle() {
        systemPaths.insert(path, at: 0)
      }
      self.engine = engine
      self.trustedRedirectHosts = Set(trustedRedirectHosts.map { $0.lowercased() })
      self.certificateAuthorities = nil
      self.connection = connection
      self.trust =
        loaded.certificateAuthorities == nil
          || trust.certificateAuthorities?.replacesSystemTrust == true
        ? loaded : loaded.keepingSystemTrust(LoadedTrust.firstBundle(at: systemPaths))
    }

    /// The engine (or why libcurl could not be loaded), refusing HTTP/3 when the libcurl
    /// loaded has none.
    private static func makeEngine(
      maximumConnectionsPerHost: Int, httpVersion: ConnectionOptions.HTTPVersion
    ) throws -> Result<CurlEngine, CurlUnavailableError> {
      let engine = Result { () throws(CurlUnavailableError) in
        try CurlEngine(maximumConnectionsPerHost: max(1, maximumConnectionsPerHost))
      }
      if httpVersion == .http3, case .success(let running) = engine,
        !running.supports(httpVersion: 30)
      {
        running.shutDown()
        throw InvalidConnectionOption(
          option: "httpVersion",
          reason: "the libcurl loaded (libcurl.so.4) was built without HTTP/3; use .http2")
      }
      return engine
    }

    /// Where Linux distributions keep the system's certificate authorities in one PEM bundle,
    /// after the one the libcurl loaded names: Debian and Ubuntu, Fedora and RHEL, openSUSE,
    /// Alpine.
    static let wellKnownBundles = [
      "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
      "/etc/ssl/ca-bundle.pem", "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
      "/etc/ssl/cert.pem",
    ]

    deinit {
      if case .success(let engine) = engine {
        engine.shutDown()
      }
    }

    /// Send a request and wait for the whole response.
    /// - Parameter request: The request to send.
    /// - Returns: The response, whatever its status.
    /// - Throws: The `URLError` URLSession reports for the same fault, `RefusedRedirectError` for
    ///   a redirect it would not follow, `CancellationError` as
    ///   soon as the calling task is cancelled, or ``CurlUnavailableError``;
    ///   `APIError.invalidRequest` before anything is sent for a request (or a redirect) that
    ///   fails `HTTPRequest.validate()`.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
      try await exchange(request, Exchange())
        .settlingBody(limit: request.maximumResponseSize, streams: false, deadline: nil)
    }

    /// Send a request and return when the response's head arrives; the body follows in
    /// `HTTPResponse.bodyStream` as libcurl receives it.
    /// - Parameter request: The request to send.
    /// - Returns: The head of the response, with its body stream.
    /// - Throws: What ``send(_:)`` throws before the head arrives.
    public func stream(_ request: HTTPRequest) async throws -> HTTPResponse {
      try await exchange(request, Exchange(streams: true))
        .settlingBody(limit: request.maximumResponseSize, streams: true, deadline: nil)
    }

    /// Send a request, following redirects by Errand's rules, and return at the final
    /// response's head, its body following in `bodyStream`; end the wait itself at the
    /// exchange's deadline (with `APIError.timedOut`) or when the calling task is cancelled.
    /// - Parameters:
    ///   - request: The request to send.
    ///   - exchange: Whether the caller reads the body as it arrives (in larger pieces) or
    ///     collects it, the call's deadline, who hears about the request body being sent and
    ///     about the redirects followed.
    /// - Returns: The response, whatever its status.
    /// - Throws: What ``send(_:)`` throws, `APIError.timedOut` or `CancellationError`.
    public func exchange(_ request: HTTPRequest, _ exchange: Exchange) async throws
      -> HTTPResponse
    {
      let engine = try engine.get()
      // No observer, no progress callback: libcurl then skips the work for every transfer.
      let uploadProgress = exchange.progress.map(Self.forwardOnly)
      return try await RedirectPolicy.following(
        request, exchange, trustedHosts: trustedRedirectHosts,
        maximum: RedirectPolicy.maximumRedirects
      ) { current in
        try refuseCrossingIntoASocket(from: request, to: current)
        do {
          return try await perform(current, exchange, uploadProgress: uploadProgress, on: engine)
        } catch let mismatch as PinMismatchError where mismatch.reportOnly {
          // The handshake ended before any byte of the request was written: tell the call's
          // listeners, then connect again without the report-only pins.
          exchange.pinMismatchReported(mismatch)
          return try await perform(
            current, exchange, uploadProgress: uploadProgress, on: engine, reportOnlyPins: false)
        }
      }
    }

    /// A redirect never leads from another origin to a host served over a Unix domain socket,
    /// nor from such a host to another origin: a server on the network must not reach a local
    /// daemon through the app, and a local daemon's redirect must not leave the machine.
    private func refuseCrossingIntoASocket(from original: HTTPRequest, to current: HTTPRequest)
      throws
    {
      guard let connection, !connection.unixSockets.isEmpty,
        current.url != original.url,
        !RedirectPolicy.isSameOrigin(original.url, current.url),
        connection.unixSocket(for: original.url) != nil
          || connection.unixSocket(for: current.url) != nil
      else { return }
      throw APIError.invalidRequest(
        "a redirect from \(Self.origin(of: original.url)) to \(Self.origin(of: current.url)) "
          + "would cross to or from a Unix domain socket; not followed")
    }

    /// `url`'s scheme, host and port, without its path, query or credentials.
    private static func origin(of url: URL) -> String {
      "\(url.scheme ?? "")://\(url.host ?? "")\(url.port.map { ":\($0)" } ?? "")"
    }

    /// `observer`, told only of progress past what it was last told: libcurl repeats a count in
    /// many calls, a body sent again after a `307` or `308` starts from zero, and progress never
    /// goes back.
    private static func forwardOnly(
      _ observer: @escaping @Sendable (TransferProgress) -> Void
    ) -> @Sendable (TransferProgress) -> Void {
      let reported = Locked(0)
      return { progress in
        let isNew = reported.withLock { reported in
          guard progress.completedBytes > reported else { return false }
          reported = progress.completedBytes
          return true
        }
        if isNew {
          observer(progress)
        }
      }
    }

    /// One transfer, without following redirects.
    private func perform(
      _ request: HTTPRequest, _ exchange: Exchange,
      uploadProgress: (@Sendable (TransferProgress) -> Void)?, on engine: CurlEngine,
      reportOnlyPins: Bool = true
    ) async throws -> HTTPResponse {
      try request.validate()
      if let refused = trust?.refusal(for: request.url) { throw refused }
      let started = Locked<CurlTransfer?>(nil)
      let abandoned = Locked<(any Error)?>(nil)
      let abandon: @Sendable (any Error) -> Void = { error in
        abandoned.withLock { $0 = $0 ?? error }
        if let transfer = started.withLock({ $0 }), transfer.abandon(with: error) {
          engine.remove(transfer)
        }
      }
      let disarm = exchange.whenDeadlinePasses { abandon(APIError.timedOut) }
      let disarmCancel = exchange.whenCancelled { abandon(CancellationError()) }
      defer {
        disarm()
        disarmCancel()
      }
      return try await withTaskCancellationHandler {
        try await Waiting.wait { waiting in
          let transfer: CurlTransfer
          do {
            transfer = try CurlTransfer(
              request, handle: engine.makeHandle(), streams: exchange.streams,
              certificateAuthorities: certificateAuthorities, connection: connection,
              trust: trust, reportOnlyPins: reportOnlyPins,
              uploadProgress: uploadProgress, waiting: waiting,
              stop: { engine.remove($0) }, proceed: { engine.resume($0) })
          } catch {
            waiting.resume(throwing: error)
            return
          }
          started.withLock { $0 = transfer }
          if let error = abandoned.withLock({ $0 }) {
            transfer.abandon(with: error)
          }
          engine.add(transfer)
        }
      } onCancel: {
        abandon(CancellationError())
      }
    }
  }

  /// Why ``CurlTransport`` cannot send anything: libcurl could not be loaded or set up.
  public struct CurlUnavailableError: Error, CustomStringConvertible, LocalizedError {
    /// What is missing.
    public var reason: String
    /// The call this error ended, where the client knew it: the request, the attempts made
    /// (`APIError.context` reads it).
    public var context: APIError.Context?

    /// What happened and what to do.
    public var description: String {
      "CurlTransport cannot run: \(reason). Use URLSessionTransport instead."
    }

    /// The same as ``description``.
    public var errorDescription: String? { description }
  }

  extension CurlUnavailableError: CarriesCallContext {}

  /// Sends from one thread of its own, whose state only it touches, ending its own waits.
  extension CurlTransport: ExchangeTransport {}

  // Its wait for a transfer ends when the call's client cancels the call.
  extension CurlTransport: CallCancellationAware {}
#endif
