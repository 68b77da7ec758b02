import Foundation

/// The `Cache-Control` directives a private cache acts on (RFC 9111 §5.2), read from every
/// `Cache-Control` field of a request or response. Names compare without case; unknown directives
/// are ignored.
struct CacheControl: Sendable, Equatable {
  var noStore = false
  var noCache = false
  var mustRevalidate = false
  var immutable = false
  var onlyIfCached = false
  /// `max-age` in seconds; an invalid value counts as stale (`0`), as RFC 9111 §4.2.1 asks.
  var maxAge: Int?
  /// `stale-if-error` in seconds: how long past its freshness a response may stand in for an
  /// error (RFC 5861).
  var staleIfError: Int?

  init(_ headers: HTTPHeaders) {
    for field in headers.values(for: "Cache-Control") {
      for directive in field.split(separator: ",") {
        let parts = directive.split(separator: "=", maxSplits: 1)
        let name = parts[0].trimmingCharacters(in: .whitespaces).lowercased()
        let value =
          parts.count > 1
          ? parts[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(
            in: CharacterSet(charactersIn: "\"")) : nil
        switch name {
        case "no-store": noStore = true
        case "no-cache": noCache = true
        case "must-revalidate", "proxy-revalidate": mustRevalidate = true
        case "immutable": immutable = true
        case "only-if-cached": onlyIfCached = true
        case "max-age": maxAge = Self.deltaSeconds(value) ?? 0
        case "stale-if-error": staleIfError = Self.deltaSeconds(value)
        default: break
        }
      }
    }
  }

  /// RFC 9111 §1.2.2 delta-seconds: digits only; a value too large for 31 bits counts as 2^31.
  static func deltaSeconds(_ text: String?) -> Int? {
    guard let text, !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }) else {
      return nil
    }
    return min(Int(text.prefix(12)) ?? Int(Int32.max), Int(Int32.max) + 1)
  }
}
