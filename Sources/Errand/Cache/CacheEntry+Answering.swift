import Foundation

extension CacheEntry {
  /// The stored response as the answer to `request` (RFC 9111 §4): a `304` when the request's
  /// own `If-None-Match` or `If-Modified-Since` says the caller's copy is current (§4.3.2), the
  /// byte range it asks for as a `206` when ``servesRange(of:)``, else the whole response; with
  /// its current `Age` (§5.1), the caller's request, and `status`.
  func answer(to request: HTTPRequest, _ status: CacheStatus) -> HTTPResponse {
    var answer = response
    if (200..<300).contains(response.status), let notModified = notModified(for: request) {
      answer = notModified
    } else if let range = range(for: request) {
      answer.status = 206
      answer.body = response.body.subdata(in: range.lowerBound..<range.upperBound + 1)
      answer.headers["Content-Range"] =
        "bytes \(range.lowerBound)-\(range.upperBound)/\(response.body.count)"
      answer.headers["Content-Length"] = String(answer.body.count)
    }
    let seconds = min(age, Self.longest).components.seconds
    answer.headers["Age"] = String(max(seconds, 0))
    answer.request = request
    answer.cacheStatus = status
    return answer
  }

  /// Whether the request carries its own `If-None-Match` or `If-Modified-Since`.
  static func isConditional(_ request: HTTPRequest) -> Bool {
    request.headers["If-None-Match"] != nil || request.headers["If-Modified-Since"] != nil
  }

  /// The `304` that answers `request`'s own conditions, or `nil` when they ask for the whole
  /// response (RFC 9110 §13.1.2, §13.1.3, in §13.2.2's order): `If-None-Match` matches when one
  /// of its tags is the stored `ETag` compared weakly, or is `*`; only without it,
  /// `If-Modified-Since` (one valid HTTP date) matches when the stored `Last-Modified` (else
  /// `Date`) is not later. The `304` has the stored headers but the body's own (RFC 9110
  /// §15.4.5), and no body.
  func notModified(for request: HTTPRequest) -> HTTPResponse? {
    let tags = request.headers.values(for: "If-None-Match")
    if !tags.isEmpty {
      guard let stored = response.headers["ETag"].map(Self.opaque) else { return nil }
      let listed = tags.flatMap(Self.entityTags)
      guard listed.contains("*") || listed.map(Self.opaque).contains(stored) else { return nil }
    } else {
      let since = request.headers.values(for: "If-Modified-Since")
      guard since.count == 1, let date = HTTPDate.parse(since[0]),
        let modified = HTTPDate.parse("Last-Modified", in: response.headers)
          ?? HTTPDate.parse("Date", in: response.headers),
        modified <= date
      else { return nil }
    }
    var notModified = response
    notModified.status = 304
    notModified.body = Data()
    for name in Self.bodyHeaders {
      notModified.headers.remove(name)
    }
    return notModified
  }

  /// The headers that describe a body: not in a `304` (or a part, apart from its own).
  static let bodyHeaders = [
    "Content-Length", "Content-Type", "Content-Encoding", "Content-Language", "Content-Range",
    "Transfer-Encoding",
  ]

  /// The entity-tags of an `If-None-Match` value: split at commas outside quotes, trimmed.
  static func entityTags(_ value: String) -> [String] {
    var tags: [String] = []
    var current = ""
    var quoted = false
    for character in value {
      if character == "\"" { quoted.toggle() }
      if character == ",", !quoted {
        tags.append(current)
        current = ""
      } else {
        current.append(character)
      }
    }
    tags.append(current)
    return tags.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
  }

  /// An entity-tag without its weakness mark, for the weak comparison.
  static func opaque(_ tag: String) -> String {
    let tag = tag.trimmingCharacters(in: .whitespaces)
    return tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag
  }

  /// Whether the cache answers `request`'s `Range` itself from this response: see
  /// ``range(for:)``. A request without `Range` is served whole.
  func servesRange(of request: HTTPRequest) -> Bool {
    request.headers["Range"] == nil || range(for: request) != nil
  }

  /// The bytes `request`'s `Range` asks for, when the cache answers it from this response: a
  /// stored `200` whose body is whole (no `Content-Encoding`, and the `Content-Length` it
  /// declares, if any), a request without `If-Range`, one `bytes` range (RFC 9110 §14.1.2) that
  /// the body can satisfy. Anything else (several ranges, another unit, a range past the end, a
  /// malformed one) goes to the server.
  func range(for request: HTTPRequest) -> ClosedRange<Int>? {
    let values = request.headers.values(for: "Range")
    let length = response.body.count
    guard values.count == 1, request.headers["If-Range"] == nil, response.status == 200,
      length > 0, response.headers["Content-Encoding"] == nil,
      response.headers.values(for: "Content-Length").allSatisfy({ $0 == String(length) })
    else { return nil }
    let value = values[0]
    guard let equals = value.firstIndex(of: "="),
      value[..<equals].lowercased() == "bytes"
    else { return nil }
    let specs = value[value.index(after: equals)...].split(
      separator: ",", omittingEmptySubsequences: false
    )
    .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " \t")) }.filter { !$0.isEmpty }
    guard specs.count == 1, let dash = specs[0].firstIndex(of: "-") else { return nil }
    let first = specs[0][..<dash]
    let last = specs[0][specs[0].index(after: dash)...]
    if first.isEmpty {
      // A suffix: the last N bytes.
      guard let suffix = Self.position(last), suffix > 0 else { return nil }
      return max(0, length - suffix)...(length - 1)
    }
    guard let start = Self.position(first), start < length else { return nil }
    guard !last.isEmpty else { return start...(length - 1) }
    guard let end = Self.position(last), end >= start else { return nil }
    return start...min(end, length - 1)
  }

  /// Digits as a byte position, `Int.max` when too large; `nil` when not digits.
  private static func position(_ text: Substring) -> Int? {
    guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
    return Int(text) ?? .max
  }
}
