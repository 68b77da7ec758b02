import Errand
import Foundation

extension StubResponse {
  /// This answer with `Set-Cookie` fields, one per cookie, after the headers it has: a client
  /// with a `CookieJar` stores them as it would a server's.
  ///
  /// ```swift
  /// await stub.on(.post, "/v1/login", .status(204).settingCookies("session=abc; Path=/; Secure"))
  /// await stub.on(.path("/v1/me") && .cookie("session", "abc"), .json(me))
  /// ```
  /// - Parameter fields: The `Set-Cookie` field values, as a server would send them.
  /// - Returns: The answer, every response of a sequence or a handler setting them too.
  public func settingCookies(_ fields: String...) -> StubResponse {
    var copy = StubResponse(Self.adding(fields, to: kind), delay: delay)
    copy.terms = terms
    return copy
  }

  private static func adding(_ fields: [String], to kind: Kind) -> Kind {
    switch kind {
    case .response(var response):
      for field in fields { response.headers.add("Set-Cookie", field) }
      return .response(response)
    case .stream(var stream):
      for field in fields { stream.head.headers.add("Set-Cookie", field) }
      return .stream(stream)
    case .sequence(let answers):
      return .sequence(answers.map { StubResponse(adding(fields, to: $0.kind), delay: $0.delay) })
    case .handler(let handler):
      return .handler { StubResponse(adding(fields, to: try await handler($0, $1).kind)) }
    case .failure, .hang, .passthrough:
      return kind
    }
  }
}

extension RequestMatcher {
  /// Requests that send a cookie of this name and, when given, this value in their `Cookie`
  /// field. A failure to match names the cookies sent, their values hidden.
  /// - Parameters:
  ///   - name: The cookie's name.
  ///   - value: Its value, or `nil` to accept any.
  /// - Returns: The matcher.
  public static func cookie(_ name: String, _ value: String? = nil) -> RequestMatcher {
    RequestMatcher(
      "cookie \(name)\(value == nil ? "" : "=<redacted>")", hint: (nil, nil),
      sentInstead: { request in
        let sent = request.sentCookiePairs.map(\.name)
        return "cookie: expected \(name), sent "
          + (sent.isEmpty ? "none" : sent.map { "\($0)=<redacted>" }.joined(separator: "; "))
      },
      matches: { request in
        request.sentCookiePairs.contains { $0.name == name && (value == nil || $0.value == value) }
      })
  }
}

extension HTTPRequest {
  /// The cookies the request sends in its `Cookie` fields, by name: the first of each name, as
  /// most servers read them (the jar sends the one with the longest path first). For a test's
  /// assertions: `#expect(stub.requests[1].sentCookies["session"] == "abc")`.
  public var sentCookies: [String: String] {
    var cookies: [String: String] = [:]
    for pair in sentCookiePairs where cookies[pair.name] == nil {
      cookies[pair.name] = pair.value
    }
    return cookies
  }

  /// The name-value pairs in the `Cookie` fields, in order, each trimmed.
  var sentCookiePairs: [(name: String, value: String)] {
    headers.values(for: "Cookie").flatMap { field in
      field.split(separator: ";").map { pair in
        let text = pair.trimmingCharacters(in: .whitespaces)
        guard let equals = text.firstIndex(of: "=") else { return (name: "", value: text) }
        return (
          name: String(text[..<equals]).trimmingCharacters(in: .whitespaces),
          value: String(text[text.index(after: equals)...]).trimmingCharacters(in: .whitespaces)
        )
      }
    }
  }
}
