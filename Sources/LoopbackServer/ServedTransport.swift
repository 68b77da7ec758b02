import Errand
import Foundation

/// What a server created with `init(serving:…)` answers with, and how it turns a request from
/// its socket into the `HTTPRequest` the transport sees and the transport's answer into bytes.
struct ServedTransport: Sendable {
  /// Who answers.
  var transport: any Transport
  /// The origin the server stands in for (`https://api.example.com`), or `nil` for its own.
  var origin: URL?
  /// Which of a request's secrets reports leave out.
  var redaction: Redaction
  /// The server's own URL, set once its port is known.
  var serverURL: URL

  /// Fields that describe one connection or the framing of one message, not the request or
  /// answer itself (RFC 9110, section 7.6.1): the server reads and writes them itself.
  static let hopByHop: Set<String> = [
    "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding",
    "upgrade", "content-length", "expect", "host",
  ]

  /// Fields of a request that are the client's transport talking to this server, not the
  /// app: the server never encodes its answers, so which codings the transport accepts is
  /// between the two of them.
  static let transportOnly: Set<String> = ["accept-encoding"]

  /// The URL requests are built on: the origin stood in for, else the server's.
  private var base: String {
    guard let origin, var parts = URLComponents(url: origin, resolvingAgainstBaseURL: true)
    else { return serverURL.absoluteString }
    parts.path = ""
    parts.query = nil
    parts.fragment = nil
    parts.user = nil
    parts.password = nil
    return parts.string ?? serverURL.absoluteString
  }

  /// The request the transport sees: the target on ``base``, the fields the client sent but the
  /// connection's own, the body (or `nil` when empty); or why there is none.
  func request(from recorded: RecordedRequest) -> Result<HTTPRequest, RefusedRequest> {
    guard recorded.target.hasPrefix("/"), !recorded.target.hasPrefix("//") else {
      return .failure(RefusedRequest(reason: "the request target is not a path"))
    }
    guard let url = URL(string: base + recorded.target) else {
      return .failure(RefusedRequest(reason: "the request target is not a URL path"))
    }
    let nominated = Set(
      recorded.headers.values(for: "Connection").flatMap { $0.split(separator: ",") }
        .map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
    var headers = HTTPHeaders()
    for field in recorded.headers
    where !Self.hopByHop.contains(field.name.lowercased())
      && !Self.transportOnly.contains(field.name.lowercased())
      && !nominated.contains(field.name.lowercased())
    {
      headers.add(field.name, field.value)
    }
    return .success(
      HTTPRequest(
        method: HTTPMethod(rawValue: recorded.method), url: url, headers: headers,
        body: recorded.body.isEmpty ? nil : recorded.body, redaction: redaction))
  }

  /// How a body is framed on the wire.
  enum Framing: Equatable {
    /// `Content-Length`: the body is known whole.
    case length(Int)
    /// `Transfer-Encoding: chunked`: the body streams.
    case chunked
    /// No body may follow (`204`, `304`, an answer to `HEAD` that streams).
    case none
    /// No framing field: the body streams to a client that cannot read chunked encoding
    /// (HTTP/1.0), and closing the connection ends it.
    case untilClose
  }

  /// The status line and fields of `response`, framed for this connection as `framing` says,
  /// `Connection: close` always. The
  /// transport's own framing and `Content-Encoding` (its body is already decoded) are left out,
  /// and a `Location` on the origin stood in for points at the server instead, so that a
  /// redirect never leads the other process to the real API. `nil`, with why, for a status or a
  /// field that cannot be sent.
  func head(of response: HTTPResponse, framing: Framing) -> Result<String, RefusedRequest> {
    guard (200...999).contains(response.status) else {
      return .failure(
        RefusedRequest(
          reason: "the served transport answered status \(response.status), not a final answer"))
    }
    var head = "HTTP/1.1 \(response.status) \(HTTPStatus.reasonPhrase(response.status))\r\n"
    for field in response.headers {
      let name = field.name.lowercased()
      guard !Self.hopByHop.contains(name), name != "content-encoding" else { continue }
      guard RequestParser.isToken(field.name), RequestParser.isFieldValue(field.value) else {
        return .failure(
          RefusedRequest(
            reason: "the served transport answered a field that cannot be sent: \(field.name)"))
      }
      let value = name == "location" ? onServer(field.value) : field.value
      head += "\(field.name): \(value)\r\n"
    }
    switch framing {
    case .length(let length): head += "Content-Length: \(length)\r\n"
    case .chunked: head += "Transfer-Encoding: chunked\r\n"
    case .none, .untilClose: break
    }
    return .success(head + "Connection: close\r\n\r\n")
  }

  /// `location` on the server when it is on the origin stood in for; unchanged otherwise. A
  /// scheme-relative `location` (`//api.example.com/…`) is read with the origin's scheme, and
  /// hosts are compared in any case and without a trailing dot (`api.example.com.` is the same
  /// host to DNS).
  private func onServer(_ location: String) -> String {
    guard let origin,
      let stoodIn = URLComponents(url: origin, resolvingAgainstBaseURL: true),
      let target = URLComponents(
        string: location.hasPrefix("//") ? "\(stoodIn.scheme ?? "https"):\(location)" : location),
      target.host != nil,
      target.scheme?.lowercased() == stoodIn.scheme?.lowercased(),
      Self.sameHost(target.host, stoodIn.host),
      (target.port ?? defaultPort(target.scheme)) == (stoodIn.port ?? defaultPort(stoodIn.scheme)),
      let server = URLComponents(url: serverURL, resolvingAgainstBaseURL: true)
    else { return location }
    var moved = target
    moved.scheme = server.scheme
    moved.percentEncodedHost = server.percentEncodedHost
    moved.port = server.port
    moved.user = nil
    moved.password = nil
    return moved.string ?? location
  }

  /// Whether two hosts are the same: in any case, with or without a trailing dot.
  private static func sameHost(_ one: String?, _ other: String?) -> Bool {
    func plain(_ host: String?) -> String? {
      guard var host = host?.lowercased() else { return nil }
      if host.hasSuffix(".") { host.removeLast() }
      return host
    }
    return plain(one) != nil && plain(one) == plain(other)
  }

  private func defaultPort(_ scheme: String?) -> Int? {
    switch scheme?.lowercased() {
    case "http": 80
    case "https": 443
    default: nil
    }
  }
}

/// Why a request from the socket was not handed to the transport, or its answer not sent.
struct RefusedRequest: Error, Equatable {
  var reason: String
}
