#if os(Linux)
  import Errand
  import ErrandCurl
  import Foundation
  import TestSupport
  import Testing

  /// The certificates `.ci/run` makes for the run (scripts/tls_fixtures.py) and the servers it
  /// starts with them: `HTTPBIN_TLS_URL` (its access log at `HTTPBIN_TLS_ACCESS_LOG`),
  /// `HTTPBIN_OTHER_TLS_URL` (another authority, another key) and `HTTPBIN_MTLS_URL` (requires a
  /// client certificate from `client-ca.pem`; answers the name in the one presented).
  enum TLSFixtures {
    static let environment = ProcessInfo.processInfo.environment
    static let folder = environment["HTTPBIN_TLS_FIXTURES"].map { URL(fileURLWithPath: $0) }
    static let main = environment["HTTPBIN_TLS_URL"].flatMap(URL.init(string:))
    static let other = environment["HTTPBIN_OTHER_TLS_URL"].flatMap(URL.init(string:))
    static let mutual = environment["HTTPBIN_MTLS_URL"].flatMap(URL.init(string:))
    static let accessLog = environment["HTTPBIN_TLS_ACCESS_LOG"].map { URL(fileURLWithPath: $0) }
    static let isAvailable =
      folder != nil && main != nil && other != nil && mutual != nil && accessLog != nil

    static func file(_ name: String) throws -> URL {
      try #require(folder).appendingPathComponent(name)
    }

    static func contents(_ name: String) throws -> Data {
      try Data(contentsOf: file(name))
    }

    /// A server key's pin, as `cryptography` computed it.
    static func pin(_ server: String) throws -> String {
      try String(decoding: contents("\(server).spki"), as: UTF8.self)
        .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func passphrase() throws -> String {
      try String(decoding: contents("passphrase.txt"), as: UTF8.self)
    }

    /// The run's authorities, beside the system's: both servers' certificates lead to them.
    static func authorities() throws -> TrustPolicy.CertificateAuthorities {
      .adding([.file(try file("client.pem")), .file(try file("other-ca.pem"))])
    }
  }

  /// What the mutual-TLS server answers.
  struct MutualTLSAnswer: Decodable, Sendable {
    var client: String
    var path: String
  }

  /// `TrustPolicy` over `CurlTransport` against real TLS servers: pins that match and pins that
  /// do not (nothing sent), report-only pins, authorities added or in place of the system's,
  /// and client certificates in each form, presented only where they are meant to go.
  @Suite(
    .timeLimit(.minutes(3)),
    .enabled(
      if: TLSFixtures.isAvailable,
      "set HTTPBIN_TLS_FIXTURES and the servers' URLs, as .ci/run does"))
  struct HTTPBinTrustTests {
    static func client(_ trust: TrustPolicy, _ base: URL?, listener: RecordingListener? = nil)
      throws -> APIClient
    {
      APIClient(
        baseURL: try #require(base), transport: try CurlTransport(trust: trust),
        configuration: .init(eventListeners: listener.map { [$0] } ?? []))
    }

    /// The pin sets that let a call to the main server through: its key alone, a backup first,
    /// with the `sha256//` prefix, under a pattern.
    static let passingPins: [@Sendable () throws -> TrustPolicy.PinnedKeys] = [
      { .init(hosts: ["127.0.0.1"], sha256: [try TLSFixtures.pin("server")]) },
      {
        .init(
          hosts: ["127.0.0.1"],
          sha256: [try TLSFixtures.pin("other-server"), try TLSFixtures.pin("server")])
      },
      { .init(hosts: ["127.0.0.1"], sha256: ["sha256//" + (try TLSFixtures.pin("server"))]) },
      { .init(hosts: ["*"], sha256: [try TLSFixtures.pin("server")]) },
    ]

    @Test(arguments: 0..<passingPins.count)
    func aKeyThatMatchesAPinGoesThrough(_ index: Int) async throws {
      let trust = TrustPolicy(
        pins: [try Self.passingPins[index]()],
        certificateAuthorities: try TLSFixtures.authorities())
      let body = try await Self.client(trust, TLSFixtures.main).send(Endpoint<Data>(path: "get"))
      #expect(!body.isEmpty)
    }

    /// Pinned to the other server's key, the main server is refused during the handshake: the
    /// error names the host and the pin, and the server's access log never sees the request
    /// (while it sees the same request made with the right pin).
    @Test func aKeyThatMatchesNoPinFailsBeforeAnyRequestByteIsWritten() async throws {
      let wrong = try TLSFixtures.pin("other-server")
      let probe = "anything/pin-probe-\(UUID().uuidString)"
      let refused = try Self.client(
        TrustPolicy(
          pins: [.init(hosts: ["127.0.0.1"], sha256: [wrong])],
          certificateAuthorities: try TLSFixtures.authorities()), TLSFixtures.main)
      let error = await #expect(throws: APIError.self) {
        try await refused.send(Endpoint<Data>(path: probe))
      }
      guard case .transport(let underlying) = error else {
        Issue.record("expected a transport error, got \(String(describing: error))")
        return
      }
      let mismatch = try #require(underlying as? PinMismatchError)
      #expect(mismatch == PinMismatchError(host: "127.0.0.1", expected: [wrong]))
      #expect(error?.errorDescription?.contains("sha256/\(wrong)") == true)
      #expect(error?.context?.request?.url.path == "/\(probe)")

      let control = "anything/pin-control-\(UUID().uuidString)"
      _ = try await Self.client(
        TrustPolicy(
          pins: [.init(hosts: ["127.0.0.1"], sha256: [try TLSFixtures.pin("server")])],
          certificateAuthorities: try TLSFixtures.authorities()), TLSFixtures.main
      ).send(Endpoint<Data>(path: control))
      let accessLog = try #require(TLSFixtures.accessLog)
      let read = { @Sendable in
        String(decoding: (try? Data(contentsOf: accessLog)) ?? Data(), as: UTF8.self)
      }
      #expect(await eventually { read().contains(control) })
      #expect(!read().contains(probe))
    }

    /// A report-only pin that does not match: the call's listeners hear it, and the call goes
    /// through.
    @Test func aReportOnlyMismatchIsHeardAndTheCallGoesOn() async throws {
      let wrong = try TLSFixtures.pin("other-server")
      let listener = RecordingListener()
      let client = try Self.client(
        TrustPolicy(
          pins: [.init(hosts: ["127.0.0.1"], sha256: [wrong], reportOnly: true)],
          certificateAuthorities: try TLSFixtures.authorities()), TLSFixtures.main,
        listener: listener)
      let body = try await client.send(Endpoint<Data>(path: "get"))
      #expect(!body.isEmpty)
      let events = await listener.eventsOfOneCall()
      let reported = events.compactMap { event -> PinMismatchError? in
        if case .pinMismatchReported(let mismatch) = event.kind { return mismatch }
        return nil
      }
      #expect(
        reported == [PinMismatchError(host: "127.0.0.1", expected: [wrong], reportOnly: true)])
      #expect(events.last?.kind.name == "callEnded")
    }

    /// The pin Errand computes from a certificate's bytes (as URLSessionTransport does on Apple
    /// platforms) is the one `cryptography` computes, for both servers' keys.
    @Test(arguments: ["server", "other-server"])
    func thePinComputedFromTheCertificateIsTheServersKey(_ server: String) throws {
      let leaf = try #require(
        CertificateKey.certificates(inPEM: try TLSFixtures.contents("\(server).pem")).first)
      #expect(CertificateKey.pin(ofCertificate: leaf) == (try TLSFixtures.pin(server)))
    }

    /// Pins for other hosts leave this one unpinned.
    @Test func aHostNoSetNamesIsNotPinned() async throws {
      let client = try Self.client(
        TrustPolicy(
          pins: [
            .init(
              hosts: ["**.example.com", "127.0.0.2"], sha256: [try TLSFixtures.pin("other-server")])
          ],
          certificateAuthorities: try TLSFixtures.authorities()), TLSFixtures.main)
      #expect(try await client.send(Endpoint<Data>(path: "get")).isEmpty == false)
    }

    /// Authorities in place of the system's: the server whose certificate leads to one is
    /// trusted, the other refused as untrusted; from a file or from bytes alike.
    @Test(arguments: [false, true])
    func authoritiesInPlaceOfTheSystemsTrustThoseAlone(fromBytes: Bool) async throws {
      let source: TrustPolicy.Source =
        fromBytes
        ? .data(try TLSFixtures.contents("other-ca.pem"))
        : .file(try TLSFixtures.file("other-ca.pem"))
      let trust = TrustPolicy(certificateAuthorities: .replacingSystemTrust(with: [source]))
      let other = try Self.client(trust, TLSFixtures.other)
      #expect(try await other.send(Endpoint<Data>(path: "get")).isEmpty == false)
      let main = try Self.client(trust, TLSFixtures.main)
      let error = await #expect(throws: APIError.self) {
        try await main.send(Endpoint<Data>(path: "get"))
      }
      #expect(error?.urlError?.code == .serverCertificateUntrusted)
    }

    /// Without authorities of its own the run's servers are untrusted; added beside the
    /// system's, they are trusted.
    @Test func addedAuthoritiesAreTrustedBesideTheSystems() async throws {
      let plain = try Self.client(TrustPolicy(), TLSFixtures.main)
      let error = await #expect(throws: APIError.self) {
        try await plain.send(Endpoint<Data>(path: "get"))
      }
      #expect(error?.urlError?.code == .serverCertificateUntrusted)
      let added = try Self.client(
        TrustPolicy(certificateAuthorities: try TLSFixtures.authorities()), TLSFixtures.main)
      #expect(try await added.send(Endpoint<Data>(path: "get")).isEmpty == false)
    }

    /// The client certificate in each form the server accepts.
    static let identities: [@Sendable () throws -> TrustPolicy.ClientCertificate] = [
      {
        .pem(
          certificate: .file(try TLSFixtures.file("client-cert.pem")),
          key: .file(try TLSFixtures.file("client-key.pem")),
          passphrase: try TLSFixtures.passphrase(), for: ["127.0.0.1"])
      },
      {
        .pem(
          certificate: .data(try TLSFixtures.contents("client-cert.pem")),
          key: .data(try TLSFixtures.contents("client-key-plain.pem")), for: ["*"])
      },
      {
        .pkcs12(
          .file(try TLSFixtures.file("client.p12")), passphrase: try TLSFixtures.passphrase(),
          for: ["127.0.0.1"])
      },
    ]

    @Test(arguments: 0..<identities.count)
    func aClientCertificateReachesAServerThatRequiresOne(_ index: Int) async throws {
      let client = try Self.client(
        TrustPolicy(
          certificateAuthorities: try TLSFixtures.authorities(),
          clientCertificate: try Self.identities[index]()), TLSFixtures.mutual)
      let answer = try await client.send(Endpoint<MutualTLSAnswer>(path: "who"))
      #expect(answer.client == "client.errand.test")
      #expect(answer.path == "/who")
    }

    /// No certificate, one presented only to other hosts, one the server does not trust, a
    /// wrong passphrase: each fails with the `URLError` that says so.
    @Test(arguments: [
      ("none", URLError.Code.clientCertificateRequired),
      ("for another host", .clientCertificateRequired),
      ("untrusted", .clientCertificateRejected),
      ("wrong passphrase", .clientCertificateRejected),
    ])
    func aServerThatRequiresACertificateRefusesAnyOther(_ name: String, code: URLError.Code)
      async throws
    {
      let certificate: TrustPolicy.ClientCertificate? =
        switch name {
        case "for another host":
          .pkcs12(
            .file(try TLSFixtures.file("client.p12")), passphrase: try TLSFixtures.passphrase(),
            for: ["api.example.com"])
        case "untrusted":
          .pem(
            certificate: .file(try TLSFixtures.file("rogue-cert.pem")),
            key: .file(try TLSFixtures.file("rogue-key.pem")), for: ["127.0.0.1"])
        case "wrong passphrase":
          .pkcs12(.file(try TLSFixtures.file("client.p12")), passphrase: "guess", for: ["*"])
        default: nil
        }
      let client = try Self.client(
        TrustPolicy(
          certificateAuthorities: try TLSFixtures.authorities(), clientCertificate: certificate),
        TLSFixtures.mutual)
      let error = await #expect(throws: APIError.self) {
        try await client.send(Endpoint<MutualTLSAnswer>(path: "who"))
      }
      #expect(error?.urlError?.code == code, "\(String(describing: error))")
      #expect(error?.errorDescription?.contains("guess") == false)
    }
  }
#endif
