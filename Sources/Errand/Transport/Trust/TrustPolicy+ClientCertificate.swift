import Foundation

extension TrustPolicy {
  /// The certificate a client presents to the servers of some hosts when they ask for one
  /// (mutual TLS), with its private key.
  ///
  /// It is presented only to the hosts named, so that a redirect or a link to another server
  /// never shows it (a certificate names its holder). Hosts are matched as ``PinnedKeys``
  /// matches them; `*` alone names every host.
  ///
  /// Its ``description`` and mirror show the kind and the source's file name, never the key or
  /// the passphrase.
  public struct ClientCertificate: Sendable, Hashable, CustomStringConvertible,
    CustomReflectable
  {
    /// How the certificate is held.
    package enum Storage: Sendable, Hashable {
      case pem(certificate: Source, key: Source)
      case pkcs12(Source)
      case keychain(label: String)
    }

    package let storage: Storage
    /// What decrypts the key; never printed.
    package let passphrase: String?
    /// The hosts it is presented to.
    public let hosts: [String]

    /// A certificate and its private key in PEM (the key may be encrypted with `passphrase`).
    /// Read by `CurlTransport`; on Apple platforms use ``pkcs12(_:passphrase:for:)``.
    /// - Parameters:
    ///   - certificate: The certificate, and any intermediates after it.
    ///   - key: Its private key.
    ///   - passphrase: What decrypts the key, when it is encrypted.
    ///   - hosts: The hosts it is presented to.
    /// - Returns: The certificate.
    public static func pem(
      certificate: Source, key: Source, passphrase: String? = nil, for hosts: [String]
    ) -> ClientCertificate {
      ClientCertificate(
        storage: .pem(certificate: certificate, key: key), passphrase: passphrase, hosts: hosts)
    }

    /// A PKCS#12 (`.p12`, `.pfx`) file holding the certificate and its key.
    /// - Parameters:
    ///   - source: The PKCS#12 bytes.
    ///   - passphrase: What decrypts it.
    ///   - hosts: The hosts it is presented to.
    /// - Returns: The certificate.
    public static func pkcs12(_ source: Source, passphrase: String, for hosts: [String])
      -> ClientCertificate
    {
      ClientCertificate(storage: .pkcs12(source), passphrase: passphrase, hosts: hosts)
    }

    /// An identity (a certificate with its private key) in the app's keychain, found by its
    /// label (`kSecAttrLabel`). Apple platforms only.
    /// - Parameters:
    ///   - label: The identity's label.
    ///   - hosts: The hosts it is presented to.
    /// - Returns: The certificate.
    public static func keychainIdentity(label: String, for hosts: [String]) -> ClientCertificate {
      ClientCertificate(storage: .keychain(label: label), passphrase: nil, hosts: hosts)
    }

    /// The kind, where it comes from and the hosts; never the key or the passphrase.
    public var description: String {
      let kind =
        switch storage {
        case .pem(let certificate, let key): "PEM certificate (\(certificate)) and key (\(key))"
        case .pkcs12(let source): "PKCS#12 (\(source))"
        case .keychain(let label): "keychain identity \"\(label)\""
        }
      let secret = passphrase == nil ? "" : ", passphrase hidden"
      return "client certificate: \(kind)\(secret), for \(hosts.joined(separator: ", "))"
    }

    /// The same as ``description``.
    public var customMirror: Mirror {
      Mirror(self, children: ["clientCertificate": description], displayStyle: .struct)
    }
  }
}
