import Errand
import ErrandTesting
import Foundation
import Testing

/// Pins computed from a certificate's bytes, as URLSessionTransport on Apple platforms computes
/// them: the same as OpenSSL's for RSA, EC and Ed25519 keys (`Fixtures/tls/pins.json`), and
/// nothing (no crash) for bytes that are not a certificate.
@Suite(.timeLimit(.minutes(3))) struct CertificateKeyTests {
  struct Pins: Decodable {
    var pins: [String: String]
  }

  static func fixture(_ name: String) throws -> Data {
    try Fixtures.nearest().data("tls/\(name)")
  }

  @Test(arguments: ["rsa-leaf.pem", "ec-leaf.pem", "ed25519-leaf.pem"])
  func aCertificatesPinIsOpenSSLs(_ name: String) throws {
    let expected = try JSONDecoder().decode(Pins.self, from: Self.fixture("pins.json")).pins[name]
    let blocks = CertificateKey.certificates(inPEM: try Self.fixture(name))
    #expect(blocks.count == 1)
    #expect(CertificateKey.pin(ofCertificate: try #require(blocks.first)) == expected)
  }

  /// A bundle's certificates in order, past a private key block and text between blocks.
  @Test func aBundleYieldsItsCertificatesInOrder() throws {
    let rsa = try Self.fixture("rsa-leaf.pem")
    let ec = try Self.fixture("ec-leaf.pem")
    let key = Data("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8)
    let bundle = key + Data("Subject: a comment\n".utf8) + rsa + ec
    let blocks = CertificateKey.certificates(inPEM: bundle)
    #expect(
      blocks == CertificateKey.certificates(inPEM: rsa) + CertificateKey.certificates(inPEM: ec))
  }

  /// Bytes that are not a certificate give no key: cut short, a length past the end, an
  /// indefinite length, lengths of five bytes, random bytes.
  @Test func bytesThatAreNotACertificateGiveNoKey() throws {
    let der = try #require(
      CertificateKey.certificates(inPEM: try Self.fixture("ec-leaf.pem")).first)
    var cases: [Data] = [
      Data(), Data([0x30]), Data([0x30, 0x80, 0, 0]), Data([0x30, 0x85, 1, 1, 1, 1, 1]),
    ]
    cases += stride(from: 1, to: der.count, by: 7).map { der.prefix($0) }
    var lengthPastTheEnd = der
    lengthPastTheEnd[1] = 0x84
    cases.append(lengthPastTheEnd)
    var generator = SystemRandomNumberGenerator()
    cases += (0..<200).map { _ in
      Data((0..<64).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
    for bytes in cases {
      #expect(CertificateKey.subjectPublicKeyInfo(ofCertificate: bytes) == nil)
    }
  }

  /// FIPS 180-2's examples, and an empty message.
  @Test(arguments: [
    ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    (
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    ),
    (
      String(repeating: "a", count: 1_000_000),
      "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
    ),
    (
      String(repeating: "a", count: 55),
      "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"
    ),
    (
      String(repeating: "a", count: 64),
      "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"
    ),
  ])
  func sha256MatchesTheStandardsExamples(_ message: String, digest: String) {
    let hex = SHA256Digest.hash(Data(message.utf8)).map { String(format: "%02x", $0) }.joined()
    #expect(hex == digest)
  }
}
