import Errand
import Foundation
import Testing

/// Reading a `TrustPolicy`'s files when a transport is created: what is refused, by name, and
/// that nothing blocks or reads without end.
@Suite(.timeLimit(.minutes(3))) struct LoadedTrustTests {
  static let certificate = Data(
    "-----BEGIN CERTIFICATE-----\nQ0VSVA==\n-----END CERTIFICATE-----\n".utf8)
  static let key = Data("-----BEGIN EC PRIVATE KEY-----\nS0VZ\n-----END EC PRIVATE KEY-----\n".utf8)

  /// A folder of its own, removed when `body` ends.
  static func inFolder<T>(_ body: (URL) throws -> T) throws -> T {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("errand-trust-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    return try body(folder)
  }

  static func authorities(_ source: TrustPolicy.Source) -> TrustPolicy {
    TrustPolicy(certificateAuthorities: .adding([source]))
  }

  struct Case: Sendable, CustomTestStringConvertible {
    var name: String
    /// The policy, given a folder to put files in.
    var policy: @Sendable (URL) throws -> TrustPolicy
    var option: String
    var reason: String
    var testDescription: String { name }
  }

  static let cases: [Case] = [
    Case(
      name: "a missing file", policy: { authorities(.file($0.appendingPathComponent("none.pem"))) },
      option: "trust.certificateAuthorities.certificates[0]", reason: "cannot be read"),
    Case(
      name: "a folder", policy: { authorities(.file($0)) },
      option: "trust.certificateAuthorities.certificates[0]", reason: "is not a regular file"),
    Case(
      name: "a device that never ends",
      policy: { _ in authorities(.file(URL(fileURLWithPath: "/dev/zero"))) },
      option: "trust.certificateAuthorities.certificates[0]", reason: "is not a regular file"),
    Case(
      name: "a named pipe no one writes to",
      policy: { folder in
        let fifo = folder.appendingPathComponent("pipe")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        return authorities(.file(fifo))
      },
      option: "trust.certificateAuthorities.certificates[0]", reason: "is not a regular file"),
    Case(
      name: "an empty file",
      policy: { folder in
        let file = folder.appendingPathComponent("empty.pem")
        try Data().write(to: file)
        return authorities(.file(file))
      },
      option: "trust.certificateAuthorities.certificates[0]", reason: "is empty"),
    Case(
      name: "no PEM certificate", policy: { _ in authorities(.data(Data("hello".utf8))) },
      option: "trust.certificateAuthorities.certificates[0]", reason: "holds no PEM certificate"),
    Case(
      name: "more than 4 MiB",
      policy: { _ in authorities(.data(certificate + Data(count: 4 * 1024 * 1024))) },
      option: "trust.certificateAuthorities.certificates[0]", reason: "larger than 4 MiB"),
    Case(
      name: "a key that is no key",
      policy: { _ in
        TrustPolicy(
          clientCertificate: .pem(
            certificate: .data(certificate), key: .data(certificate), for: ["*"]))
      },
      option: "trust.clientCertificate.key", reason: "holds no PEM private key"),
    Case(
      name: "PEM given as PKCS#12",
      policy: { _ in
        TrustPolicy(clientCertificate: .pkcs12(.data(certificate), passphrase: "p", for: ["*"]))
      },
      option: "trust.clientCertificate", reason: "is not PKCS#12"),
  ]

  @Test(arguments: cases)
  func aFileThatCannotServeIsRefusedByName(_ check: Case) throws {
    try Self.inFolder { folder in
      let policy = try check.policy(folder)
      let error = #expect(throws: InvalidConnectionOption.self) { try LoadedTrust(policy) }
      #expect(error?.option == check.option)
      #expect(error?.reason.contains(check.reason) == true, "\(error?.reason ?? "")")
      // Never what the file holds.
      #expect(error?.reason.contains("Q0VSVA") == false)
    }
  }

  /// Authorities added to the system's come after the system's bundle; ones in its place alone.
  @Test func addedAuthoritiesKeepTheSystemsAndReplacingOnesDoNot() throws {
    let system = Data("-----BEGIN CERTIFICATE-----\nU1lT\n-----END CERTIFICATE-----\n".utf8)
    let added = try LoadedTrust(Self.authorities(.data(Self.certificate)))
      .keepingSystemTrust(system)
    #expect(added.certificateAuthorities == system + Data([0x0A]) + Self.certificate + Data([0x0A]))
    let replaced = try LoadedTrust(
      TrustPolicy(certificateAuthorities: .replacingSystemTrust(with: [.data(Self.certificate)]))
    ).keepingSystemTrust(system)
    #expect(replaced.certificateAuthorities == Self.certificate + Data([0x0A]))
  }

  @Test func aSymbolicLinkToACertificateIsRead() throws {
    try Self.inFolder { folder in
      let file = folder.appendingPathComponent("ca.pem")
      try Self.certificate.write(to: file)
      let link = folder.appendingPathComponent("link.pem")
      try FileManager.default.createSymbolicLink(at: link, withDestinationURL: file)
      let loaded = try LoadedTrust(Self.authorities(.file(link)))
      #expect(loaded.certificateAuthorities == Self.certificate + Data([0x0A]))
    }
  }

  @Test func aPEMIdentityIsReadWithItsKeyAndPassphrase() throws {
    let loaded = try LoadedTrust(
      TrustPolicy(
        clientCertificate: .pem(
          certificate: .data(Self.certificate), key: .data(Self.key), passphrase: "p",
          for: ["a.test"])))
    let identity = try #require(loaded.identity)
    #expect(identity.certificate == Self.certificate)
    #expect(identity.key == Self.key)
    #expect(identity.passphrase == "p")
    #expect(!identity.isPKCS12)
  }
}
