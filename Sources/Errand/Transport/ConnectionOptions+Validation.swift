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
      try Self.checkName(proxy.host, "proxy.host")
      try Self.checkPort(proxy.port, "proxy.port")
      try Self.checkText(proxy.username, "proxy.username", quoted: true)
      // Never quoted: it is a secret.
      try Self.checkText(proxy.password, "proxy.password", quoted: false)
      for host in proxy.bypassedHosts {
        try Self.checkName(host, "proxy.bypassedHosts", allowing: "*")
      }
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

  /// A host name: letters, digits, `-`, `.`, `_` (and `allowing`), at most 253 of them.
  private static func checkName(_ name: String, _ option: String, allowing: String = "")
    throws
  {
    let allowed = Set(
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._" + allowing)
    guard !name.isEmpty, name.count <= 253, name.allSatisfy(allowed.contains) else {
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
  /// printable.
  private static func checkText(_ text: String?, _ option: String, quoted: Bool) throws {
    guard let text else { return }
    guard text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else {
      throw InvalidConnectionOption(
        option: option,
        reason: quoted
          ? "\"\(printable(text))\" holds a control character" : "it holds a control character")
    }
  }

  /// `text` with its control characters escaped, cut to 80 characters, for an error message.
  private static func printable(_ text: String) -> String {
    let escaped = text.unicodeScalars.map { scalar in
      scalar.value < 0x20 || scalar.value == 0x7F
        ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
    }.joined()
    return escaped.count > 80 ? String(escaped.prefix(80)) + "…" : escaped
  }

  /// Whether `text` is an IPv4 or IPv6 address.
  private static func isAddress(_ text: String) -> Bool {
    var v4 = in_addr()
    var v6 = in6_addr()
    return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
  }
}
