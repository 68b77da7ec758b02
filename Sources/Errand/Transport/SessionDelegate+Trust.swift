#if canImport(Security)
  import Foundation
  import Security
  #if canImport(FoundationNetworking)
    import FoundationNetworking
  #endif

  /// Answering the server-trust and client-certificate challenges as the transport's
  /// ``TrustPolicy`` says (Apple platforms; URLSession on Linux raises neither).
  extension SessionDelegate {
    /// `NSURLAuthenticationMethodClientCertificate`'s value.
    static let clientCertificate = "NSURLAuthenticationMethodClientCertificate"

    /// Answer `challenge` as `trust` says, and return `true`; `false` when the policy has
    /// nothing to say about it (the usual answer then applies).
    func answer(
      _ challenge: URLAuthenticationChallenge, task: URLSessionTask, trust: LoadedTrust,
      completionHandler:
        @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) -> Bool {
      let space = challenge.protectionSpace
      switch space.authenticationMethod {
      case Self.serverTrust:
        guard let serverTrust = space.serverTrust else { return false }
        if let failure = evaluate(serverTrust, host: space.host, task: task, trust: trust) {
          finish(task.taskIdentifier, with: .failure(failure))
          completionHandler(.cancelAuthenticationChallenge, nil)
        } else {
          completionHandler(.useCredential, URLCredential(trust: serverTrust))
        }
        return true
      case Self.clientCertificate:
        guard trust.policy.presentsClientCertificate(to: space.host),
          let (identity, intermediates) = Self.identity(trust)
        else { return false }
        // The intermediates go with it, for a server that knows only the root.
        completionHandler(
          .useCredential,
          URLCredential(
            identity: identity, certificates: intermediates, persistence: .forSession))
        return true
      default:
        return false
      }
    }

    /// Why the server's trust is refused: the system's checks, with the policy's authorities
    /// as anchors (beside the system's or alone), then the pins against the server's own key;
    /// `nil` when it is trusted. A report-only mismatch is told to the call's listeners.
    private func evaluate(
      _ serverTrust: SecTrust, host: String, task: URLSessionTask, trust: LoadedTrust
    )
      -> (any Error)?
    {
      if let bundle = trust.certificateAuthorities {
        let anchors = CertificateKey.certificates(inPEM: bundle).compactMap {
          SecCertificateCreateWithData(nil, $0 as CFData)
        }
        guard SecTrustSetAnchorCertificates(serverTrust, anchors as CFArray) == errSecSuccess,
          SecTrustSetAnchorCertificatesOnly(
            serverTrust, trust.policy.certificateAuthorities?.replacesSystemTrust ?? false)
            == errSecSuccess
        else { return URLError(.serverCertificateUntrusted) }
      }
      guard SecTrustEvaluateWithError(serverTrust, nil) else {
        return URLError(.serverCertificateUntrusted)
      }
      guard let pins = trust.policy.pins(for: host) else { return nil }
      let chain = SecTrustCopyCertificateChain(serverTrust) as? [SecCertificate] ?? []
      let presented = chain.first.flatMap {
        CertificateKey.pin(ofCertificate: SecCertificateCopyData($0) as Data)
      }
      if let presented, pins.sha256.contains(presented) { return nil }
      let mismatch = PinMismatchError(
        host: host, expected: pins.sha256, reportOnly: pins.reportOnly)
      guard pins.reportOnly else { return mismatch }
      exchange(of: task)?.pinMismatchReported(mismatch)
      return nil
    }

    /// The client identity and the intermediate certificates that go with it: imported from the
    /// policy's PKCS#12 bytes, or found in the keychain by its label (with no intermediates);
    /// `nil` when there is none.
    static func identity(_ trust: LoadedTrust) -> (SecIdentity, [Any])? {
      switch trust.policy.clientCertificate?.storage {
      case .pkcs12?:
        guard let identity = trust.identity else { return nil }
        var items: CFArray?
        let options = [kSecImportExportPassphrase as String: identity.passphrase ?? ""]
        guard
          SecPKCS12Import(identity.certificate as CFData, options as CFDictionary, &items)
            == errSecSuccess,
          let first = (items as? [[String: Any]])?.first,
          let found = first[kSecImportItemIdentity as String]
        else { return nil }
        let chain = first[kSecImportItemCertChain as String] as? [Any] ?? []
        return (found as! SecIdentity, Array(chain.dropFirst()))
      case .keychain(let label)?:
        let query: [String: Any] = [
          kSecClass as String: kSecClassIdentity, kSecAttrLabel as String: label,
          kSecReturnRef as String: true, kSecMatchLimit as String: kSecMatchLimitOne,
        ]
        var found: CFTypeRef?
        guard SecItemCopyMatching(query as CFDictionary, &found) == errSecSuccess, let found
        else { return nil }
        return (found as! SecIdentity, [])
      default:
        return nil
      }
    }
  }
#endif
