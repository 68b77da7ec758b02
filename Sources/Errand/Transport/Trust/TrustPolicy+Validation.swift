import Foundation

extension TrustPolicy {
  /// The pins for `host` (a URL's host, any case, an IPv6 address with or without brackets):
  /// the pooled digests, in canonical base64, and whether a mismatch is only reported; `nil`
  /// when no set names the host.
  package func pins(for host: String) -> (sha256: [String], reportOnly: Bool)? {
    let matching = pins.filter { set in set.hosts.contains { Self.matches($0, host: host) } }
    guard !matching.isEmpty else { return nil }
    var digests: [String] = []
    for digest in matching.flatMap(\.sha256) {
      if let canonical = Self.canonicalPin(digest), !digests.contains(canonical) {
        digests.append(canonical)
      }
    }
    return (digests, matching.allSatisfy(\.reportOnly))
  }

  /// Whether the client certificate is presented to `host`.
  package func presentsClientCertificate(to host: String) -> Bool {
    clientCertificate?.hosts.contains { Self.matches($0, host: host) } ?? false
  }

  /// Whether `pattern` (a name, `*.name`, `**.name`, or `*` alone) names `host`.
  package static func matches(_ pattern: String, host: String) -> Bool {
    let pattern = normalized(pattern)
    let host = normalized(host)
    guard !host.isEmpty else { return false }
    if pattern == "*" { return true }
    if pattern.hasPrefix("**.") {
      let domain = String(pattern.dropFirst(3))
      return host == domain || host.hasSuffix("." + domain)
    }
    if pattern.hasPrefix("*.") {
      let domain = String(pattern.dropFirst(2))
      guard host.hasSuffix("." + domain) else { return false }
      let label = host.dropLast(domain.count + 1)
      return !label.isEmpty && !label.contains(".")
    }
    return host == pattern
  }

  /// A host or pattern lowercased, without an IPv6 address's brackets or a name's final dot,
  /// and an address in its one canonical spelling.
  private static func normalized(_ host: String) -> String {
    var host = host.lowercased()
    if host.hasPrefix("["), host.hasSuffix("]") {
      host = String(host.dropFirst().dropLast())
    }
    if host.hasSuffix(".") {
      host.removeLast()
    }
    return canonicalAddress(host) ?? host
  }

  /// An address as `inet_ntop` writes it (`127.0.0.1`, `::1`), from any spelling of it that a
  /// URL parser connects to: an IPv4 address in the forms `inet_aton` reads (`127.1`,
  /// `0x7f.0.0.1`, `0177.0.0.1`, `2130706433`, which libcurl rewrites to `127.0.0.1`), an IPv6
  /// address in any of its forms. `nil` for a name, so that a pin on `127.0.0.1` cannot be
  /// stepped around by writing the address another way.
  static func canonicalAddress(_ host: String) -> String? {
    var buffer = [CChar](repeating: 0, count: 64)
    if host.contains(":") {
      var v6 = in6_addr()
      guard inet_pton(AF_INET6, host, &v6) == 1,
        inet_ntop(AF_INET6, &v6, &buffer, socklen_t(buffer.count)) != nil
      else { return nil }
      return text(of: buffer)
    }
    // Digits, hex digits after `0x`, and dots only: `inet_aton` also stops at a space.
    guard !host.isEmpty,
      host.allSatisfy({ $0.isASCII && ($0.isHexDigit || $0 == "." || $0 == "x") }),
      host.first?.isNumber == true
    else { return nil }
    var v4 = in_addr()
    guard inet_aton(host, &v4) != 0,
      inet_ntop(AF_INET, &v4, &buffer, socklen_t(buffer.count)) != nil
    else { return nil }
    return text(of: buffer)
  }

  /// A C string's text, up to its NUL.
  private static func text(of buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// `digest` (base64, after an optional `sha256/` or `sha256//`) as canonical base64, when it
  /// decodes to 32 bytes.
  package static func canonicalPin(_ digest: String) -> String? {
    var text = Substring(digest.trimmingCharacters(in: .whitespaces))
    for prefix in ["sha256//", "sha256/"] where text.lowercased().hasPrefix(prefix) {
      text = text.dropFirst(prefix.count)
      break
    }
    guard let bytes = Data(base64Encoded: String(text)), bytes.count == 32 else { return nil }
    return bytes.base64EncodedString()
  }

  /// Check every part before a transport takes the policy.
  /// - Throws: ``InvalidConnectionOption`` naming the first part that is wrong; never quoting a
  ///   passphrase or a file's contents.
  package func validate() throws {
    for (index, set) in pins.enumerated() {
      let option = "trust.pins[\(index)]"
      guard !set.hosts.isEmpty else {
        throw InvalidConnectionOption(option: "\(option).hosts", reason: "names no host")
      }
      for host in set.hosts {
        try Self.checkPattern(host, "\(option).hosts")
      }
      guard !set.sha256.isEmpty else {
        throw InvalidConnectionOption(
          option: "\(option).sha256", reason: "holds no key: give the current key and a backup")
      }
      for digest in set.sha256 where Self.canonicalPin(digest) == nil {
        throw InvalidConnectionOption(
          option: "\(option).sha256",
          reason: "\"\(Self.printable(digest))\" is not a SHA-256 digest in base64 (44 "
            + "characters, for 32 bytes)")
      }
    }
    if let authorities = certificateAuthorities, authorities.certificates.isEmpty {
      throw InvalidConnectionOption(
        option: "trust.certificateAuthorities", reason: "names no certificate")
    }
    if let certificate = clientCertificate {
      guard !certificate.hosts.isEmpty else {
        throw InvalidConnectionOption(
          option: "trust.clientCertificate.hosts", reason: "names no host to present it to")
      }
      for host in certificate.hosts {
        try Self.checkPattern(host, "trust.clientCertificate.hosts")
      }
      if let passphrase = certificate.passphrase, passphrase.contains("\0") {
        // Never quoted: it is a secret.
        throw InvalidConnectionOption(
          option: "trust.clientCertificate.passphrase", reason: "holds a NUL character")
      }
      if case .keychain(let label) = certificate.storage, label.isEmpty {
        throw InvalidConnectionOption(
          option: "trust.clientCertificate", reason: "the keychain label is empty")
      }
    }
  }

  /// A host pattern: `*` alone, or a name or address after an optional `*.` or `**.`.
  private static func checkPattern(_ pattern: String, _ option: String) throws {
    if pattern == "*" { return }
    var name = Substring(pattern)
    if name.hasPrefix("**.") {
      name = name.dropFirst(3)
    } else if name.hasPrefix("*.") {
      name = name.dropFirst(2)
    }
    if name.hasPrefix("["), name.hasSuffix("]") {
      name = name.dropFirst().dropLast()
    }
    let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyz0123456789-._:")
    guard !name.isEmpty, name.count <= 253,
      name.lowercased().unicodeScalars.allSatisfy(allowed.contains)
    else {
      throw InvalidConnectionOption(
        option: option,
        reason: "\"\(printable(pattern))\" is not a host name, an address, \"*.name\", "
          + "\"**.name\" or \"*\"")
    }
  }

  /// `text` with control characters escaped and cut to 80 characters, for an error message.
  static func printable(_ text: String) -> String {
    let escaped = text.unicodeScalars.map { scalar in
      scalar.properties.generalCategory == .control
        ? scalar.escaped(asASCII: true) : String(scalar)
    }.joined()
    return escaped.count > 80 ? String(escaped.prefix(80)) + "…" : escaped
  }
}
