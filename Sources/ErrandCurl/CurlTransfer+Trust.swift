#if os(Linux)
  import CErrandCurl
  @_spi(Transports) import Errand
  import Foundation
  import FoundationNetworking

  /// Setting up whom a transfer trusts and who it says it is (`TrustPolicy`, read when the
  /// transport was created).
  extension CurlTransfer {
    /// Set the certificate authorities, the pins for the request's host (report-only ones only
    /// when `reportOnlyPins`: not when connecting again after they did not match) and the client
    /// certificate, if it is presented to that host.
    func configure(_ trust: LoadedTrust, for request: HTTPRequest, reportOnlyPins: Bool) throws {
      let host = request.url.host ?? ""
      if let bundle = trust.certificateAuthorities {
        // The blob takes the place of CURLOPT_CAINFO; the bundle already holds the system's
        // authorities when they are kept (CurlTransport read them).
        try setBlob(CurlOption.caInfoBlob, bundle)
        if trust.policy.certificateAuthorities?.replacesSystemTrust == true {
          try setPointer(CurlOption.caPath, nil)
        }
      }
      if let pins = trust.policy.pins(for: host), !pins.sha256.isEmpty,
        !pins.reportOnly || reportOnlyPins
      {
        try setString(
          CurlOption.pinnedPublicKey, pins.sha256.map { "sha256//\($0)" }.joined(separator: ";"))
        pinned = PinMismatchError(host: host, expected: pins.sha256, reportOnly: pins.reportOnly)
      }
      if let identity = trust.identity, trust.policy.presentsClientCertificate(to: host) {
        try setBlob(CurlOption.sslCertBlob, identity.certificate)
        try setString(CurlOption.sslCertType, identity.isPKCS12 ? "P12" : "PEM")
        if let key = identity.key {
          try setBlob(CurlOption.sslKeyBlob, key)
          try setString(CurlOption.sslKeyType, "PEM")
        }
        if let passphrase = identity.passphrase {
          try setString(CurlOption.keyPassword, passphrase)
        }
      }
    }

    /// Set a `CURLOPTTYPE_BLOB` option: libcurl copies the bytes.
    func setBlob(_ option: Int32, _ data: Data) throws {
      try data.withUnsafeBytes { bytes in
        try check(
          errand_curl_easy_setopt_blob(easy, option, bytes.baseAddress, bytes.count), option)
      }
    }
  }
#endif
