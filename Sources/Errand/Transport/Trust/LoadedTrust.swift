import Foundation

/// A ``TrustPolicy`` with its files read, checked and ready for a TLS engine: what a transport
/// keeps when it is created, so that a file that cannot be read fails there, once, and not each
/// request.
///
/// Its mirror (what `dump` shows of a transport that holds it) is the policy's description:
/// never a key, a certificate's bytes or a passphrase.
package struct LoadedTrust: Sendable, CustomReflectable {
  /// A client certificate, ready for the engine.
  package struct Identity: Sendable {
    /// The certificate: PEM, or PKCS#12's DER.
    package var certificate: Data
    /// Whether ``certificate`` is PKCS#12 (holding the key too).
    package var isPKCS12: Bool
    /// The PEM private key, when it is separate.
    package var key: Data?
    /// What decrypts the key or the PKCS#12 file.
    package var passphrase: String?
  }

  /// The policy as given.
  package let policy: TrustPolicy
  /// Every certificate authority of the policy, in one PEM bundle; `nil` when it names none.
  package private(set) var certificateAuthorities: Data?
  /// The client certificate read from its files; `nil` when there is none, or for a keychain
  /// identity (found when a server asks).
  package let identity: Identity?

  /// The most bytes read from one file: certificate bundles are far smaller, and a file that
  /// never ends (`/dev/zero`) must not be read into memory.
  package static let largestFile = 4 * 1024 * 1024

  /// Check `policy` and read its files.
  /// - Throws: ``InvalidConnectionOption`` for a part that is wrong or a file that cannot be
  ///   read or does not hold what it should; never quoting what a file holds.
  package init(_ policy: TrustPolicy) throws {
    try policy.validate()
    self.policy = policy
    if let authorities = policy.certificateAuthorities {
      var bundle = Data()
      for (index, source) in authorities.certificates.enumerated() {
        let option = "trust.certificateAuthorities.certificates[\(index)]"
        let pem = try Self.read(source, option)
        guard Self.holdsPEM(pem, "CERTIFICATE") else {
          throw InvalidConnectionOption(
            option: option,
            reason: "\(source) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        bundle.append(pem)
        bundle.append(0x0A)
      }
      certificateAuthorities = bundle
    } else {
      certificateAuthorities = nil
    }
    guard let certificate = policy.clientCertificate else {
      identity = nil
      return
    }
    switch certificate.storage {
    case .pem(let certificateSource, let keySource):
      let option = "trust.clientCertificate"
      let pem = try Self.read(certificateSource, "\(option).certificate")
      guard Self.holdsPEM(pem, "CERTIFICATE") else {
        throw InvalidConnectionOption(
          option: "\(option).certificate",
          reason: "\(certificateSource) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
      }
      let key = try Self.read(keySource, "\(option).key")
      guard Self.holdsPEM(key, "PRIVATE KEY") else {
        throw InvalidConnectionOption(
          option: "\(option).key",
          reason: "\(keySource) holds no PEM private key (-----BEGIN … PRIVATE KEY-----)")
      }
      identity = Identity(
        certificate: pem, isPKCS12: false, key: key, passphrase: certificate.passphrase)
    case .pkcs12(let source):
      let der = try Self.read(source, "trust.clientCertificate")
      // PKCS#12 is one DER SEQUENCE; a PEM file given by mistake starts with '-'.
      guard der.first == 0x30 else {
        throw InvalidConnectionOption(
          option: "trust.clientCertificate", reason: "\(source) is not PKCS#12 (DER) data")
      }
      identity = Identity(
        certificate: der, isPKCS12: true, key: nil, passphrase: certificate.passphrase)
    case .keychain:
      identity = nil
    }
  }

  /// Why a request to `url` must not be sent: its host is pinned (not report-only) and the
  /// request is not over HTTPS, where there is no key to compare; `nil` when it may go.
  package func refusal(for url: URL) -> APIError? {
    guard url.scheme?.lowercased() != "https", let host = url.host,
      let pins = policy.pins(for: host), !pins.reportOnly
    else { return nil }
    return .invalidRequest(
      "\(host) has pinned keys (TrustPolicy) but the request is \(url.scheme ?? "not HTTPS"): "
        + "a pin needs HTTPS; not sent")
  }

  package var customMirror: Mirror {
    Mirror(self, children: ["policy": policy.description], displayStyle: .struct)
  }

  /// The policy with `systemBundle` (the system's certificate authorities, in PEM) before its
  /// own, when they are added to the system's: for an engine whose own authorities give way
  /// to the policy's.
  package func keepingSystemTrust(_ systemBundle: Data?) -> LoadedTrust {
    guard let own = certificateAuthorities, let systemBundle,
      policy.certificateAuthorities?.replacesSystemTrust == false
    else { return self }
    var loaded = self
    loaded.certificateAuthorities = systemBundle + Data([0x0A]) + own
    return loaded
  }

  /// The first of `paths` that holds a PEM bundle, read; `nil` when none does.
  package static func firstBundle(at paths: [String]) -> Data? {
    for path in paths {
      if let data = try? read(.file(URL(fileURLWithPath: path)), "system"),
        holdsPEM(data, "CERTIFICATE")
      {
        return data
      }
    }
    return nil
  }

  /// The bytes of `source`, at most ``largestFile``.
  private static func read(_ source: TrustPolicy.Source, _ option: String) throws -> Data {
    let data: Data
    switch source {
    case .data(let bytes):
      data = bytes
    case .file(let url):
      data = try readRegularFile(url, option)
    }
    guard !data.isEmpty else {
      throw InvalidConnectionOption(option: option, reason: "\(source) is empty")
    }
    guard data.count <= largestFile else {
      throw InvalidConnectionOption(
        option: option, reason: "\(source) is larger than \(largestFile / 1024 / 1024) MiB")
    }
    return data
  }

  /// At most ``largestFile`` + 1 bytes of the regular file at `url`. It is opened without
  /// blocking (`O_NONBLOCK`: a named pipe with no writer does not hold the open), then what was
  /// opened is checked (`fstat`): the file read is the file checked, however the path leads to
  /// it, and a pipe or a device (`/dev/zero`, which never ends) is refused.
  private static func readRegularFile(_ url: URL, _ option: String) throws -> Data {
    let descriptor = open(url.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    guard descriptor >= 0 else {
      throw InvalidConnectionOption(
        option: option,
        reason:
          "\(url.path) cannot be read (\(String(validatingCString: strerror(errno)) ?? "error \(errno)"))"
      )
    }
    let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    var status = stat()
    guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
      throw InvalidConnectionOption(option: option, reason: "\(url.path) is not a regular file")
    }
    do {
      return try handle.read(upToCount: largestFile + 1) ?? Data()
    } catch {
      throw InvalidConnectionOption(
        option: option, reason: "\(url.path) cannot be read (\(error.localizedDescription))")
    }
  }

  /// Whether `data` holds a PEM block whose label ends with `label`.
  private static func holdsPEM(_ data: Data, _ label: String) -> Bool {
    guard let text = String(data: data, encoding: .utf8) else { return false }
    return text.range(of: "-----BEGIN ") != nil && text.range(of: "\(label)-----") != nil
  }
}
