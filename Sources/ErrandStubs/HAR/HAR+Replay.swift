import Errand
import Foundation

extension HAR {
  /// An entry a replay leaves out, and why: one with status `0`, which browsers write for a
  /// request that got no response (aborted, blocked by the client, failed to connect).
  public struct SkippedEntry: Sendable, Hashable, CustomStringConvertible {
    /// The entry's index in `log.entries`.
    public var index: Int
    /// Why it is left out.
    public var reason: String

    /// Create a skipped entry.
    /// - Parameters:
    ///   - index: The entry's index.
    ///   - reason: Why it is left out.
    public init(index: Int, reason: String) {
      self.index = index
      self.reason = reason
    }

    /// The index and the reason, for example `HAR entry 4 skipped: status 0 (no response)`.
    public var description: String { "HAR entry \(index) skipped: \(reason)" }
  }

  /// The entries a replay (``CassetteTransport/init(har:matching:allowsRepeats:limits:fileID:filePath:line:column:)``,
  /// ``StubTransport/on(har:limits:allowingUnused:fileID:filePath:line:column:)``) leaves out, and why.
  public var skippedEntries: [SkippedEntry] {
    log.entries.enumerated().compactMap { index, entry in
      guard entry.response.status == 0 else { return nil }
      return SkippedEntry(
        index: index,
        reason: "status 0: \(entry.request) got no response (aborted, blocked or failed)")
    }
  }

  /// The entries as exchanges to replay, with their indexes, in order; entries with status `0`
  /// are left out (``skippedEntries``).
  /// - Throws: ``HARError`` naming the entry and the field for anything that cannot be replayed.
  func replayedExchanges(limits: Limits) throws(HARError) -> [(
    index: Int, exchange: Cassette.Exchange
  )] {
    var exchanges: [(index: Int, exchange: Cassette.Exchange)] = []
    exchanges.reserveCapacity(log.entries.count)
    for (index, entry) in log.entries.enumerated() where entry.response.status != 0 {
      exchanges.append((index, try entry.exchange(at: index, limits: limits)))
    }
    return exchanges
  }
}

extension HAR.Entry {
  /// The framing headers a browser's HAR lists on its requests (`Host`, `Content-Length`,
  /// `Connection`, …) that Errand's transports write themselves and refuse from a caller: left
  /// out of a replayed request, as are HTTP/2's pseudo-headers (`:authority`, `:path`).
  private static let framing = HTTPRequest.framingHeaderNames

  /// The request and the response to replay, checked as a transport would check them.
  func exchange(at index: Int, limits: HAR.Limits) throws(HARError) -> Cassette.Exchange {
    let method = request.method
    guard !method.isEmpty, method.utf8.allSatisfy(Self.isTokenByte) else {
      throw .field(
        index, "request.method",
        "\(Self.quotedName(method)) is not an HTTP method (a space, CR or LF could smuggle a "
          + "request)")
    }
    guard let url = URL(string: request.url), let scheme = url.scheme?.lowercased(),
      scheme == "http" || scheme == "https", url.host?.isEmpty == false
    else {
      throw .field(
        index, "request.url",
        "\(Self.quoted(HAR.redactedURL(request.url, with: .default))) is not an absolute http or "
          + "https URL")
    }
    guard (100...999).contains(response.status) else {
      throw .field(
        index, "response.status", "\(response.status) is not an HTTP status (100 to 999)")
    }
    let requestBody = try requestBody(at: index, limits: limits)
    var requestHeaders = try Self.headers(
      request.headers, at: index, field: "request.headers", droppingFraming: true)
    // What the HAR gives elsewhere: the body's type in `postData.mimeType`, the cookies in
    // `cookies` (tools list them there, and not always as a header).
    if !requestBody.isEmpty, !requestHeaders.contains("Content-Type"),
      let type = request.postData?.mimeType, !type.isEmpty,
      !type.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
    {
      requestHeaders["Content-Type"] = type
    }
    let cookies = request.cookies.filter { cookie in
      !"\(cookie.name)\(cookie.value)".unicodeScalars.contains {
        $0.value < 0x20 || $0.value == 0x7F || $0 == ";"
      }
    }
    if !cookies.isEmpty, !requestHeaders.contains("Cookie") {
      requestHeaders["Cookie"] = cookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }
    let replayed = HTTPRequest(
      method: HTTPMethod(rawValue: method), url: url, headers: requestHeaders,
      body: requestBody.isEmpty ? nil : requestBody)
    if let problem = replayed.validationProblem {
      throw .field(index, "request", problem)
    }
    let responseBody: Data
    if let text = response.content.text {
      responseBody = try Self.body(
        text, encoding: response.content.encoding, at: index, field: "response.content",
        limits: limits)
    } else {
      responseBody = Data()
    }
    return Cassette.Exchange(
      request: replayed,
      response: HTTPResponse(
        status: response.status,
        headers: try Self.headers(
          response.headers, at: index, field: "response.headers", droppingFraming: false),
        body: responseBody, url: url))
  }

  /// The request's body: its text (decoded from base64 if need be), else its form fields
  /// URL-encoded (a multipart form written as fields cannot be rebuilt and replays empty).
  private func requestBody(at index: Int, limits: HAR.Limits) throws(HARError) -> Data {
    guard let postData = request.postData else { return Data() }
    if let text = postData.text {
      return try Self.body(
        text, encoding: postData.encoding, at: index, field: "request.postData", limits: limits)
    }
    guard let params = postData.params, !postData.mimeType.lowercased().contains("multipart")
    else { return Data() }
    var form = URLComponents()
    form.queryItems = params.map { URLQueryItem(name: $0.name, value: $0.value ?? "") }
    let body = Data((form.percentEncodedQuery ?? "").utf8)
    guard body.count <= limits.maximumBodySize else {
      throw HARError(
        .tooLarge, entry: index, field: "log.entries[\(index)].request.postData.params",
        reason: Self.overLimit(body.count, limits))
    }
    return body
  }

  /// A body written as text or base64, its size checked on the text before it is decoded.
  private static func body(
    _ text: String, encoding: String?, at index: Int, field: String, limits: HAR.Limits
  ) throws(HARError) -> Data {
    let isBase64: Bool
    switch encoding?.lowercased() {
    case nil, "": isBase64 = false
    case "base64": isBase64 = true
    case let other?:
      throw .field(
        index, "\(field).encoding",
        "\(quoted(other)) is not an encoding Errand reads (only base64 is)")
    }
    let length = text.utf8.count
    let size = isBase64 ? length / 4 * 3 : length
    guard size <= limits.maximumBodySize else {
      throw HARError(
        .tooLarge, entry: index, field: "log.entries[\(index)].\(field).text",
        reason: overLimit(size, limits))
    }
    guard isBase64 else { return Data(text.utf8) }
    guard let decoded = HAR.base64(text) else {
      throw .field(index, "\(field).text", "is not valid base64, as its encoding says")
    }
    return decoded
  }

  private static func overLimit(_ size: Int, _ limits: HAR.Limits) -> String {
    "the body is \(size) bytes, over the limit of \(limits.maximumBodySize) "
      + "(HAR.Limits.maximumBodySize)"
  }

  /// Header fields as they can be replayed: each name a token and each value free of control
  /// characters but tab (a CR or LF would inject a header), HTTP/2 pseudo-headers left out, and
  /// framing headers too when `droppingFraming`.
  private static func headers(
    _ headers: [HAR.Header], at index: Int, field: String, droppingFraming: Bool
  ) throws(HARError) -> HTTPHeaders {
    var fields: [HTTPHeaders.Field] = []
    for (position, header) in headers.enumerated() {
      if header.name.hasPrefix(":")
        || (droppingFraming && framing.contains(header.name.lowercased()))
      {
        continue
      }
      guard !header.name.isEmpty, header.name.utf8.allSatisfy(isTokenByte) else {
        throw .field(
          index, "\(field)[\(position)].name",
          "\(quotedName(header.name)) is not a header name (a token)")
      }
      if let bad = header.value.unicodeScalars.first(where: {
        ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F
      }) {
        let what =
          bad == "\r" ? "a carriage return" : bad == "\n" ? "a line feed" : "a control character"
        throw .field(
          index, "\(field)[\(position)].value",
          "the value of \(quoted(header.name)) holds \(what); replaying it would inject a header")
      }
      fields.append(HTTPHeaders.Field(name: header.name, value: header.value))
    }
    return HTTPHeaders(fields)
  }

  /// RFC 9110 `tchar`.
  private static func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      true
    default:
      "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
  }

  /// Text found where a name (a method, a header name) should be, quoted only up to its first
  /// colon, space or `?` (at most 40 characters, then `…`): a tool that wrote a whole header
  /// line or request line there put a credential or a URL's token after it.
  private static func quotedName(_ text: String) -> String {
    let shown = text.prefix { $0 != ":" && $0 != " " && $0 != "?" }.prefix(40)
    let quoted = String(reflecting: String(shown))
    return shown.count < text.count ? "\(quoted.dropLast())…\"" : quoted
  }

  /// Text quoted for a message, control characters escaped and cut to a readable length.
  private static func quoted(_ text: String) -> String {
    DiagnosticText.cut(String(reflecting: text), to: 80)
  }
}
