#if os(Linux)
  import Errand
  import ErrandCurl
  import Foundation
  import LoopbackServer
  import TestSupport
  import Testing

  /// Hostile probes of `TrustPolicy` over `CurlTransport` against the run's TLS servers: each
  /// asserts the documented (safe) behaviour, so it fails when the defect exists.
  @Suite(
    .timeLimit(.minutes(3)),
    .enabled(
      if: TLSFixtures.isAvailable,
      "set HTTPBIN_TLS_FIXTURES and the servers' URLs, as .ci/run does"))
  struct TrustPolicyHostileTests {
    static var port: Int { TLSFixtures.main?.port ?? 0 }
    static var mutualPort: Int { TLSFixtures.mutual?.port ?? 0 }

    /// The access log, read now.
    static func accessLog() -> String {
      guard let url = TLSFixtures.accessLog else { return "" }
      return String(decoding: (try? Data(contentsOf: url)) ?? Data(), as: UTF8.self)
    }

    /// A path no request has used, to look for in the access log.
    static func probePath(_ name: String) -> String {
      "anything/\(name)-\(UUID().uuidString)"
    }

    /// Whether the server logged a request for `path` (its first line, as httpbin logs it).
    static func reached(_ path: String) -> Bool {
      accessLog().contains("GET /\(path)") || accessLog().contains("POST /\(path)")
    }

    /// Wait until the server has logged a request made after everything before it (with the
    /// right trust): the log is written in order, so a probe that reached the server earlier
    /// is in it by then. No sleep decides it.
    static func settleLog() async throws {
      let control = probePath("control")
      let transport = try CurlTransport(
        trust: TrustPolicy(certificateAuthorities: try TLSFixtures.authorities()))
      _ = try await get(transport, "https://127.0.0.1:\(port)/\(control)")
      #expect(await eventually { reached(control) }, "the access log never showed \(control)")
    }

    /// Pins only the main server's host `hosts` to the other server's key (a mismatch).
    static func wrongPins(_ hosts: [String], reportOnly: Bool = false) throws -> TrustPolicy {
      TrustPolicy(
        pins: [
          .init(hosts: hosts, sha256: [try TLSFixtures.pin("other-server")], reportOnly: reportOnly)
        ],
        certificateAuthorities: try TLSFixtures.authorities())
    }

    static func get(_ transport: CurlTransport, _ url: String) async throws -> HTTPResponse {
      try await transport.send(HTTPRequest(url: try #require(URL(string: url))))
    }

    // MARK: Host forms

    /// Pinned by address, reached by another spelling of the same address that libcurl
    /// normalizes (`127.1`, a 32-bit number, hex, octal): libcurl connects to 127.0.0.1 and the
    /// certificate's IP SAN matches, so the pin must apply (or the URL be refused).
    @Test(arguments: ["127.1", "2130706433", "0x7f.0.0.1", "0177.0.0.1", "127.0.1"])
    func anotherSpellingOfAPinnedAddressIsStillPinned(_ spelling: String) async throws {
      let transport = try CurlTransport(trust: try Self.wrongPins(["127.0.0.1"]))
      let probe = Self.probePath("ip-form")
      var reachedServer = false
      do {
        let response = try await Self.get(transport, "https://\(spelling):\(Self.port)/\(probe)")
        reachedServer = true
        Issue.record("\(spelling) went through a pin mismatch: status \(response.status)")
      } catch {
        // Refusing the URL is fine too; a pin mismatch is what the docs promise.
        #expect(
          error is PinMismatchError || error is APIError,
          "\(spelling): \(String(describing: error))")
      }
      try await Self.settleLog()
      #expect(!reachedServer, "a response came back via \(spelling)")
      #expect(!Self.reached(probe), "the server's access log shows \(probe) via \(spelling)")
    }

    /// Trailing dot and upper case: libcurl drops the dot, lowercases the name.
    @Test(arguments: ["127.0.0.1.", "LOCALHOST", "localhost."])
    func caseAndTrailingDotDoNotEscapeAPin(_ spelling: String) async throws {
      let transport = try CurlTransport(
        trust: try Self.wrongPins(["127.0.0.1", "localhost"]))
      let probe = Self.probePath("case-dot")
      do {
        _ = try await Self.get(transport, "https://\(spelling):\(Self.port)/\(probe)")
        Issue.record("\(spelling) went through a pin mismatch")
      } catch {
        // libcurl 7.88 resolves the name with its final dot (and fails): also safe.
        #expect(
          error is PinMismatchError || (error as? URLError)?.code == .cannotFindHost, "\(error)")
      }
      try await Self.settleLog()
      #expect(!Self.reached(probe))
    }

    /// Percent-encoded host names: Foundation and libcurl must agree on the host.
    @Test(arguments: ["local%68ost", "127.0.0.%31", "LOCAL%48OST"])
    func aPercentEncodedHostIsStillPinned(_ spelling: String) async throws {
      let transport = try CurlTransport(trust: try Self.wrongPins(["127.0.0.1", "localhost"]))
      let probe = Self.probePath("pct-host")
      do {
        _ = try await Self.get(transport, "https://\(spelling):\(Self.port)/\(probe)")
        Issue.record("\(spelling) went through a pin mismatch")
      } catch {
        #expect(error is PinMismatchError || error is APIError, "\(error)")
      }
      try await Self.settleLog()
      #expect(!Self.reached(probe))
    }

    // MARK: Connection reuse

    /// An unpinned connection to the same server under another name, still open, is not used
    /// for the pinned name; nor is one opened by a report-only call's unpinned retry.
    @Test(arguments: [false, true])
    func aConnectionOpenedUnpinnedIsNotReusedForAPinnedHost(reportOnlyFirst: Bool)
      async throws
    {
      let wrong = try TLSFixtures.pin("other-server")
      let transport = try CurlTransport(
        trust: TrustPolicy(
          pins: [.init(hosts: ["127.0.0.1"], sha256: [wrong])]
            + (reportOnlyFirst
              ? [.init(hosts: ["localhost"], sha256: [wrong], reportOnly: true)] : []),
          certificateAuthorities: try TLSFixtures.authorities()))
      for _ in 0..<2 {
        _ = try await Self.get(transport, "https://localhost:\(Self.port)/get")
      }
      let probe = Self.probePath("reuse")
      await #expect(throws: PinMismatchError.self) {
        _ = try await Self.get(transport, "https://127.0.0.1:\(Self.port)/\(probe)")
      }
      // Concurrently too (HTTP/2 multiplexing onto a connection being opened).
      try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { _ = try? await Self.get(transport, "https://localhost:\(Self.port)/get") }
        group.addTask {
          await #expect(throws: PinMismatchError.self) {
            _ = try await Self.get(transport, "https://127.0.0.1:\(Self.port)/\(probe)")
          }
        }
        try await group.waitForAll()
      }
      try await Self.settleLog()
      #expect(!Self.reached(probe))
    }

    /// Every report-only call is reported, even once an unpinned retry's connection is open;
    /// each body reaches the server once.
    @Test func everyReportOnlyCallIsReportedAndItsBodySentOnce() async throws {
      let listener = RecordingListener()
      let client = APIClient(
        baseURL: try #require(TLSFixtures.main),
        transport: try CurlTransport(trust: try Self.wrongPins(["127.0.0.1"], reportOnly: true)),
        configuration: .init(eventListeners: [listener]))
      for round in 0..<3 {
        let probe = Self.probePath("report-\(round)")
        let body = try await client.send(
          Endpoint<Data>(method: .post, path: probe, body: .data(Data("x=1".utf8))))
        #expect(!body.isEmpty)
        let events = await listener.eventsOfOneCall()
        let reported = events.filter { $0.kind.name == "pinMismatchReported" }
        #expect(reported.count == 1, "round \(round): \(events.map(\.kind.name))")
        try await Self.settleLog()
        let count = Self.accessLog().components(separatedBy: "POST /\(probe)").count - 1
        #expect(count == 1, "round \(round): the body was sent \(count) times")
      }
    }

    // MARK: Redirects

    /// A redirect from an unpinned host to a pinned one is checked at the pinned one.
    @Test func aRedirectToAPinnedHostIsRefusedInTheHandshake() async throws {
      let transport = try CurlTransport(trust: try Self.wrongPins(["127.0.0.1"]))
      let probe = Self.probePath("redirect")
      let target = "https://127.0.0.1:\(Self.port)/\(probe)"
      let encoded = try #require(
        target.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
      await #expect(throws: PinMismatchError.self) {
        _ = try await Self.get(
          transport, "https://localhost:\(Self.port)/redirect-to?url=\(encoded)")
      }
      try await Self.settleLog()
      #expect(!Self.reached(probe))
    }

    /// A client certificate named for 127.0.0.1 is not shown to `localhost` (the same server
    /// under another name) after a redirect, nor to an IP spelling libcurl normalizes.
    @Test(arguments: ["redirect", "direct"])
    func aClientCertificateIsNotPresentedToAHostNotNamed(_ how: String) async throws {
      let transport = try CurlTransport(
        trust: TrustPolicy(
          certificateAuthorities: try TLSFixtures.authorities(),
          clientCertificate: .pem(
            certificate: .file(try TLSFixtures.file("client-cert.pem")),
            key: .file(try TLSFixtures.file("client-key-plain.pem")),
            for: ["127.0.0.1", "*.localhost.test"])))
      let who = "https://localhost:\(Self.mutualPort)/who"
      let url =
        how == "redirect"
        ? "https://127.0.0.1:\(Self.port)/redirect-to?url="
          + (who.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        : who
      do {
        let response = try await Self.get(transport, url)
        let text = String(decoding: response.body, as: UTF8.self)
        Issue.record("the certificate reached localhost (\(how)): \(text)")
      } catch {
        #expect(
          (error as? URLError)?.code == .clientCertificateRequired,
          "\(String(describing: error))")
      }
    }

    // MARK: Secrets in printed forms

    /// A wrong passphrase, a call that fails, a call that succeeds: no printed form of the
    /// error, the events or the transport shows the passphrase or a line of the key or the
    /// certificate.
    @Test func noPrintedFormShowsAPassphraseOrKeyBytes() async throws {
      let secrets = try Self.secretLines() + [try TLSFixtures.passphrase(), "Wr0ng-Pass-Probe"]
      var printed: [String] = []
      for passphrase in [try TLSFixtures.passphrase(), "Wr0ng-Pass-Probe"] {
        let listener = RecordingListener()
        let transport = try CurlTransport(
          trust: TrustPolicy(
            certificateAuthorities: try TLSFixtures.authorities(),
            clientCertificate: .pem(
              certificate: .file(try TLSFixtures.file("client-cert.pem")),
              key: .data(try TLSFixtures.contents("client-key.pem")),
              passphrase: passphrase, for: ["*"])))
        printed.append(String(reflecting: transport))
        var dumped = ""
        dump(transport, to: &dumped)
        printed.append(dumped)
        for base in [TLSFixtures.mutual, TLSFixtures.other] {
          let client = APIClient(
            baseURL: try #require(base), transport: transport,
            configuration: .init(eventListeners: [listener]))
          do {
            _ = try await client.send(Endpoint<Data>(path: "who"))
          } catch {
            printed.append(String(describing: error))
            printed.append(String(reflecting: error))
            printed.append(error.localizedDescription)
            var errorDump = ""
            dump(error, to: &errorDump)
            printed.append(errorDump)
          }
          printed += await listener.eventsOfOneCall().map { String(reflecting: $0) }
        }
      }
      for text in printed {
        for secret in secrets where text.contains(secret) {
          Issue.record("a printed form shows a secret: …\(secret.prefix(12))… in \(text)")
        }
      }
    }

    /// The base64 lines of the key and certificate files (long enough not to match by chance).
    static func secretLines() throws -> [String] {
      try ["client-key.pem", "client-key-plain.pem", "client-cert.pem"].flatMap { name in
        String(decoding: try TLSFixtures.contents(name), as: UTF8.self)
          .split(separator: "\n").map(String.init)
          .filter { !$0.hasPrefix("-----") && $0.count >= 24 }
      }
    }

    // MARK: Authorities

    /// In place of the system's, the other CA alone: the main server (whose CA is not named)
    /// is refused, also after a call to the other server on a reused engine.
    @Test func replacingTrustsTheNamedAuthoritiesAlone() async throws {
      let transport = try CurlTransport(
        trust: TrustPolicy(
          certificateAuthorities: .replacingSystemTrust(with: [
            .file(try TLSFixtures.file("other-ca.pem"))
          ])))
      let other = try #require(TLSFixtures.other)
      _ = try await transport.send(HTTPRequest(url: other.appendingPathComponent("get")))
      let probe = Self.probePath("replace")
      do {
        _ = try await Self.get(transport, "https://127.0.0.1:\(Self.port)/\(probe)")
        Issue.record("the main server was trusted")
      } catch {
        #expect((error as? URLError)?.code == .serverCertificateUntrusted, "\(error)")
      }
      try await Self.settleLog()
      #expect(!Self.reached(probe))
    }
  }
#endif

#if os(Linux)
  /// A pinned host reached over plain HTTP, where there is no key to compare: refused before
  /// anything is sent, directly or by a redirect; report-only pins let it go.
  @Suite(.timeLimit(.minutes(3))) struct PinnedHostOverPlainHTTPTests {
    static let pin = Data(repeating: 9, count: 32).base64EncodedString()

    @Test func aPinnedHostIsNotCalledOverPlainHTTP() async throws {
      let server = try LoopbackServer { _ in .json(#"["plain"]"#) }
      defer { server.stop() }
      let transport = try CurlTransport(
        trust: TrustPolicy(pins: [.init(hosts: ["127.0.0.1"], sha256: [Self.pin])]))
      let client = APIClient(baseURL: server.baseURL, transport: transport)
      let error = await #expect(throws: APIError.self) {
        try await client.send(Endpoint<[String]>(path: "dogs"))
      }
      #expect(error?.kind == .invalidRequest)
      #expect(error?.invalidRequestReason?.contains("a pin needs HTTPS") == true)
      #expect(server.requests.isEmpty)
    }

    @Test func aRedirectIntoAPinnedHostOverPlainHTTPIsNotFollowed() async throws {
      let pinned = try LoopbackServer { _ in .json(#"["pinned"]"#) }
      defer { pinned.stop() }
      let redirector = try LoopbackServer { _ in
        ScriptedResponse(
          status: 302, headers: [("Location", "http://127.0.0.1:\(pinned.port)/dogs")])
      }
      defer { redirector.stop() }
      let transport = try CurlTransport(
        trust: TrustPolicy(pins: [.init(hosts: ["127.0.0.1"], sha256: [Self.pin])]))
      let start = try #require(URL(string: "http://localhost:\(redirector.port)"))
      let client = APIClient(baseURL: start, transport: transport)
      await #expect(throws: APIError.self) {
        try await client.send(Endpoint<[String]>(path: "start"))
      }
      #expect(redirector.requests.count == 1)
      #expect(pinned.requests.isEmpty)
    }

    @Test func reportOnlyPinsLetAPlainRequestGo() async throws {
      let server = try LoopbackServer { _ in .json(#"["plain"]"#) }
      defer { server.stop() }
      let transport = try CurlTransport(
        trust: TrustPolicy(
          pins: [.init(hosts: ["127.0.0.1"], sha256: [Self.pin], reportOnly: true)]))
      let client = APIClient(baseURL: server.baseURL, transport: transport)
      #expect(try await client.send(Endpoint<[String]>(path: "dogs")) == ["plain"])
    }
  }
#endif
