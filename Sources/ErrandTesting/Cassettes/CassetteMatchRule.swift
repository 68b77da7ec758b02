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

/// Hides secrets in an exchange before it is written, keeping JSON bodies' order and formatting.
struct CassetteRedaction {
  let redaction: Redaction

  init(_ redaction: Redaction) {
    self.redaction = redaction
  }

  func redact(_ exchange: Cassette.Exchange) -> Cassette.Exchange {
    var request = exchange.request
    request.url = redaction.redact(request).url
    request.headers = redaction.redact(request.headers)
    request.body = request.body.map { redactBody($0, contentType: request.headers["Content-Type"]) }
    var response = exchange.response
    response.headers = redaction.redact(response.headers)
    response.body = redactBody(response.body, contentType: response.headers["Content-Type"])
    return Cassette.Exchange(request: request, response: response)
  }

  private func redactBody(_ body: Data, contentType: String?) -> Data {
    if let value = try? JSONValue.parse(body), value.isContainer {
      let redacted = redactJSON(value)
      if redacted == value {
        return body
      }
      return Data(redacted.compact.utf8)
    }
    return redaction.redact(body: body, contentType: contentType)
  }

  private func redactJSON(_ value: JSONValue) -> JSONValue {
    switch value {
    case .object(let members):
      return .object(
        members.map { member in
          redaction.bodyFields.contains(member.key.lowercased())
            ? JSONValue.Member(key: member.key, value: .string(HTTPHeaders.redactedValue))
            : JSONValue.Member(key: member.key, value: redactJSON(member.value))
        })
    case .array(let items):
      return .array(items.map(redactJSON))
    case .string(let text) where text.contains("?") && text.contains("://"):
      // URLs inside bodies (an API echoing a link, say) lose their secret query values too.
      guard let url = URL(string: text) else { return value }
      return .string(redaction.redact(url))
    default:
      return value
    }
  }
}
