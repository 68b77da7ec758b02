import Errand
import Foundation

/// Decides whether a recorded request answers a live one.
struct CassetteMatchRule {
  let matching: CassetteTransport.Matching

  init(_ matching: CassetteTransport.Matching) {
    self.matching = matching
  }

  func matches(recorded: HTTPRequest, _ request: HTTPRequest) -> Bool {
    if matching.contains(.method) && recorded.method != request.method {
      return false
    }
    let recordedParts = URLComponents(url: recorded.url, resolvingAgainstBaseURL: true)
    let requestParts = URLComponents(url: request.url, resolvingAgainstBaseURL: true)
    if matching.contains(.path)
      && recordedParts?.percentEncodedPath != requestParts?.percentEncodedPath
    {
      return false
    }
    if matching.contains(.query)
      && !queriesMatch(recordedParts?.queryItems ?? [], requestParts?.queryItems ?? [])
    {
      return false
    }
    if matching.contains(.headers) && !headersMatch(recorded.headers, request.headers) {
      return false
    }
    if matching.contains(.body) && !bodiesMatch(recorded.body ?? Data(), request.body ?? Data()) {
      return false
    }
    return true
  }

  /// The same items in any order; a recorded `<redacted>` value matches any value.
  private func queriesMatch(_ recorded: [URLQueryItem], _ live: [URLQueryItem]) -> Bool {
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
  /// redacted one needs only to be present.
  private func headersMatch(_ recorded: HTTPHeaders, _ live: HTTPHeaders) -> Bool {
    recorded.fields.allSatisfy { field in
      if field.name.lowercased() == "user-agent" {
        return true
      }
      if field.value == HTTPHeaders.redactedValue {
        return live.contains(field.name)
      }
      return live.values(for: field.name).contains(field.value)
    }
  }

  private func bodiesMatch(_ recorded: Data, _ live: Data) -> Bool {
    if recorded == live {
      return true
    }
    guard let left = canonicalJSON(recorded), let right = canonicalJSON(live) else { return false }
    return left == right
  }
}
