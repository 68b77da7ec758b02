#if os(Linux)
  import Errand
  import ErrandCurl
  import ErrandTesting
  import Foundation
  import TestSupport
  import Testing

  /// An httpbin served over TLS (HTTP/2 for clients that offer it) with a certificate from a
  /// certificate authority made for the run: `HTTPBIN_TLS_URL` and `HTTPBIN_TLS_CA_FILE` (the
  /// authority's PEM file); `.ci/run` starts one. Its `/errand/connection` answers the HTTP
  /// version and the client's port.
  enum HTTPBinTLS {
    static let url: URL? = ProcessInfo.processInfo.environment["HTTPBIN_TLS_URL"].flatMap {
      URL(string: $0)
    }
    static let certificateAuthorities: URL? = ProcessInfo.processInfo.environment[
      "HTTPBIN_TLS_CA_FILE"
    ].map { URL(fileURLWithPath: $0) }
    static let isAvailable = url != nil && certificateAuthorities != nil

    /// A CurlTransport that trusts the run's certificate authority.
    static func transport() -> CurlTransport {
      CurlTransport(certificateAuthorities: certificateAuthorities)
    }
  }

  /// What `/errand/connection` answers.
  struct ConnectionInfo: Decodable, Sendable {
    var `protocol`: String
    var port: Int
  }

  /// CurlTransport over TLS: the published checks, HTTP/2 negotiated by ALPN, one connection for
  /// many requests, and a certificate that leads to no trusted authority refused.
  @Suite(
    .timeLimit(.minutes(3)),
    .enabled(
      if: HTTPBinTLS.isAvailable, "set HTTPBIN_TLS_URL and HTTPBIN_TLS_CA_FILE, as .ci/run does"))
  struct HTTPBinTLSTests {
    @Test(
      arguments: TransportConformance.checks + TransportConformance.streamingChecks
        + TransportConformance.exchangeChecks)
    func curlTransportConformsOverTLS(_ check: TransportConformance.Check) async throws {
      try await check.run(HTTPBinTLS.transport(), httpbin: try #require(HTTPBinTLS.url))
    }

    @Test func http2IsNegotiatedAndOneConnectionCarriesTheRequests() async throws {
      let client = APIClient(
        baseURL: try #require(HTTPBinTLS.url), transport: HTTPBinTLS.transport())
      var answers: [ConnectionInfo] = []
      for _ in 0..<3 {
        answers.append(try await client.send(Endpoint<ConnectionInfo>(path: "errand/connection")))
      }
      #expect(answers.map(\.protocol) == ["HTTP/2", "HTTP/2", "HTTP/2"])
      #expect(Set(answers.map(\.port)).count == 1)
    }

    /// HTTP/2 multiplexing: 32 calls at once, on a transport that has not connected yet, share
    /// one connection (one client port), each reporting HTTP/2; only the first opened it.
    @Test func concurrentCallsShareOneHTTP2Connection() async throws {
      let client = APIClient(
        baseURL: try #require(HTTPBinTLS.url), transport: HTTPBinTLS.transport())
      let answers = try await withThrowingTaskGroup(of: ConnectionInfo.self) { group in
        for _ in 0..<32 {
          group.addTask {
            try await client.send(Endpoint<ConnectionInfo>(path: "errand/connection"))
          }
        }
        return try await group.reduce(into: []) { $0.append($1) }
      }
      #expect(answers.count == 32)
      #expect(Set(answers.map(\.protocol)) == ["HTTP/2"])
      #expect(Set(answers.map(\.port)).count == 1, "\(Set(answers.map(\.port)).count) connections")
    }

    /// `ConnectionOptions.httpVersion`: HTTP/1.1 when asked, though the server offers HTTP/2;
    /// HTTP/2 when asked, as by default.
    @Test(arguments: [
      (ConnectionOptions.HTTPVersion.http1, "HTTP/1.1"), (.http2, "HTTP/2"), (.automatic, "HTTP/2"),
    ])
    func theHTTPVersionAskedForIsUsed(_ version: ConnectionOptions.HTTPVersion, spoken: String)
      async throws
    {
      let transport = try CurlTransport(
        certificateAuthorities: HTTPBinTLS.certificateAuthorities,
        connection: ConnectionOptions(httpVersion: version))
      let client = APIClient(baseURL: try #require(HTTPBinTLS.url), transport: transport)
      let answer = try await client.send(Endpoint<ConnectionInfo>(path: "errand/connection"))
      #expect(answer.protocol == spoken)
    }

    /// The handshake is a phase of the first request only: the second goes over the same
    /// connection, with no lookup, connect or handshake.
    @Test func theTLSPhaseIsReportedOnceAndNotOnAReusedConnection() async throws {
      let client = APIClient(
        baseURL: try #require(HTTPBinTLS.url), transport: HTTPBinTLS.transport())
      let endpoint = Endpoint<Data>(path: "get")
      let first = try #require(try await client.response(for: endpoint).response.metrics)
      let second = try #require(try await client.response(for: endpoint).response.metrics)
      let handshake = try #require(first.secureConnectionStart)
      let secured = try #require(first.secureConnectionEnd)
      #expect(try #require(first.connectStart) <= handshake)
      #expect(handshake < secured)
      #expect(secured <= (first.requestStart ?? .zero))
      #expect(first.protocolName == "h2" && second.protocolName == "h2")
      #expect(first.reusedConnection == false && second.reusedConnection == true)
      #expect(second.secureConnectionEnd == nil && second.connectEnd == nil)
      #expect(first.summary.contains(" · tls "))
      #expect(!second.summary.contains("tls") && second.summary.hasSuffix(" · h2 · reused"))
    }

    /// The run's authority is in no system store: both transports refuse the server, with the
    /// same error.
    @Test(arguments: TransportKind.allCases)
    func aCertificateTheSystemStoreDoesNotTrustIsRefused(_ kind: TransportKind) async throws {
      let client = kind.client(try #require(HTTPBinTLS.url))
      let error = await #expect(throws: APIError.self) {
        _ = try await client.send(Endpoint<Data>(path: "get"))
      }
      guard case .transport(let underlying) = error else {
        Issue.record("expected a transport error, got \(String(describing: error))")
        return
      }
      #expect((underlying as? URLError)?.code == .serverCertificateUntrusted)
      #expect(error?.errorDescription?.contains("/get") == true)
    }

    @Test func aCertificateAuthorityFileThatCannotBeReadIsNamed() async throws {
      let missing = URL(fileURLWithPath: "/nonexistent/errand-ca.pem")
      let transport = CurlTransport(certificateAuthorities: missing)
      let error = await #expect(throws: URLError.self) {
        _ = try await transport.send(HTTPRequest(url: try #require(HTTPBinTLS.url)))
      }
      #expect(error?.code == .secureConnectionFailed)
      #expect(error?.localizedDescription.contains(missing.path) == true)
    }
  }
#endif
