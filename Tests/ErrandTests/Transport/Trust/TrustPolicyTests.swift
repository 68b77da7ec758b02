import Errand
import Foundation
import TestSupport
import Testing

/// `TrustPolicy` as a value: which hosts a pattern names, which pins a host gets, what is
/// refused before a transport takes it, and that no printed form shows a secret.
@Suite(.timeLimit(.minutes(3))) struct TrustPolicyTests {
  static let pinA = Data(repeating: 0xA1, count: 32).base64EncodedString()
  static let pinB = Data(repeating: 0xB2, count: 32).base64EncodedString()
  static let passphrase = "c0rrect-h0rse-passphrase"

  @Test(arguments: [
    ("api.example.com", "api.example.com", true), ("api.example.com", "API.Example.COM.", true),
    ("api.example.com", "example.com", false), ("api.example.com", "xapi.example.com", false),
    ("*.example.com", "a.example.com", true), ("*.example.com", "a.b.example.com", false),
    ("*.example.com", "example.com", false), ("*.example.com", "aexample.com", false),
    ("**.example.com", "example.com", true), ("**.example.com", "a.b.example.com", true),
    ("**.example.com", "badexample.com", false), ("*", "anything.test", true),
    ("[::1]", "::1", true), ("::1", "[::1]", true), ("127.0.0.1", "127.0.0.10", false),
    ("example.com", "", false), ("*", "", false),
  ])
  func aPatternNamesTheHostsItSays(_ pattern: String, host: String, matches: Bool) {
    #expect(TrustPolicy.matches(pattern, host: host) == matches)
  }

  @Test(arguments: [
    (pinA, pinA), ("sha256/\(pinA)", pinA), ("sha256//\(pinA)", pinA), ("SHA256//\(pinA)", pinA),
    (" \(pinA) ", pinA),
  ])
  func aPinIsReadWithOrWithoutItsPrefix(_ digest: String, canonical: String) {
    #expect(TrustPolicy.canonicalPin(digest) == canonical)
  }

  @Test(arguments: [
    "", "not base64!", Data(count: 20).base64EncodedString(), Data(count: 33).base64EncodedString(),
    "sha1//\(pinA)", "\(pinA);sha256//\(pinB)",
  ])
  func aDigestThatIsNotSHA256IsNoPin(_ digest: String) {
    #expect(TrustPolicy.canonicalPin(digest) == nil)
  }

  /// Sets that name a host pool their keys; the pool is report-only only when every set is.
  @Test func aHostsPinsArePooledAndReportOnlyOnlyWhenEverySetIs() throws {
    let policy = TrustPolicy(pins: [
      .init(hosts: ["api.example.com"], sha256: [Self.pinA]),
      .init(
        hosts: ["**.example.com"], sha256: ["sha256//\(Self.pinB)", Self.pinA], reportOnly: true),
      .init(hosts: ["*.other.test"], sha256: [Self.pinB], reportOnly: true),
    ])
    let api = try #require(policy.pins(for: "API.example.com"))
    #expect(api.sha256 == [Self.pinA, Self.pinB])
    #expect(!api.reportOnly)
    let www = try #require(policy.pins(for: "www.example.com"))
    #expect(www.sha256 == [Self.pinB, Self.pinA])
    #expect(www.reportOnly)
    #expect(policy.pins(for: "a.other.test")?.reportOnly == true)
    #expect(policy.pins(for: "elsewhere.test") == nil)
  }

  @Test func aClientCertificateIsPresentedOnlyToTheHostsNamed() {
    let policy = TrustPolicy(
      clientCertificate: .pkcs12(.data(Data([0x30])), passphrase: "p", for: ["*.corp.test"]))
    #expect(policy.presentsClientCertificate(to: "api.corp.test"))
    #expect(!policy.presentsClientCertificate(to: "corp.test"))
    #expect(!policy.presentsClientCertificate(to: "evil.test"))
    #expect(!TrustPolicy().presentsClientCertificate(to: "api.corp.test"))
  }

  struct Refusal: Sendable, CustomTestStringConvertible {
    var policy: TrustPolicy
    var option: String
    var reason: String
    var testDescription: String { option + ": " + reason }
  }

  static let refusals: [Refusal] = [
    Refusal(
      policy: TrustPolicy(pins: [.init(hosts: [], sha256: [pinA])]),
      option: "trust.pins[0].hosts", reason: "names no host"),
    Refusal(
      policy: TrustPolicy(pins: [.init(hosts: ["a.test"], sha256: [])]),
      option: "trust.pins[0].sha256", reason: "holds no key"),
    Refusal(
      policy: TrustPolicy(pins: [.init(hosts: ["a.test"], sha256: ["abc"])]),
      option: "trust.pins[0].sha256", reason: "\"abc\" is not a SHA-256 digest"),
    Refusal(
      policy: TrustPolicy(pins: [.init(hosts: ["a.*.test"], sha256: [pinA])]),
      option: "trust.pins[0].hosts", reason: "\"a.*.test\" is not a host name"),
    Refusal(
      policy: TrustPolicy(pins: [.init(hosts: ["a.test\r\nX: y"], sha256: [pinA])]),
      option: "trust.pins[0].hosts", reason: #"\r\n"#),
    Refusal(
      policy: TrustPolicy(pins: [.init(hosts: ["*."], sha256: [pinA])]),
      option: "trust.pins[0].hosts", reason: "is not a host name"),
    Refusal(
      policy: TrustPolicy(certificateAuthorities: .adding([])),
      option: "trust.certificateAuthorities", reason: "names no certificate"),
    Refusal(
      policy: TrustPolicy(
        clientCertificate: .pkcs12(.data(Data([0x30])), passphrase: "p", for: [])),
      option: "trust.clientCertificate.hosts", reason: "names no host"),
    Refusal(
      policy: TrustPolicy(
        clientCertificate: .pkcs12(.data(Data([0x30])), passphrase: "a\0\(passphrase)", for: ["*"])),
      option: "trust.clientCertificate.passphrase", reason: "holds a NUL character"),
    Refusal(
      policy: TrustPolicy(clientCertificate: .keychainIdentity(label: "", for: ["*"])),
      option: "trust.clientCertificate", reason: "the keychain label is empty"),
  ]

  @Test(arguments: refusals)
  func aMalformedPartIsRefusedByName(_ refusal: Refusal) {
    let error = #expect(throws: InvalidConnectionOption.self) { try refusal.policy.validate() }
    #expect(error?.option == refusal.option)
    #expect(error?.reason.contains(refusal.reason) == true, "\(error?.reason ?? "")")
    #expect(error.map { "\($0)" }?.contains(Self.passphrase) == false)
  }

  /// Neither the policy, nor its parts, nor the loaded form a transport keeps, shows the
  /// passphrase or a byte of a key, in any printed form.
  @Test func noPrintedFormShowsAPassphraseOrKeyBytes() throws {
    let key = Data("-----BEGIN PRIVATE KEY-----\nS3CR3TKEYBYTES\n-----END PRIVATE KEY-----\n".utf8)
    let certificate = Data(
      "-----BEGIN CERTIFICATE-----\nQ0VSVA==\n-----END CERTIFICATE-----\n".utf8)
    let policy = TrustPolicy(
      pins: [.init(hosts: ["api.example.com"], sha256: [Self.pinA])],
      certificateAuthorities: .replacingSystemTrust(with: [.data(certificate)]),
      clientCertificate: .pem(
        certificate: .data(certificate), key: .data(key), passphrase: Self.passphrase,
        for: ["api.example.com"]))
    let loaded = try LoadedTrust(policy)
    let values: [Any] = [
      policy, policy.clientCertificate as Any, TrustPolicy.Source.data(key), loaded,
      policy.certificateAuthorities as Any,
    ]
    for form in values.flatMap({ printedForms(of: $0) }) {
      #expect(!form.contains(Self.passphrase), "\(form)")
      #expect(!form.contains("S3CR3T"), "\(form)")
      // Data's own mirror lists every byte: 83 is the first of the key's.
      #expect(!form.contains("- 45"), "\(form)")
    }
    #expect(policy.description.contains("passphrase hidden"))
    #expect(policy.description.contains("api.example.com"))
  }

  @Test func aMismatchNamesTheHostAndThePinsExpected() {
    let error = PinMismatchError(host: "api.example.com", expected: [Self.pinA, Self.pinB])
    #expect(
      error.description
        == "the server of api.example.com presented a public key that matches none pinned for "
        + "it (sha256/\(Self.pinA), sha256/\(Self.pinB)); nothing was sent")
    #expect(APIError.transport(error).errorDescription?.contains("api.example.com") == true)
  }
}
