import Foundation

/// What a server says of its rate limit in a response's fields: how many more requests its
/// current window allows, and when the window ends (from now).
///
/// Read from `RateLimit` (draft-ietf-httpapi-ratelimit-headers, §3: a list of
/// `"policy";r=<remaining>;t=<seconds>`; the most restrictive item counts), or from the older
/// drafts' `RateLimit-Remaining` and `RateLimit-Reset` (delta-seconds). A field that does not
/// parse is ignored, as the draft says.
struct ServerRateLimit: Equatable {
  let remaining: Int
  let reset: Duration

  init?(_ headers: HTTPHeaders) {
    if let field = headers["RateLimit"],
      let parsed = Self.items(field).min(by: {
        $0.remaining < $1.remaining
      })
    {
      self = parsed
    } else if let remaining = headers["RateLimit-Remaining"].flatMap(Self.number),
      let reset = headers["RateLimit-Reset"].flatMap(Self.number)
    {
      self.init(remaining: remaining, reset: .seconds(reset))
    } else {
      return nil
    }
  }

  init(remaining: Int, reset: Duration) {
    self.remaining = remaining
    self.reset = reset
  }

  /// The items of a `RateLimit` field that carry both `r` and `t` as non-negative integers.
  private static func items(_ field: String) -> [ServerRateLimit] {
    field.split(separator: ",").compactMap { item in
      var remaining: Int?
      var reset: Int?
      for parameter in item.split(separator: ";").dropFirst() {
        let pair = parameter.split(separator: "=", maxSplits: 1)
        guard pair.count == 2 else { continue }
        let key = pair[0].trimmingCharacters(in: .whitespaces)
        let value = number(String(pair[1]))
        if key == "r" { remaining = value }
        if key == "t" { reset = value }
      }
      guard let remaining, let reset else { return nil }
      return ServerRateLimit(remaining: remaining, reset: .seconds(reset))
    }
  }

  /// A non-negative integer of at most 15 digits (a Structured Field Integer), else `nil`.
  private static func number(_ text: String) -> Int? {
    let trimmed = text.trimmingCharacters(in: .whitespaces)
    guard !trimmed.isEmpty, trimmed.count <= 15, trimmed.allSatisfy(\.isASCII),
      let value = Int(trimmed), value >= 0
    else { return nil }
    return value
  }
}
