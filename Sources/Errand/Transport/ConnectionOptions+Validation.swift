import Foundation

/// Why a transport refused its ``ConnectionOptions`` when it was created: the option, and what
/// is wrong with it. Never quotes a proxy's password.
public struct InvalidConnectionOption: Error, Hashable, CustomStringConvertible, LocalizedError {
  /// The option, for example `proxy.host` or `unixSockets["docker"]`.
  public var option: String
  /// What is wrong with it.
  public var reason: String

  /// An error about `option`.
  /// - Parameters:
  ///   - option: The option.
  ///   - reason: What is wrong with it.
  public init(option: String, reason: String) {
    self.option = option
    self.reason = reason
  }

  /// The option and the reason, on one line.
  public var description: String { "Invalid connection option \(option): \(reason)" }
  /// The same as ``description``.
  public var errorDescription: String? { description }
}

extension ConnectionOptions {
  /// Check every option a transport hands to its engine as text, before any request is sent.
  /// - Throws: ``InvalidConnectionOption`` for the first option that is wrong.
  package func validate() throws {
    if let proxy {
      // An IPv4 or IPv6 address is a host too; the engine gets an IPv6 one in brackets.
      if !Self.isAddress(proxy.host) {
        try Self.checkName(proxy.host, "proxy.host")
      }
      try Self.checkPort(proxy.port, "proxy.port")
      try Self.checkText(proxy.username, "proxy.username", quoted: true)
      // Never quoted: it is a secret.
      try Self.checkText(proxy.password, "proxy.password", quoted: false)
      for host in proxy.bypassedHosts where host != "*" {
        // The engine has no wildcards inside a name: `*.example.com` would match no host.
        guard !host.contains("*") else {
          throw InvalidConnectionOption(
            option: "proxy.bypassedHosts",
            reason: "\"\(Self.printable(host))\" holds a '*': give \"example.com\" for a domain "
              + "and its subdomains, or \"*\" alone for every host")
        }
        // An address or a range of them (`10.0.0.0/8`, `fd00::/8`) is a host too.
        if !Self.isAddress(host), !Self.isRange(host) {
          try Self.checkName(host, "proxy.bypassedHosts")
        }
      }
      try Self.checkLength(
        proxy.bypassedHosts.joined(separator: ","), "proxy.bypassedHosts", quoted: false)
    }
    // Matched ignoring case: two names that differ only in case would leave the choice of
    // socket to the dictionary's order.
    let names = Dictionary(grouping: unixSockets.keys) { $0.lowercased() }
    if let twice = names.values.first(where: { $0.count > 1 }) {
      throw InvalidConnectionOption(
        option: "unixSockets",
        reason: "\(twice.sorted().map { "\"\(Self.printable($0))\"" }.joined(separator: " and ")) "
          + "are one host name (names are matched ignoring case)")
    }
    for (host, path) in unixSockets {
      try Self.checkName(host, "unixSockets")
      try Self.checkText(path, "unixSockets[\"\(host)\"]", quoted: true)
      guard path.hasPrefix("/") else {
        throw InvalidConnectionOption(
          option: "unixSockets[\"\(host)\"]", reason: "\"\(path)\" is not an absolute path")
      }
      // `sun_path` holds 108 bytes on Linux (104 on Apple platforms), the last one a NUL.
      guard path.utf8.count < 104 else {
        throw InvalidConnectionOption(
          option: "unixSockets[\"\(host)\"]",
          reason: "the path is \(path.utf8.count) bytes long; a socket's path has at most 103")
      }
    }
    for override in hostOverrides {
      try Self.checkName(override.host, "hostOverrides")
      try Self.checkPort(override.port, "hostOverrides[\"\(override.host)\"].port")
      guard Self.isAddress(override.address) else {
        throw InvalidConnectionOption(
          option: "hostOverrides[\"\(override.host)\"].address",
          reason: "\"\(Self.printable(override.address))\" is not an IPv4 or IPv6 address")
      }
    }
  }

  /// A host name: letters, digits, `-`, `.`, `_`, at most 253 of them, not starting with `-`
  /// (which `CURLOPT_RESOLVE` reads as "remove this entry").
  private static func checkName(_ name: String, _ option: String) throws {
    let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._")
    // Dots alone (`.`, `..`) name no host.
    guard !name.isEmpty, name.count <= 253, name.first != "-", name.allSatisfy(allowed.contains),
      name.contains(where: { $0 != "." })
    else {
      throw InvalidConnectionOption(
        option: option,
        reason: "\"\(printable(name))\" is not a host name (letters, digits, '-', '.', '_')")
    }
  }

  private static func checkPort(_ port: Int, _ option: String) throws {
    guard (1...65_535).contains(port) else {
      throw InvalidConnectionOption(option: option, reason: "\(port) is not a port (1 to 65535)")
    }
  }

  /// Text handed to the engine as a C string: no NUL, no line breaks, nothing that is not
  /// printable, no longer than the engine takes.
  private static func checkText(_ text: String?, _ option: String, quoted: Bool) throws {
    guard let text else { return }
    try checkLength(text, option, quoted: quoted)
    guard text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else {
      throw InvalidConnectionOption(
        option: option,
        reason: quoted
          ? "\"\(printable(text))\" holds a control character" : "it holds a control character")
    }
  }

  /// At most 8,000,000 bytes: libcurl refuses a longer string option
  /// (`CURL_MAX_INPUT_LENGTH`), which would otherwise fail every request, not the transport.
  private static func checkLength(_ text: String, _ option: String, quoted: Bool) throws {
    guard text.utf8.count > 8_000_000 else { return }
    throw InvalidConnectionOption(
      option: option,
      reason: (quoted ? "\"\(printable(text))\" is " : "it is ")
        + "\(text.utf8.count) bytes long; at most 8000000")
  }

  /// `text` with its control characters escaped, whatever precedes its last `@` (credentials
  /// pasted in) hidden, cut to 80 characters, for an error message.
  private static func printable(_ text: String) -> String {
    let escaped = hidingCredentials(in: text).unicodeScalars.map { scalar in
      scalar.value < 0x20 || scalar.value == 0x7F
        ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
    }.joined()
    return escaped.count > 80 ? String(escaped.prefix(80)) + "…" : escaped
  }

  /// Whether `text` is a range of addresses in CIDR notation: an address, `/`, and a prefix
  /// length that fits it (at most 32 for IPv4, 128 for IPv6).
  static func isRange(_ text: String) -> Bool {
    let parts = text.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 2, isAddress(String(parts[0])),
      !parts[1].isEmpty, parts[1].count <= 3, parts[1].allSatisfy(\.isWholeNumber),
      parts[1].allSatisfy(\.isASCII), let bits = Int(parts[1])
    else { return false }
    return (0...(parts[0].contains(":") ? 128 : 32)).contains(bits)
  }

  /// Whether `text` is an IPv4 or IPv6 address.
  static func isAddress(_ text: String) -> Bool {
    var v4 = in_addr()
    var v6 = in6_addr()
    return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
  }
}
