import Foundation

/// The `Cache-Control` directives a private cache acts on (RFC 9111 §5.2), read from every
/// `Cache-Control` field of a request or response. Names compare without case; unknown directives
/// are ignored; a comma or `=` inside a quoted string is part of the value (RFC 9110 §5.6.4), so
/// an extension such as `x-ext="a, max-age=600"` sets nothing. When a directive with a value comes
/// more than once, the first counts (RFC 9111 §4.2.1), so `max-age=0` then `max-age=600` is
/// stale.
struct CacheControl: Sendable, Equatable {
  var noStore = false
  /// `no-cache` without field names: the whole response must be revalidated before each use.
  var noCache = false
  /// The fields a `no-cache="a, b"` names (lowercased): never sent without revalidation, so
  /// never stored (RFC 9111 §5.2.2.4).
  var noCacheFields: Set<String> = []
  var mustRevalidate = false
  var immutable = false
  var onlyIfCached = false
  var mustUnderstand = false
  var isPublic = false
  var isPrivate = false
  /// Whether the fields hold an `Expires` (valid or not: RFC 9111 §3 counts its presence).
  var hasExpires = false
  /// `max-age` in seconds; an invalid value counts as stale (`0`), as RFC 9111 §4.2.1 asks.
  var maxAge: Int?
  /// `stale-if-error` in seconds: how long past its freshness a response may stand in for an
  /// error (RFC 5861).
  var staleIfError: Int?
  /// `stale-while-revalidate` in seconds: how long past its freshness a response may be used
  /// while the cache revalidates it in the background (RFC 5861).
  var staleWhileRevalidate: Int?
  /// A request's `max-stale`: how long past its freshness it accepts a stored response;
  /// `Int.max` when given without a value (any staleness).
  var maxStale: Int?
  /// A request's `min-fresh`: how much freshness a stored response must have left.
  var minFresh: Int?

  init(_ headers: HTTPHeaders) {
    hasExpires = headers.contains("Expires")
    for field in headers.values(for: "Cache-Control") {
      for (name, value) in Self.directives(field) {
        switch name {
        case "no-store": noStore = true
        case "no-cache":
          let fields = (value ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
          }.filter { !$0.isEmpty }
          if fields.isEmpty { noCache = true } else { noCacheFields.formUnion(fields) }
        case "must-revalidate", "proxy-revalidate": mustRevalidate = true
        case "immutable": immutable = true
        case "only-if-cached": onlyIfCached = true
        case "must-understand": mustUnderstand = true
        case "public": isPublic = true
        case "private": isPrivate = true
        case "max-age": maxAge = maxAge ?? Self.deltaSeconds(value) ?? 0
        case "stale-if-error": staleIfError = staleIfError ?? Self.deltaSeconds(value)
        case "stale-while-revalidate":
          staleWhileRevalidate = staleWhileRevalidate ?? Self.deltaSeconds(value)
        case "max-stale": maxStale = maxStale ?? (value == nil ? Int.max : Self.deltaSeconds(value))
        case "min-fresh": minFresh = minFresh ?? Self.deltaSeconds(value)
        default: break
        }
      }
    }
  }

  /// The directives of one field value, names lowercased, values unquoted: split at commas
  /// outside quoted strings, each at its first `=` outside one.
  static func directives(_ field: String) -> [(name: String, value: String?)] {
    var directives: [(name: String, value: String?)] = []
    var name = ""
    var value: String?
    var quoted = false
    var escaped = false
    func end() {
      let trimmed = name.trimmingCharacters(in: .whitespaces).lowercased()
      if !trimmed.isEmpty {
        directives.append((trimmed, value.map { quotedValue($0) }))
      }
      name = ""
      value = nil
    }
    for character in field {
      if quoted {
        if escaped {
          escaped = false
        } else if character == "\\" {
          escaped = true
        } else if character == "\"" {
          quoted = false
        }
        value?.append(character)
        continue
      }
      switch character {
      case ",": end()
      case "=" where value == nil: value = ""
      case "\"" where value != nil:
        quoted = true
        value?.append(character)
      default:
        if value != nil { value?.append(character) } else { name.append(character) }
      }
    }
    end()
    return directives
  }

  /// A directive's value without the white space around it, and unquoted (`\x` becomes `x`).
  private static func quotedValue(_ raw: String) -> String {
    let trimmed = raw.trimmingCharacters(in: .whitespaces)
    guard trimmed.count >= 2, trimmed.hasPrefix("\""), trimmed.hasSuffix("\"") else {
      return trimmed
    }
    var unquoted = ""
    var escaped = false
    for character in trimmed.dropFirst().dropLast() {
      if !escaped && character == "\\" {
        escaped = true
        continue
      }
      escaped = false
      unquoted.append(character)
    }
    return unquoted
  }

  /// RFC 9111 §1.2.2 delta-seconds: digits only, leading zeros counting for nothing
  /// (`0000000000000060` is 60); a value too large for 31 bits counts as 2^31.
  static func deltaSeconds(_ text: String?) -> Int? {
    guard let text, !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }) else {
      return nil
    }
    let significant = text.drop { $0 == "0" }
    guard significant.count <= 10 else { return Int(Int32.max) + 1 }
    return min(Int(significant) ?? 0, Int(Int32.max) + 1)
  }

  /// The `Age` of a response in seconds (RFC 9111 §5.1): the first member of a list-based value
  /// (two `Age` lines count as one list, and empty elements do not count, RFC 9110 §5.6.1), else
  /// `nil` when there is none or it is not one non-negative integer (the field is then ignored).
  static func age(_ headers: HTTPHeaders) -> Int? {
    let members = headers.values(for: "Age").joined(separator: ",")
      .split(separator: ",", omittingEmptySubsequences: false)
      .map { $0.trimmingCharacters(in: .whitespaces) }
    guard let first = members.first(where: { !$0.isEmpty }) else { return nil }
    return deltaSeconds(first)
  }
}
