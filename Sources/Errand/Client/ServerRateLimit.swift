import Foundation

/// What a server says of one of its rate-limit policies in a response's fields: how many more
/// requests its current window allows, and when the window ends (from now), where it says.
///
/// Read from `RateLimit` (draft-ietf-httpapi-ratelimit-headers, §4: a Structured Field List of
/// service limits, `"policy";r=<remaining>;t=<seconds>`, possibly over several field lines), or
/// from the older drafts' `RateLimit-Remaining` and `RateLimit-Reset` (delta-seconds):
/// - every policy listed counts (§4: each item is the service limit of one policy): a client
///   sends no more than each allows before each window ends;
/// - `r` is required, a non-negative Integer; `t` is optional, a non-negative Integer (a policy
///   without it names no window, so nothing waits for its end);
/// - a field that is not a valid Structured Field List (a `+` sign, a trailing comma, sixteen
///   digits...) is ignored whole (§5, "Malformed RateLimit header fields MUST be ignored"; RFC
///   9651, §4.2); an item that parses but breaks the rules above (no `r`, a negative or
///   fractional value, an inner list) is ignored alone, the other policies still count;
/// - a response with a positive `Age` (served by a cache on the way) tells nothing current and
///   is ignored (§5, Caching).
struct ServerRateLimit: Equatable {
  /// The policy's name.
  let policy: String
  let remaining: Int
  /// `nil` when the server names no window.
  let reset: Duration?

  /// The most policies read from one response.
  static let mostPolicies = 16

  init(policy: String, remaining: Int, reset: Duration?) {
    self.policy = policy
    self.remaining = remaining
    self.reset = reset
  }

  /// The policies `headers` carry, as the rules above read them.
  static func policies(_ headers: HTTPHeaders) -> [ServerRateLimit] {
    if let age = headers["Age"].flatMap(number), age > 0 { return [] }
    let lines = headers.values(for: "RateLimit")
    if !lines.isEmpty {
      guard let list = StructuredFieldList(lines: lines) else { return [] }
      return Array(list.members.compactMap(Self.init(member:)).prefix(mostPolicies))
    }
    guard let remaining = headers["RateLimit-Remaining"].flatMap(number),
      let reset = headers["RateLimit-Reset"].flatMap(number)
    else { return [] }
    return [ServerRateLimit(policy: "", remaining: remaining, reset: .seconds(reset))]
  }

  /// A service limit item (§4.1), or `nil` when it breaks the rules.
  private init?(member: StructuredFieldList.Member) {
    let policy: String
    switch member.item {
    case .string(let name), .token(let name): policy = name
    default: return nil
    }
    guard case .integer(let remaining) = member.parameters["r"], remaining >= 0 else {
      return nil
    }
    var reset: Duration?
    if let value = member.parameters["t"] {
      guard case .integer(let seconds) = value, seconds >= 0 else { return nil }
      reset = .seconds(seconds)
    }
    self.init(policy: policy, remaining: remaining, reset: reset)
  }

  /// Delta-seconds: one to fifteen ASCII digits (no sign, no space inside), else `nil`.
  private static func number(_ text: String) -> Int? {
    let trimmed = text.trimmingCharacters(in: .whitespaces)
    guard (1...15).contains(trimmed.utf8.count),
      trimmed.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
    else { return nil }
    return Int(trimmed)
  }
}
