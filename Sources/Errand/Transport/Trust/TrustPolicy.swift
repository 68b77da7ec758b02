import Foundation

/// Whom a client trusts over HTTPS, and who it says it is: public keys pinned per host, your own
/// certificate authorities, and a client certificate for servers that ask for one (mutual TLS).
///
/// One value describes it for every transport that can honour it; a transport that cannot
/// honour a part refuses the whole policy when it is created (``UnsupportedTransportOption``),
/// never quietly sending without it.
///
/// ```swift
/// let trust = TrustPolicy(
///   pins: [
///     .init(hosts: ["api.example.com"], sha256: [current, backup])
///   ],
///   certificateAuthorities: .adding([.file(companyRootCA)]),
///   clientCertificate: .pkcs12(.file(identityFile), passphrase: passphrase,
///     for: ["api.example.com"]))
/// let transport = try CurlTransport(trust: trust)
/// ```
///
/// | Part | `CurlTransport` (Linux) | `URLSessionTransport` on Apple platforms | `URLSessionTransport` on Linux |
/// |---|---|---|---|
/// | ``pins`` | yes | yes | throws |
/// | ``certificateAuthorities`` | yes | yes | throws |
/// | ``clientCertificate`` PEM | yes | throws (use PKCS#12) | throws |
/// | ``clientCertificate`` PKCS#12 | yes | yes | throws |
/// | ``clientCertificate`` keychain | throws | yes | throws |
///
/// Its ``description`` and its mirror (what `dump` and debuggers show) never show a key, a
/// certificate's bytes or a passphrase.
public struct TrustPolicy: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
  /// Public keys the server of a host must present, host by host. A host that no set names is
  /// not pinned.
  public var pins: [PinnedKeys]
  /// Certificate authorities that servers' certificates may lead to, added to the system's or in
  /// its place; `nil` trusts the system's alone.
  public var certificateAuthorities: CertificateAuthorities?
  /// The certificate the client presents to servers that ask for one; `nil` presents none.
  public var clientCertificate: ClientCertificate?

  /// A policy.
  /// - Parameters:
  ///   - pins: Public keys pinned per host; none by default.
  ///   - certificateAuthorities: Your own certificate authorities; `nil` (the default) trusts
  ///     the system's.
  ///   - clientCertificate: The client's certificate; `nil` (the default) presents none.
  public init(
    pins: [PinnedKeys] = [], certificateAuthorities: CertificateAuthorities? = nil,
    clientCertificate: ClientCertificate? = nil
  ) {
    self.pins = pins
    self.certificateAuthorities = certificateAuthorities
    self.clientCertificate = clientCertificate
  }

  /// The pinned hosts, the certificate authorities and the kind of client certificate; never a
  /// key, a certificate's bytes or a passphrase.
  public var description: String {
    var parts = pins.map(\.description)
    if let certificateAuthorities { parts.append(certificateAuthorities.description) }
    if let clientCertificate { parts.append(clientCertificate.description) }
    return "TrustPolicy(\(parts.joined(separator: "; ")))"
  }

  /// The same parts as ``description``, so that `dump` shows no secret either.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "pins": pins.map(\.description),
        "certificateAuthorities": certificateAuthorities?.description as Any,
        "clientCertificate": clientCertificate?.description as Any,
      ], displayStyle: .struct)
  }
}

extension TrustPolicy {
  /// Where a certificate, a key or a bundle of them comes from: a file, read when the transport
  /// is created, or bytes you hold (bundled in the app, fetched from a secret store).
  public enum Source: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// A file, read once when the transport is created.
    case file(URL)
    /// The file's contents.
    case data(Data)

    /// The file's name, or how many bytes: never the bytes.
    public var description: String {
      switch self {
      case .file(let url): "file \(url.lastPathComponent)"
      case .data(let data): "\(data.count) bytes"
      }
    }

    /// The same as ``description``: `dump` of `Data` would list every byte.
    public var customMirror: Mirror {
      Mirror(self, children: ["source": description], displayStyle: .enum)
    }
  }

  /// The public keys the servers of some hosts must present: the SHA-256 digest of the
  /// certificate's SubjectPublicKeyInfo, in base64 (what
  /// `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`
  /// prints).
  ///
  /// The server's own certificate (the leaf) is compared, on every transport: give the key in
  /// use and at least one backup key (one not yet deployed), so that a change of key does not
  /// lock the app out. A connection whose key matches none is closed during the TLS handshake,
  /// before any byte of the request is written, and the call fails with ``PinMismatchError``
  /// (as ``APIError/transport(_:)``). The server's certificate must also pass the usual checks:
  /// a pin adds to them, it never replaces them.
  ///
  /// Hosts are names or addresses, matched ignoring case: `api.example.com` names that host
  /// only; `*.example.com` any host one label below `example.com` (`a.example.com`, not
  /// `a.b.example.com`, not `example.com`); `**.example.com` `example.com` and every host below
  /// it. When several sets name a host, their keys are pooled; the pool is report-only only
  /// when every one of those sets is.
  public struct PinnedKeys: Sendable, Hashable, CustomStringConvertible {
    /// The hosts whose servers must present one of the keys.
    public var hosts: [String]
    /// The keys' SHA-256 digests in base64 (a `sha256/` or `sha256//` prefix is accepted).
    public var sha256: [String]
    /// When `true`, a server whose key matches none is not refused: the call's listeners hear
    /// ``CallEvent/Kind/pinMismatchReported(_:)`` and the call goes on. For trying pins out
    /// before enforcing them; with `CurlTransport` a key that does not match costs each call
    /// one more TLS handshake (the first is closed before anything is sent).
    public var reportOnly: Bool

    /// Keys for some hosts.
    /// - Parameters:
    ///   - hosts: Host names or addresses, or patterns (`*.example.com`, `**.example.com`).
    ///   - sha256: The keys' SHA-256 digests in base64: the current key and a backup.
    ///   - reportOnly: Whether a mismatch is only reported (`false` by default: refused).
    public init(hosts: [String], sha256: [String], reportOnly: Bool = false) {
      self.hosts = hosts
      self.sha256 = sha256
      self.reportOnly = reportOnly
    }

    /// The hosts, how many keys, and whether it is report-only; the digests are public, but
    /// long.
    public var description: String {
      "pins for \(hosts.joined(separator: ", ")): \(sha256.count) "
        + "key\(sha256.count == 1 ? "" : "s")\(reportOnly ? ", report-only" : "")"
    }
  }

  /// Certificate authorities of your own (a company root, a test CA), in PEM.
  public struct CertificateAuthorities: Sendable, Hashable, CustomStringConvertible {
    /// PEM bundles: each holds one or more `-----BEGIN CERTIFICATE-----` blocks.
    public var certificates: [Source]
    /// Whether only these are trusted (`true`) or they are trusted beside the system's.
    public var replacesSystemTrust: Bool

    /// Authorities.
    /// - Parameters:
    ///   - certificates: PEM bundles.
    ///   - replacesSystemTrust: Whether only these are trusted.
    public init(certificates: [Source], replacesSystemTrust: Bool) {
      self.certificates = certificates
      self.replacesSystemTrust = replacesSystemTrust
    }

    /// Trust these beside the system's certificate authorities.
    /// - Parameter certificates: PEM bundles.
    /// - Returns: The authorities.
    public static func adding(_ certificates: [Source]) -> CertificateAuthorities {
      CertificateAuthorities(certificates: certificates, replacesSystemTrust: false)
    }

    /// Trust these alone: a server whose certificate leads only to the system's authorities is
    /// refused.
    /// - Parameter certificates: PEM bundles.
    /// - Returns: The authorities.
    public static func replacingSystemTrust(with certificates: [Source])
      -> CertificateAuthorities
    {
      CertificateAuthorities(certificates: certificates, replacesSystemTrust: true)
    }

    /// Where they come from and whether they replace the system's.
    public var description: String {
      "certificate authorities (\(certificates.map(\.description).joined(separator: ", "))) "
        + (replacesSystemTrust ? "in place of the system's" : "beside the system's")
    }
  }
}
