import Errand
import Foundation

extension CassetteTransport {
  /// What a request must share with a recorded one to be answered by it.
  public struct Matching: OptionSet, Sendable, Hashable {
    /// The raw bits.
    public let rawValue: Int

    /// Create from raw bits.
    /// - Parameter rawValue: The bits.
    public init(rawValue: Int) {
      self.rawValue = rawValue
    }

    /// The method.
    public static let method = Matching(rawValue: 1 << 0)
    /// The URL path.
    public static let path = Matching(rawValue: 1 << 1)
    /// The query items, in any order; a recorded `<redacted>` value matches any value.
    public static let query = Matching(rawValue: 1 << 2)
    /// The recorded headers but `User-Agent`, which the request must also carry (a `<redacted>`
    /// one, or an `Idempotency-Key`, which is new at every call, with any value).
    public static let headers = Matching(rawValue: 1 << 3)
    /// The body (JSON compared by content).
    public static let body = Matching(rawValue: 1 << 4)
    /// Method, path and query.
    public static let `default`: Matching = [.method, .path, .query]
    /// The scheme, host and port (a URL that names no port has its scheme's).
    public static let host = Matching(rawValue: 1 << 5)
    /// The recorded credential headers (those `Redaction.default` hides: `Authorization`,
    /// `Cookie`, `X-API-Key`, …): a request that carries one must carry the recorded value (any
    /// value, when the recorded one is `<redacted>`), so that one caller's answer never answers
    /// another's. A request without it is not refused.
    public static let credentials = Matching(rawValue: 1 << 6)
    /// What a HAR replays with unless told otherwise: method, scheme, host and port, path, query
    /// and credentials. A HAR spans hosts and callers, where a cassette records one client.
    public static let har: Matching = [.method, .host, .path, .query, .credentials]
  }
}

extension CassetteTransport.Matching {
  /// Whether a recorded request answers a live one.
  func matches(recorded: HTTPRequest, _ request: HTTPRequest) -> Bool {
    if contains(.method) && recorded.method != request.method {
      return false
    }
    if contains(.host)
      && StubTransport.origin(of: recorded.url) != StubTransport.origin(of: request.url)
    {
      return false
    }
    if contains(.credentials) && !credentialsMatch(recorded, request) {
      return false
    }
    let recordedParts = URLComponents(url: recorded.url, resolvingAgainstBaseURL: true)
    let requestParts = URLComponents(url: request.url, resolvingAgainstBaseURL: true)
    if contains(.path)
      && recordedParts?.percentEncodedPath != requestParts?.percentEncodedPath
    {
      return false
    }
    if contains(.query)
      && !queriesMatch(recordedParts?.queryItems ?? [], requestParts?.queryItems ?? [])
    {
      return false
    }
    if contains(.headers) && !headersMatch(recorded.headers, request.headers) {
      return false
    }
    if contains(.body) && !bodiesMatch(recorded.body ?? Data(), request.body ?? Data()) {
      return false
    }
    return true
  }

  /// The same items in any order; a recorded `<redacted>` value matches any value.
  func queriesMatch(_ recorded: [URLQueryItem], _ live: [URLQueryItem]) -> Bool {
    guard recorded.count == live.count else { return false }
    var remaining = live
    for item in recorded {
      let wildcard = item.value == HTTPHeaders.redactedValue
      guard
        let index = remaining.firstIndex(where: {
          $0.name == item.name && (wildcard || $0.value == item.value)
        })
      else { return false }
      remaining.remove(at: index)
    }
    return true
  }

  /// Every recorded header but `User-Agent` is on the live request with the same value; a
  /// redacted one, or an `Idempotency-Key` (a generated one is new at every call, so the one
  /// recorded never comes again), needs only to be present.
  private func headersMatch(_ recorded: HTTPHeaders, _ live: HTTPHeaders) -> Bool {
    recorded.fields.allSatisfy { field in
      let name = field.name.lowercased()
      if name == "user-agent" {
        return true
      }
      if field.value == HTTPHeaders.redactedValue || name == "idempotency-key" {
        return live.contains(field.name)
      }
      return live.values(for: field.name).contains(field.value)
    }
  }

  /// Every recorded credential header the live request also carries has the recorded value
  /// there (any value when the recorded one is `<redacted>`).
  private func credentialsMatch(_ recorded: HTTPRequest, _ live: HTTPRequest) -> Bool {
    StubTransport.credentials(of: recorded).allSatisfy { name, value in
      let values = live.headers.values(for: name)
      return values.isEmpty || value == HTTPHeaders.redactedValue || values.contains(value)
    }
  }

  private func bodiesMatch(_ recorded: Data, _ live: Data) -> Bool {
    if recorded == live {
      return true
    }
    return JSONDiff.equal(recorded, live)
  }
}
