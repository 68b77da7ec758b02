import Errand
import Foundation

extension HAR {
  /// This archive with its secrets hidden, as everything Errand writes is: the values of the
  /// headers, query parameters and JSON or form body fields that `redaction` names (and always
  /// `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie`), every cookie's value,
  /// secret values in URLs (`url`, `Location`, `Referer`, `redirectURL`), and every secret value
  /// any entry's request carried (or a `Set-Cookie` set) wherever any entry repeats it (a body, a
  /// header, a comment), and secret values in page titles (Chrome names each page by its URL)
  /// and in URLs written in comments. Hiding twice changes nothing more.
  /// - Parameter redaction: What is secret; `Redaction.default` by default.
  /// - Returns: The redacted archive.
  public func redacted(with redaction: Redaction = .default) -> HAR {
    let secrets = HAR.ordered(log.entries.flatMap { $0.secretValues(with: redaction) })
    var copy = self
    copy.log.entries = log.entries.map { $0.redacted(with: redaction, scrubbing: secrets) }
    copy.log.pages = log.pages?.map { page in
      var hidden = page
      hidden.title = HAR.scrubbed(redaction.redact(urlText: page.title), secrets)
      hidden.comment = page.comment.map { HAR.comment($0, redaction, secrets) }
      hidden.pageTimings.comment = page.pageTimings.comment.map {
        HAR.comment($0, redaction, secrets)
      }
      return hidden
    }
    copy.log.comment = log.comment.map { HAR.comment($0, redaction, secrets) }
    return copy
  }

  /// Secret values without repeats, longest first (then in order, so output is stable).
  static func ordered(_ values: [String]) -> [String] {
    Set(values).sorted { $0.count != $1.count ? $0.count > $1.count : $0 < $1 }
  }

  /// Text with every one of `secrets` replaced by `<redacted>`.
  static func scrubbed(_ text: String, _ secrets: [String]) -> String {
    secrets.isEmpty
      ? text : Redaction.scrub(secrets, from: text)
  }

  /// A comment with the secrets of each URL in it hidden (its words with a `?`, `#` or `://`
  /// redacted as URL text), then scrubbed of `secrets`.
  static func comment(_ text: String, _ redaction: Redaction, _ secrets: [String]) -> String {
    let words = text.split(separator: " ", omittingEmptySubsequences: false).map { word in
      word.contains(where: { $0 == "?" || $0 == "#" }) || word.contains("://")
        ? redaction.redact(urlText: String(word)) : String(word)
    }
    return scrubbed(words.joined(separator: " "), secrets)
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
  /// Headers whose values are URLs or a URL's path and query (HTTP/2's `:path`, the original
  /// URL a proxy or a rewrite passes on): redacted as URLs.
  static let urlHeaders: Set<String> = [
    ":path", "x-original-url", "x-rewrite-url", "x-forwarded-uri", "x-original-uri",
    "x-envoy-original-path", "referer", "origin", "location", "content-location",
  ]

  /// The entry with its secrets hidden (see ``HAR/redacted(with:)``), scrubbed of the secrets
  /// it carries itself.
  func redacted(with redaction: Redaction) -> HAR.Entry {
    redacted(with: redaction, scrubbing: HAR.ordered(secretValues(with: redaction)))
  }

  /// The entry with its secrets hidden, scrubbed of `secrets` (longest first): those of the
  /// whole archive.
  func redacted(with redaction: Redaction, scrubbing secrets: [String]) -> HAR.Entry {
    var copy = self
    copy.request = request.redacted(with: redaction, scrubbing: secrets)
    copy.response.headers = Self.redact(response.headers, with: redaction, scrubbing: secrets)
    copy.response.cookies = response.cookies.map(Self.hidden)
    copy.response.redirectURL = HAR.scrubbed(
      redaction.redact(urlText: response.redirectURL), secrets)
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
    copy.response.comment = response.comment.map { HAR.comment($0, redaction, secrets) }
    copy.response.content.comment = response.content.comment.map {
      HAR.comment($0, redaction, secrets)
    }
    copy.comment = comment.map { HAR.comment($0, redaction, secrets) }
    copy.timings.comment = timings.comment.map { HAR.comment($0, redaction, secrets) }
    return copy
  }

  /// Every secret value the request carries, as ``Redaction`` finds them (in its text body and
  /// in its form fields), with its cookies' and the values its response's `Set-Cookie` sets.
  func secretValues(with redaction: Redaction) -> [String] {
    var values = request.secretValues(with: redaction)
    let setCookies = response.headers.filter { $0.name.lowercased() == "set-cookie" }.map {
      header in
      let pair = header.value.prefix { $0 != ";" }
      return pair.firstIndex(of: "=").map {
        String(pair[pair.index(after: $0)...]).trimmingCharacters(in: .whitespaces)
      } ?? ""
    }
    values += (response.cookies.map(\.value) + setCookies).filter {
      $0.count >= 4 && $0 != HTTPHeaders.redactedValue
    }
    return values
  }

  static func hidden(_ cookie: HAR.Cookie) -> HAR.Cookie {
    var copy = cookie
    copy.value = HTTPHeaders.redactedValue
    return copy
  }

  /// Headers redacted by `redaction`, those holding URLs redacted as URLs, and the values it
  /// leaves scrubbed of `secrets`; names and comments scrubbed too.
  static func redact(
    _ headers: [HAR.Header], with redaction: Redaction, scrubbing secrets: [String]
  ) -> [HAR.Header] {
    let redacted = redaction.redact(
      HTTPHeaders(headers.map { HTTPHeaders.Field(name: $0.name, value: $0.value) }))
    return zip(headers, redacted.fields).map { header, field in
      var copy = header
      let value =
        urlHeaders.contains(header.name.lowercased())
        ? redaction.redact(urlText: field.value) : field.value
      copy.value = HAR.scrubbed(value, secrets)
      // The name too: a server may make a header of what it got (`X-Echo-<token>`).
      copy.name = HAR.scrubbed(header.name, secrets)
      copy.comment = header.comment.map { HAR.comment($0, redaction, secrets) }
      return copy
    }
  }

  /// A body redacted by `redaction` and scrubbed of `secrets`, in the form it was written in
  /// (text or base64; base64 that does not decode is redacted as text), with its new length;
  /// `nil` when nothing changed.
  static func redact(
    body text: String, encoding: String?, type: String, with redaction: Redaction,
    scrubbing secrets: [String]
  ) -> (text: String, count: Int)? {
    // Base64 that does not decode is redacted as the text it is, never written as it came.
    let decoded = HAR.bytes(of: text, encoding: encoding)
    let bytes = decoded ?? Data(text.utf8)
    let redacted = Redaction.scrub(
      secrets, from: redaction.redact(body: bytes, contentType: type.isEmpty ? nil : type))
    guard redacted != bytes else { return nil }
    let written =
      encoding?.lowercased() == "base64" && decoded != nil
      ? redacted.base64EncodedString() : String(decoding: redacted, as: UTF8.self)
    return (written, redacted.count)
  }

  /// `Content-Length` set to a redacted body's length, where it is given.
  static func fixingLength(_ headers: [HAR.Header], to count: Int) -> [HAR.Header] {
    headers.map { header in
      var copy = header
      if header.name.lowercased() == "content-length" {
        copy.value = String(count)
      }
      return copy
    }
  }
}

extension HAR.Request {
  /// The request with its secrets hidden (see ``HAR/redacted(with:)``), scrubbed of `secrets`.
  func redacted(with redaction: Redaction, scrubbing secrets: [String]) -> HAR.Request {
    var copy = self
    copy.url = HAR.redactedURL(url, with: redaction)
    copy.headers = HAR.Entry.redact(headers, with: redaction, scrubbing: secrets)
    copy.queryString = queryString.map { parameter in
      var hidden = parameter
      let name = parameter.name.removingPercentEncoding ?? parameter.name
      if redaction.queryParameters.contains(name.lowercased()) {
        hidden.value = HTTPHeaders.redactedValue
      } else {
        hidden.value = HAR.scrubbed(parameter.value, secrets)
      }
      hidden.comment = parameter.comment.map { HAR.comment($0, redaction, secrets) }
      return hidden
    }
    copy.cookies = cookies.map(HAR.Entry.hidden)
    if var postData {
      postData.params = postData.params?.map { param in
        var hidden = param
        if redaction.bodyFields.contains(param.name.lowercased()) {
          hidden.value = HTTPHeaders.redactedValue
        } else {
          hidden.value = param.value.map { HAR.scrubbed($0, secrets) }
        }
        hidden.comment = param.comment.map { HAR.comment($0, redaction, secrets) }
        return hidden
      }
      if let text = postData.text,
        let redacted = HAR.Entry.redact(
          body: text, encoding: postData.encoding, type: postData.mimeType, with: redaction,
          scrubbing: secrets)
      {
        postData.text = redacted.text
        if copy.bodySize >= 0 {
          copy.bodySize = redacted.count
        }
        copy.headers = HAR.Entry.fixingLength(copy.headers, to: redacted.count)
      }
      postData.comment = postData.comment.map { HAR.comment($0, redaction, secrets) }
      copy.postData = postData
    }
    copy.comment = comment.map { HAR.comment($0, redaction, secrets) }
    return copy
  }

  /// Every secret value the request carries, as ``Redaction`` finds them: in its headers, URL
  /// and text body, in its form fields (`postData.params`, as a form), and its cookies' values.
  func secretValues(with redaction: Redaction) -> [String] {
    let target = URL(string: url) ?? URL(fileURLWithPath: "/")
    let fields = HTTPHeaders(headers.map { HTTPHeaders.Field(name: $0.name, value: $0.value) })
    let text = postData.flatMap { data in
      data.text.map { HAR.bytes(of: $0, encoding: data.encoding) ?? Data($0.utf8) }
    }
    var values = redaction.secretValues(
      in: HTTPRequest(
        method: HTTPMethod(rawValue: method), url: target, headers: fields, body: text))
    if let params = postData?.params, !params.isEmpty {
      var form = URLComponents()
      form.queryItems = params.map { URLQueryItem(name: $0.name, value: $0.value ?? "") }
      values += redaction.secretValues(
        in: HTTPRequest(
          method: HTTPMethod(rawValue: method), url: target,
          body: Data((form.percentEncodedQuery ?? "").utf8)))
    }
    values += cookies.map(\.value).filter { $0.count >= 4 && $0 != HTTPHeaders.redactedValue }
    return values
  }
}
