import Errand
import Foundation

extension Cassette.Exchange {
  /// The exchange as a cassette writes it: the request and the response redacted by `redaction`,
  /// and, since a server may echo what the request carried (an `Authorization` header in a JSON
  /// echo, a token in a `Location`), every secret value of the request hidden wherever it appears
  /// in the response, its chunks included. A `Content-Length` follows the body's new length.
  func redacted(with redaction: Redaction) -> Cassette.Exchange {
    let contentType = response.headers["Content-Type"]
    let secrets = redaction.secretValues(in: request)
    var echoed = response
    echoed.body = Redaction.scrub(secrets, from: echoed.body)
    // Names and values: a server may make a header of what it got (`X-Echo-<token>`).
    echoed.headers = Redaction.scrub(secrets, from: echoed.headers)
    if echoed.body.count != response.body.count, echoed.headers["Content-Length"] != nil {
      echoed.headers["Content-Length"] = String(echoed.body.count)
    }
    let redactedResponse = redaction.redact(echoed)
    let redactedChunks = chunks?.map {
      redaction.redact(body: Redaction.scrub(secrets, from: $0), contentType: contentType)
    }
    if let redactedChunks,
      redactedChunks.reduce(into: Data(), { $0.append($1) }) != redactedResponse.body
    {
      // A secret that spans chunks is hidden only in the whole body: keep that instead.
      return Cassette.Exchange(
        request: redaction.redact(request), response: redactedResponse,
        chunks: [redactedResponse.body], droppedWith: droppedWith)
    }
    return Cassette.Exchange(
      request: redaction.redact(request), response: redactedResponse, chunks: redactedChunks,
      droppedWith: droppedWith)
  }
}

extension HTTPResponse {
  /// The response as a replay answers with it: without the `Set-Cookie` fields a redaction
  /// wrote as `<redacted>`. Such a field holds no cookie any more, and a cookie jar would read it
  /// as a cookie with no name whose value is `<redacted>` (RFC 6265bis, section 5.6: a
  /// name-value pair without `=` is a value with an empty name), sent back on every request.
  func droppingRedactedCookies() -> HTTPResponse {
    guard headers.values(for: "Set-Cookie").contains(HTTPHeaders.redactedValue) else {
      return self
    }
    var replayed = self
    replayed.headers = HTTPHeaders(
      headers.filter {
        !($0.name.lowercased() == "set-cookie" && $0.value == HTTPHeaders.redactedValue)
      })
    return replayed
  }
}
