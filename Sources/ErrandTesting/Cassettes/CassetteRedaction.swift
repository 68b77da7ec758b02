import Errand
import Foundation

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
