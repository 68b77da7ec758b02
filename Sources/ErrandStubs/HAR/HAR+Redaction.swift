import Errand
import Foundation

extension HAR {
  /// This archive with its secrets hidden, as everything Errand writes is: the values of the
  /// headers, query parameters and JSON or form body fields that `redaction` names (and always
  /// `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie`), every cookie's value,
  /// secret values in URLs (`url`, `Location`, `Referer`, `redirectURL`), and every secret value
  /// a request carried wherever its response echoes it (a body, a header), and secret values in
  /// page titles (Chrome names each page by its URL). Hiding twice changes nothing more.
  /// - Parameter redaction: What is secret; `Redaction.default` by default.
  /// - Returns: The redacted archive.
  public func redacted(with redaction: Redaction = .default) -> HAR {
    var copy = self
    copy.log.entries = log.entries.map { $0.redacted(with: redaction) }
    copy.log.pages = log.pages?.map { page in
      var hidden = page
      hidden.title = redaction.redact(urlText: page.title)
      return hidden
    }
    return copy
  }

  /// URL text with its user info and secret query values hidden, still a URL: the marker is
  /// percent-encoded (`token=%3Credacted%3E`), as a redacted `HTTPRequest`'s URL has it.
  static func redactedURL(_ text: String, with redaction: Redaction) -> String {
    redaction.redact(urlText: text).replacingOccurrences(
      of: HTTPHeaders.redactedValue, with: "%3Credacted%3E")
  }

  /// The bytes of a body written as text or as base64, or `nil` for base64 that does not decode.
  static func bytes(of text: String, encoding: String?) -> Data? {
    guard encoding?.lowercased() == "base64" else { return Data(text.utf8) }
    return base64(text)
  }

  /// Base64 as tools write it: padded or not, wrapped in lines or not; `nil` when it is not
  /// base64. Read byte by byte: a body of megabytes is not split into characters.
  static func base64(_ text: String) -> Data? {
    var compact = Data(text.utf8.filter { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 })
    switch compact.count % 4 {
    case 2: compact.append(contentsOf: [0x3D, 0x3D])  // "=="
    case 3: compact.append(0x3D)
    default: break
    }
    return Data(base64Encoded: compact)
  }
}

extension HAR.Entry {
  /// The entry with its secrets hidden (see ``HAR/redacted(with:)``).
  func redacted(with redaction: Redaction) -> HAR.Entry {
    let secrets = secretValues(with: redaction)
    var copy = self
    copy.request.url = HAR.redactedURL(request.url, with: redaction)
    copy.request.headers = Self.redact(request.headers, with: redaction, scrubbing: [])
    copy.request.queryString = request.queryString.map { parameter in
      var hidden = parameter
      if redaction.queryParameters.contains(parameter.name.lowercased()) {
        hidden.value = HTTPHeaders.redactedValue
      }
      return hidden
    }
    copy.request.cookies = request.cookies.map(Self.hidden)
    if var postData = request.postData {
      postData.params = postData.params?.map { param in
        var hidden = param
        if redaction.bodyFields.contains(param.name.lowercased()) {
          hidden.value = HTTPHeaders.redactedValue
        }
        return hidden
      }
      if let text = postData.text,
        let redacted = Self.redact(
          body: text, encoding: postData.encoding, type: postData.mimeType, with: redaction,
          scrubbing: secrets)
      {
        postData.text = redacted.text
        if copy.request.bodySize >= 0 {
          copy.request.bodySize = redacted.count
        }
        copy.request.headers = Self.fixingLength(copy.request.headers, to: redacted.count)
      }
      copy.request.postData = postData
    }
    copy.response.headers = Self.redact(response.headers, with: redaction, scrubbing: secrets)
    copy.response.cookies = response.cookies.map(Self.hidden)
    copy.response.redirectURL = String(
      decoding: Redaction.scrub(
        secrets, from: Data(redaction.redact(urlText: response.redirectURL).utf8)),
      as: UTF8.self)
    if let text = response.content.text,
      let redacted = Self.redact(
        body: text, encoding: response.content.encoding, type: response.content.mimeType,
        with: redaction, scrubbing: secrets)
    {
      copy.response.content.text = redacted.text
      copy.response.content.size = redacted.count
      if copy.response.bodySize >= 0 {
        copy.response.bodySize = redacted.count
      }
      copy.response.headers = Self.fixingLength(copy.response.headers, to: redacted.count)
    }
    return copy
  }

  /// Every secret value the request carries, as ``Redaction`` finds them, with its cookies'.
  private func secretValues(with redaction: Redaction) -> [String] {
    let body = request.postData.flatMap { data in
      data.text.flatMap { HAR.bytes(of: $0, encoding: data.encoding) }
    }
    let carried = HTTPRequest(
      method: HTTPMethod(rawValue: request.method),
      url: URL(string: request.url) ?? URL(fileURLWithPath: "/"),
      headers: HTTPHeaders(
        request.headers.map { HTTPHeaders.Field(name: $0.name, value: $0.value) }),
      body: body)
    let cookies = (request.cookies + response.cookies).map(\.value).filter {
      $0.count >= 4 && $0 != HTTPHeaders.redactedValue
    }
    return (redaction.secretValues(in: carried) + cookies).sorted { $0.count > $1.count }
  }

  private static func hidden(_ cookie: HAR.Cookie) -> HAR.Cookie {
    var copy = cookie
    copy.value = HTTPHeaders.redactedValue
    return copy
  }

  /// Headers redacted by `redaction`, and the values it leaves scrubbed of `secrets`; comments
  /// kept.
  private static func redact(
    _ headers: [HAR.Header], with redaction: Redaction, scrubbing secrets: [String]
  ) -> [HAR.Header] {
    let redacted = redaction.redact(
      HTTPHeaders(headers.map { HTTPHeaders.Field(name: $0.name, value: $0.value) }))
    return zip(headers, redacted.fields).map { header, field in
      var copy = header
      copy.value =
        secrets.isEmpty
        ? field.value
        : String(decoding: Redaction.scrub(secrets, from: Data(field.value.utf8)), as: UTF8.self)
      return copy
    }
  }

  /// A body redacted by `redaction` and scrubbed of `secrets`, in the form it was written in
  /// (text or base64), with its new length; `nil` when nothing changed or the base64 does not
  /// decode.
  private static func redact(
    body text: String, encoding: String?, type: String, with redaction: Redaction,
    scrubbing secrets: [String]
  ) -> (text: String, count: Int)? {
    guard let bytes = HAR.bytes(of: text, encoding: encoding) else { return nil }
    let redacted = Redaction.scrub(
      secrets, from: redaction.redact(body: bytes, contentType: type.isEmpty ? nil : type))
    guard redacted != bytes else { return nil }
    let written =
      encoding?.lowercased() == "base64"
      ? redacted.base64EncodedString() : String(decoding: redacted, as: UTF8.self)
    return (written, redacted.count)
  }

  /// `Content-Length` set to a redacted body's length, where it is given.
  private static func fixingLength(_ headers: [HAR.Header], to count: Int) -> [HAR.Header] {
    headers.map { header in
      var copy = header
      if header.name.lowercased() == "content-length" {
        copy.value = String(count)
      }
      return copy
    }
  }
}
