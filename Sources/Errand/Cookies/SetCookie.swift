import Foundation

/// One `Set-Cookie` field value, parsed as RFC 6265bis §5.6 requires of a user agent: the name
/// and value, and the attributes the jar acts on, each already processed (the last of each
/// kind wins, as §5.7 reads them).
struct SetCookie: Sendable {
  var name: String
  var value: String
  /// The expiry `Max-Age` gives: `.distantPast` for zero or less.
  var maxAge: Date?
  /// The expiry `Expires` gives.
  var expires: Date?
  /// The `Domain` attribute, in lower case without its leading dot (possibly empty).
  var domain: String?
  /// The `Path` attribute, or the default path when it is empty or relative.
  var path: String?
  var isSecure = false
  var isHTTPOnly = false
  var sameSite = Cookie.SameSite.default

  /// Why a field value is ignored before it becomes a cookie.
  enum Refusal: Error {
    case controlCharacter, tooLarge
  }

  /// Parse `text`, received in answer to `url`, at `now`, with `lifetimeLimit` as the longest
  /// a cookie may last.
  static func parse(
    _ text: String, from url: URL, now: Date, lifetimeLimit: TimeInterval
  ) -> Result<SetCookie, Refusal> {
    // Step 1: a control character other than a tab anywhere, and the field is ignored.
    if text.unicodeScalars.contains(where: isControl) { return .failure(.controlCharacter) }
    let (pair, attributes) = split(text, at: ";")
    var name = ""
    var value = pair
    if let equals = pair.firstIndex(of: "=") {
      name = String(pair[..<equals])
      value = String(pair[pair.index(after: equals)...])
    }
    name = trimmed(name)
    value = trimmed(value)
    if name.utf8.count + value.utf8.count > 4096 { return .failure(.tooLarge) }
    var cookie = SetCookie(name: name, value: value)
    // Each `;`-separated piece after the pair is a cookie-av, in one pass over the field.
    for av in attributes.split(separator: ";", omittingEmptySubsequences: false).dropFirst() {
      var attributeName = Substring(av)
      var attributeValue = Substring()
      if let equals = av.firstIndex(of: "=") {
        attributeName = av[..<equals]
        attributeValue = av[av.index(after: equals)...]
      }
      let trimmedValue = trimmed(String(attributeValue))
      guard trimmedValue.utf8.count <= 1024 else { continue }
      cookie.apply(
        trimmed(String(attributeName)).lowercased(), trimmedValue, from: url, now: now,
        lifetimeLimit: lifetimeLimit)
    }
    return .success(cookie)
  }

  /// Process one attribute (§5.6.1 to §5.6.7); an unknown one is ignored.
  private mutating func apply(
    _ name: String, _ value: String, from url: URL, now: Date, lifetimeLimit: TimeInterval
  ) {
    switch name {
    case "expires":
      guard let date = CookieDate.parse(value) else { return }
      expires = min(date, now.addingTimeInterval(lifetimeLimit))
    case "max-age":
      guard let seconds = Self.deltaSeconds(value) else { return }
      let limited = min(Double(seconds), lifetimeLimit)
      maxAge = limited <= 0 ? .distantPast : now.addingTimeInterval(limited)
    case "domain":
      var domain = value
      if domain.hasPrefix(".") { domain.removeFirst() }
      self.domain = domain.lowercased()
    case "path":
      path = value.hasPrefix("/") ? value : Self.defaultPath(of: url)
    case "secure":
      isSecure = true
    case "httponly":
      isHTTPOnly = true
    case "samesite":
      switch value.lowercased() {
      case "none": sameSite = .none
      case "strict": sameSite = .strict
      case "lax": sameSite = .lax
      default: sameSite = .default
      }
    default:
      break
    }
  }

  /// `Max-Age`'s value: an optional `-` then digits only; saturated rather than overflowing.
  private static func deltaSeconds(_ value: String) -> Int? {
    var digits = Substring(value)
    let negative = digits.first == "-"
    if negative { digits = digits.dropFirst() }
    guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
    let magnitude = Int(digits) ?? Int.max  // longer than Int holds: as long as can be
    return negative ? -magnitude : magnitude
  }

  /// The default path of a cookie set in answer to `url` (§5.1.4): its path up to, not
  /// including, the last `/`; `/` when that leaves nothing.
  static func defaultPath(of url: URL) -> String {
    let path = url.path(percentEncoded: true)
    guard path.hasPrefix("/"), let last = path.lastIndex(of: "/"), last != path.startIndex else {
      return "/"
    }
    return String(path[..<last])
  }

  /// `%x00-08 / %x0A-1F / %x7F`: control characters other than the horizontal tab.
  static func isControl(_ scalar: Unicode.Scalar) -> Bool {
    (scalar.value < 0x20 && scalar.value != 0x09) || scalar.value == 0x7F
  }

  /// `text` with leading and trailing spaces and tabs removed.
  private static func trimmed(_ text: String) -> String {
    text.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
  }

  /// What precedes the first `separator`, and the rest from it on (empty when there is none).
  private static func split(_ text: String, at separator: Character) -> (String, String) {
    guard let index = text.firstIndex(of: separator) else { return (text, "") }
    return (String(text[..<index]), String(text[index...]))
  }

  private init(name: String, value: String) {
    self.name = name
    self.value = value
  }
}
