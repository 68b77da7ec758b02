import Foundation

/// The public suffixes: names under which anyone may register one of their own, such as `com`,
/// `co.uk` or `github.io`. A ``CookieJar`` refuses a cookie set for one (RFC 6265bis §5.7, step
/// 9), so that `attacker.co.uk` cannot set a cookie that `bank.co.uk` would receive.
///
/// Errand bundles a dated snapshot of the Public Suffix List (https://publicsuffix.org), ICANN and
/// private sections both: ``bundled``, published ``snapshotDate``. The list changes every week or
/// so; to use a newer one, read its text yourself and make a list of it:
///
/// ```swift
/// let text = try String(contentsOf: downloadedListFile, encoding: .utf8)
/// let jar = CookieJar(publicSuffixes: PublicSuffixList(rules: text))
/// ```
///
/// Names are compared in lower case, internationalized ones in either their Unicode or their
/// ASCII (`xn--`) form. The list's algorithm applies: a name no rule covers has its last label
/// as its public suffix.
public struct PublicSuffixList: Sendable, CustomStringConvertible, CustomReflectable {
  private let rules: Set<String>
  private let wildcards: Set<String>
  private let exceptions: Set<String>

  /// The bundled snapshot, published ``snapshotDate``.
  public static let bundled = PublicSuffixList(grouped: snapshotRules)

  /// A list read from the text of a Public Suffix List file: one rule a line, `//` comments and
  /// blank lines ignored, `*.` for a wildcard and `!` for an exception, as the list is published.
  /// - Parameter listText: The list's text.
  public init(rules listText: String) {
    let text = listText
    var rules = Set<String>()
    var wildcards = Set<String>()
    var exceptions = Set<String>()
    for line in text.split(whereSeparator: \.isNewline) {
      let trimmed = line.trimmingCharacters(in: .whitespaces)
      guard !trimmed.isEmpty, !trimmed.hasPrefix("//"),
        let rule = trimmed.split(whereSeparator: \.isWhitespace).first
      else { continue }
      Self.add(rule.lowercased(), to: &rules, &wildcards, &exceptions)
    }
    self.rules = rules
    self.wildcards = wildcards
    self.exceptions = exceptions
  }

  /// A list from the bundled form: one line a last label, followed by the rules ending with it,
  /// without it.
  private init(grouped text: String) {
    var rules = Set<String>()
    var wildcards = Set<String>()
    var exceptions = Set<String>()
    for line in text.split(separator: "\n") {
      let parts = line.split(separator: " ")
      guard let last = parts.first else { continue }
      rules.insert(String(last))
      for rest in parts.dropFirst() {
        Self.add("\(rest).\(last)", to: &rules, &wildcards, &exceptions)
      }
    }
    self.rules = rules
    self.wildcards = wildcards
    self.exceptions = exceptions
  }

  private static func add(
    _ rule: String, to rules: inout Set<String>, _ wildcards: inout Set<String>,
    _ exceptions: inout Set<String>
  ) {
    // An internationalized rule matches in its ASCII (`xn--`) form too, as hosts arrive in it.
    if !rule.allSatisfy(\.isASCII), let ascii = asciiForm(of: rule) {
      add(ascii, to: &rules, &wildcards, &exceptions)
    }
    if rule.hasPrefix("!") {
      exceptions.insert(String(rule.dropFirst()))
    } else if rule.hasPrefix("*.") {
      wildcards.insert(String(rule.dropFirst(2)))
    } else {
      rules.insert(rule)
    }
  }

  /// How many rules the list holds.
  public var count: Int { rules.count + wildcards.count + exceptions.count }

  /// The list's size, as `public suffix list (10707 rules)`.
  public var description: String { "public suffix list (\(count) rules)" }

  /// The list's size for `dump` and debuggers, not its ten thousand rules.
  public var customMirror: Mirror { Mirror(self, children: ["count": count]) }

  /// The public suffix of `host`: `co.uk` for `www.example.co.uk`, `com` for `example.com`;
  /// `nil` for an empty name, one with an empty label (`a..b`, `.com`) or an IP address.
  /// - Parameter host: A host name; a trailing dot is ignored.
  /// - Returns: The public suffix, in lower case.
  public func publicSuffix(of host: String) -> String? {
    guard let labels = Self.labels(of: host) else { return nil }
    return labels.suffix(suffixLength(of: labels)).joined(separator: ".")
  }

  /// The name one registers, a label more than the public suffix: `example.co.uk` for
  /// `www.example.co.uk`; `nil` when `host` is a public suffix itself, or not a host name.
  /// - Parameter host: A host name; a trailing dot is ignored.
  /// - Returns: The registrable domain, in lower case.
  public func registrableDomain(of host: String) -> String? {
    guard let labels = Self.labels(of: host) else { return nil }
    let length = suffixLength(of: labels)
    return labels.count > length ? labels.suffix(length + 1).joined(separator: ".") : nil
  }

  /// Whether `domain` is a public suffix: a name under which anyone may register one.
  /// - Parameter domain: A host name; a trailing dot is ignored.
  /// - Returns: Whether it is a public suffix; `false` for what is not a host name.
  public func isPublicSuffix(_ domain: String) -> Bool {
    guard let labels = Self.labels(of: domain) else { return false }
    return suffixLength(of: labels) >= labels.count
  }

  /// How many of `labels`, from the end, the public suffix has, by the list's algorithm: an
  /// exception rule prevails (its suffix is the rule less its first label), else the longest
  /// rule that matches, else the last label alone.
  private func suffixLength(of labels: [String]) -> Int {
    var longest = 1
    for start in labels.indices {
      let suffix = labels[start...].joined(separator: ".")
      let length = labels.count - start
      if exceptions.contains(suffix) { return length - 1 }
      if rules.contains(suffix) { longest = max(longest, length) }
      if start > 0, wildcards.contains(suffix) { longest = max(longest, length + 1) }
    }
    return longest
  }

  /// `rule` with each label that is not ASCII in its Punycode form (RFC 3492), `xn--` first;
  /// `nil` when a label cannot be encoded.
  static func asciiForm(of rule: String) -> String? {
    var labels: [String] = []
    for label in rule.split(separator: ".", omittingEmptySubsequences: false) {
      if label.allSatisfy(\.isASCII) {
        labels.append(String(label))
      } else if let encoded = punycode(String(label)) {
        labels.append("xn--" + encoded)
      } else {
        return nil
      }
    }
    return labels.joined(separator: ".")
  }

  /// The Punycode encoding of `label` (RFC 3492 §6.3), or `nil` on overflow.
  static func punycode(_ label: String) -> String? {
    let (base, tMin, tMax) = (36, 1, 26)
    let input = label.unicodeScalars.map { Int($0.value) }
    var output = String(String.UnicodeScalarView(label.unicodeScalars.filter(\.isASCII)))
    let basic = output.unicodeScalars.count
    var handled = basic
    if basic > 0 { output.append("-") }
    var (n, delta, bias) = (128, 0, 72)
    func digit(_ value: Int) -> Character {
      Character(Unicode.Scalar(UInt8(value < 26 ? 97 + value : 22 + value)))
    }
    while handled < input.count {
      guard let next = input.filter({ $0 >= n }).min() else { return nil }
      let (step, overflow) = (next - n).multipliedReportingOverflow(by: handled + 1)
      guard !overflow, delta <= Int(Int32.max) - step else { return nil }
      delta += step
      n = next
      for scalar in input {
        if scalar < n { delta += 1 }
        guard scalar == n else { continue }
        var q = delta
        var k = base
        while true {
          let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
          if q < t { break }
          output.append(digit(t + (q - t) % (base - t)))
          q = (q - t) / (base - t)
          k += base
        }
        output.append(digit(q))
        bias = adapt(delta, points: handled + 1, first: handled == basic)
        delta = 0
        handled += 1
      }
      delta += 1
      n += 1
    }
    return output
  }

  /// Bias adaptation (RFC 3492 §6.1).
  private static func adapt(_ delta: Int, points: Int, first: Bool) -> Int {
    var delta = first ? delta / 700 : delta / 2
    delta += delta / points
    var k = 0
    while delta > ((36 - 1) * 26) / 2 {
      delta /= 36 - 1
      k += 36
    }
    return k + (36 - 1 + 1) * delta / (delta + 38)
  }

  /// `host`'s labels, in lower case, or `nil` when it is not a host name.
  private static func labels(of host: String) -> [String]? {
    var name = host.lowercased()
    if name.hasSuffix(".") { name.removeLast() }
    guard !name.isEmpty, !ConnectionOptions.isAddress(name), !name.hasPrefix("[") else {
      return nil
    }
    let labels = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    return labels.contains(where: \.isEmpty) ? nil : labels
  }
}
