#if canImport(FoundationNetworking)
  import Errand
  import Foundation
  import FoundationNetworking
  import Testing

  /// URLSession on Linux gives a delegate no server-trust or client-certificate challenge: a
  /// policy with any part is refused when the transport is made, naming the part and the
  /// transport that can honour it, never sending without it.
  @Suite(.timeLimit(.minutes(3))) struct URLSessionTransportTrustTests {
    static let pin = Data(repeating: 7, count: 32).base64EncodedString()

    @Test(arguments: [
      (TrustPolicy(pins: [.init(hosts: ["a.test"], sha256: [pin])]), "trust.pins"),
      (
        TrustPolicy(
          pins: [.init(hosts: ["a.test"], sha256: [pin], reportOnly: true)]), "trust.pins"
      ),
      (
        TrustPolicy(certificateAuthorities: .adding([.data(Data("x".utf8))])),
        "trust.certificateAuthorities"
      ),
      (
        TrustPolicy(clientCertificate: .pkcs12(.data(Data([0x30])), passphrase: "p", for: ["*"])),
        "trust.clientCertificate"
      ),
    ])
    func aPolicyWithAnyPartIsRefusedOnLinux(_ trust: TrustPolicy, option: String) {
      let error = #expect(throws: UnsupportedTransportOption.self) {
        _ = try URLSessionTransport(trust: trust)
      }
      #expect(error?.option == option)
      #expect(error?.transport == "URLSessionTransport on Linux")
      #expect(error?.reason.contains("CurlTransport") == true)
    }

    @Test func anEmptyPolicyIsTheDefault() throws {
      let transport = try URLSessionTransport(trust: TrustPolicy())
      #expect(transport.session.configuration.urlCache == nil)
    }
  }
#endif
