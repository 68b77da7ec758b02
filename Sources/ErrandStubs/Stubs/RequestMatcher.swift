import Errand
import Foundation

/// Decides whether a ``StubTransport`` route answers a request.
///
/// Matchers compose with `&&`, `||` and `!`:
///
/// ```swift
/// await stub.on(.method(.get) && .path("/v1/dogs/{id}") && .query("expand", "owner"), .json(dog))
/// await stub.on(.header("Authorization", "Bearer t0k3n") || .query("token", "t0k3n"), .status(200))
/// await stub.on(.method(.post) && .jsonBody(Dog(name: "Rex")), .status(201))
/// ```
public struct RequestMatcher: Sendable, CustomStringConvertible {
  /// What the matcher checks, for example `GET /v1/dogs/{id}`. The value of a header, query
  /// parameter or JSON body field that `Redaction.default` hides reads `<redacted>`
  /// (`header Authorization: <redacted>`), since reports name routes by it.
  public let description: String
  /// The matcher as written, secret values included: what ``StubTransport/callCount(for:)``
  /// compares, so that two routes whose secrets differ stay apart though they read the same.
  let written: String
  private let predicate: @Sendable (HTTPRequest) -> Bool
  /// The method and path this matcher requires, when it is that simple; used to rank near misses.
  let hint: (method: HTTPMethod?, path: String?)
  /// The clauses an `&&` joined, in order; empty for a single clause.
  private var clauses: [RequestMatcher] = []
  /// Why a request fails this clause, in one line (a JSON body adds indented lines).
  private var sentInstead: (@Sendable (HTTPRequest) -> String)?
  /// What the matcher checks, with the values a given redaction hides read `<redacted>`;
  /// ``description`` itself when it hides nothing a redaction could name (a method, a path).
  private let describe: @Sendable (Redaction) -> String

  /// A matcher from a predicate.
  /// - Parameters:
  ///   - description: What it checks, shown when a request matches nothing.
  ///   - predicate: Whether a request matches.
  public init(_ description: String, _ predicate: @escaping @Sendable (HTTPRequest) -> Bool) {
    self.init(description, hint: (nil, nil), matches: predicate)
  }

  init(
    _ description: String, hint: (method: HTTPMethod?, path: String?), written: String? = nil,
    sentInstead: (@Sendable (HTTPRequest) -> String)? = nil,
    describe: (@Sendable (Redaction) -> String)? = nil,
    matches predicate: @escaping @Sendable (HTTPRequest) -> Bool
  ) {
    let shown = describe?(.default) ?? description
    self.description = shown
    self.written = written ?? description
    self.hint = hint
    self.predicate = predicate
    self.sentInstead = sentInstead
    self.describe = describe ?? { _ in shown }
  }

  /// What the matcher checks, as ``description`` says it, but with the values that `redaction`
  /// hides read `<redacted>` (a report for a request names routes with the request's redaction,
  /// merged with the default, so a secret the caller named is never shown).
  /// - Parameter redaction: The redaction whose header, query parameter and body field names
  ///   are hidden.
  /// - Returns: The description.
  func shownDescription(redactedBy redaction: Redaction) -> String {
    describe(redaction)
  }

  /// The clauses `request` fails, each with what it sent instead: `method: expected GET, sent
  /// POST`, `header X-Trace: expected abc, sent none`, a JSON body's differences path by path.
  /// Empty when it matches. Secret values read `<redacted>`, and a line break or a bidirectional
  /// override in a value is escaped (`\n`, `\u{202E}`), so that each line says what it seems to.
  /// - Parameter request: The request.
  /// - Returns: One line per failed clause (a JSON body adds indented lines).
  public func mismatches(_ request: HTTPRequest) -> [String] {
    let parts = clauses.isEmpty ? [self] : clauses
    return parts.filter { !$0.matches(request) }.map { clause in
      clause.sentInstead?(request)
        ?? "\(DiagnosticText.escaped(clause.shownDescription(redactedBy: request.reportRedaction))): not matched"
    }
  }

  /// Whether a request matches.
  /// - Parameter request: The request.
  /// - Returns: `true` when it matches.
  public func matches(_ request: HTTPRequest) -> Bool {
    predicate(request)
  }

  /// Any request.
  public static let any = RequestMatcher("any request") { _ in true }

  /// Requests with this method.
  /// - Parameter method: The method.
  /// - Returns: The matcher.
  public static func method(_ method: HTTPMethod) -> RequestMatcher {
    RequestMatcher(
      method.rawValue, hint: (method, nil),
      sentInstead: { DiagnosticText.escaped("method: expected \(method), sent \($0.method)") },
      matches: { $0.method == method })
  }

  /// Requests whose URL path is `template`: exact, except that a `{name}` segment matches any one
  /// non-empty segment, as in `/v1/dogs/{id}`. The path is compared percent-decoded.
  /// - Parameter template: The path or path template.
  /// - Returns: The matcher.
  public static func path(_ template: String) -> RequestMatcher {
    RequestMatcher(
      template, hint: (nil, template),
      sentInstead: { DiagnosticText.escaped("path: expected \(template), sent \($0.url.path)") },
      matches: { PathTemplate.matches(template, segments: PathTemplate.segments(of: $0.url)) })
  }

  /// Requests whose path is `url`'s, segment by segment (each percent-decoded on its own), with
  /// no placeholders: what a contract's stub answers its own case's request by, so that a value
  /// with an encoded slash or braces (`a%2Fb`, `%7Bid%7D`) is one literal segment.
  /// A trailing slash counts: `dogs/` is not `dogs`.
  static func samePath(as url: URL) -> RequestMatcher {
    let expected = PathTemplate.segments(of: url, keepingTrailingSlash: true)
    let shown = url.absoluteURL.path(percentEncoded: true)
    return RequestMatcher(
      shown, hint: (nil, shown),
      sentInstead: { DiagnosticText.escaped("path: expected \(shown), sent \($0.url.path)") },
      matches: { PathTemplate.segments(of: $0.url, keepingTrailingSlash: true) == expected })
  }

  /// Requests that have a query item with this name and, when given, this value (decoded).
  ///
  /// The value of a parameter that `Redaction.default` hides (`token`, `api_key`, …) reads
  /// `<redacted>` in the matcher's description; a report of what a request sent instead hides
  /// the values that the request's own redaction, or the default, hides.
  /// - Parameters:
  ///   - name: The query item name.
  ///   - value: The value, or `nil` to accept any.
  /// - Returns: The matcher.
  public static func query(_ name: String, _ value: String? = nil) -> RequestMatcher {
    return RequestMatcher(
      "", hint: (nil, nil),
      written: "query \(name)\(value.map { "=\($0)" } ?? "")",
      sentInstead: { request in
        let hidden = request.reportRedaction.hidesQueryParameter(name)
        let sent = queryItems(of: request).filter { $0.name == name }
        let wanted = hidden ? value.map { _ in redacted } : value
        let expected = "query: expected \(name)\(wanted.map { "=\($0)" } ?? ""), sent "
        return DiagnosticText.escaped(
          expected
            + (sent.isEmpty
              ? "none"
              : sent.map { "\(name)=\(hidden ? redacted : $0.value ?? "")" }
                .joined(separator: ", ")))
      },
      describe: { redaction in
        let shown = redaction.hidesQueryParameter(name) ? value.map { _ in redacted } : value
        return "query \(name)\(shown.map { "=\($0)" } ?? "")"
      },
      matches: { request in
        queryItems(of: request).contains { $0.name == name && (value == nil || $0.value == value) }
      })
  }

  /// Requests that have every one of these query items (others may be present).
  /// - Parameter items: Names and values.
  /// - Returns: The matcher.
  public static func query(_ items: [String: String]) -> RequestMatcher {
    items.sorted { $0.key < $1.key }.map { query($0.key, $0.value) }.reduce(.any, &&)
  }

  /// Requests with a header of this name (any case) and, when given, this value.
  ///
  /// The value of a header that `Redaction.default` hides (`Authorization`, `X-API-Key`, …)
  /// reads `<redacted>` in the matcher's description; a report of what a request sent instead
  /// hides the values that the request's own redaction, or the default, hides.
  /// - Parameters:
  ///   - name: The header name.
  ///   - value: The value, or `nil` to accept any.
  /// - Returns: The matcher.
  public static func header(_ name: String, _ value: String? = nil) -> RequestMatcher {
    return RequestMatcher(
      "", hint: (nil, nil),
      written: "header \(name)\(value.map { ": \($0)" } ?? "")",
      sentInstead: { request in
        let redaction = request.reportRedaction
        let sent = redaction.redact(request.headers).values(for: name)
        let hidden = redaction.hidesHeader(name)
        let expected =
          "header \(name): expected \(value.map { hidden ? redacted : $0 } ?? "any value"), sent "
        return DiagnosticText.escaped(
          expected + (sent.isEmpty ? "none" : sent.joined(separator: ", ")))
      },
      describe: { redaction in
        let shown = redaction.hidesHeader(name) ? value.map { _ in redacted } : value
        return "header \(name)\(shown.map { ": \($0)" } ?? "")"
      },
      matches: { request in
        value.map { request.headers.values(for: name).contains($0) }
          ?? request.headers.contains(name)
      })
  }

  /// Requests whose body is exactly these bytes.
  /// - Parameter body: The bytes.
  /// - Returns: The matcher.
  public static func body(_ body: Data) -> RequestMatcher {
    RequestMatcher(
      "body of \(body.count) bytes", hint: (nil, nil),
      sentInstead: {
        "body: expected \(body.count) bytes, sent \($0.body?.count ?? 0) that differ"
      },
      matches: { ($0.body ?? Data()) == body })
  }

  /// Requests whose body is JSON equal to `value` encoded: same keys and values, whatever the key
  /// order or spacing.
  ///
  /// The value of a field that `Redaction.default` hides (`password`, `token`, …) reads
  /// `<redacted>` in the matcher's description; the differences a report lists hide the fields
  /// that the request's own redaction, or the default, hides.
  /// - Parameter value: The expected body.
  /// - Returns: The matcher.
  public static func jsonBody<Value: Encodable>(_ value: Value) -> RequestMatcher {
    let expected = try? JSONEncoder().encode(value)
    let text = expected.flatMap { String(data: $0, encoding: .utf8) } ?? "an unencodable value"
    return RequestMatcher(
      "", hint: (nil, nil),
      written: "JSON body \(DiagnosticText.cut(text))",
      sentInstead: { request in
        guard let expected else { return "JSON body: the expected value does not encode" }
        let lines = JSONDiff.differences(
          expected: expected, actual: request.body ?? Data(),
          redaction: request.reportRedaction)
        return "JSON body differs:\n" + lines.map { "      \($0)" }.joined(separator: "\n")
      },
      describe: { redaction in
        let shown =
          expected.map {
            String(
              decoding: redaction.redact(body: $0, contentType: "application/json"), as: UTF8.self)
          } ?? text
        return "JSON body \(DiagnosticText.cut(shown))"
      },
      matches: { request in
        guard let expected, let body = request.body else { return false }
        return JSONDiff.equal(expected, body)
      })
  }

  /// Both matchers.
  public static func && (lhs: RequestMatcher, rhs: RequestMatcher) -> RequestMatcher {
    if lhs.written == any.written {
      return rhs
    }
    let hint = (lhs.hint.method ?? rhs.hint.method, lhs.hint.path ?? rhs.hint.path)
    var joined = RequestMatcher(
      "", hint: hint, written: "\(lhs.written) \(rhs.written)",
      describe: {
        "\(lhs.shownDescription(redactedBy: $0)) \(rhs.shownDescription(redactedBy: $0))"
      },
      matches: { lhs.matches($0) && rhs.matches($0) })
    joined.clauses =
      (lhs.clauses.isEmpty ? [lhs] : lhs.clauses) + (rhs.clauses.isEmpty ? [rhs] : rhs.clauses)
    return joined
  }

  /// Either matcher.
  public static func || (lhs: RequestMatcher, rhs: RequestMatcher) -> RequestMatcher {
    RequestMatcher(
      "", hint: (nil, nil), written: "(\(lhs.written) or \(rhs.written))",
      describe: {
        "(\(lhs.shownDescription(redactedBy: $0)) or \(rhs.shownDescription(redactedBy: $0)))"
      },
      matches: { lhs.matches($0) || rhs.matches($0) })
  }

  /// Requests the matcher does not match.
  public static prefix func ! (matcher: RequestMatcher) -> RequestMatcher {
    RequestMatcher(
      "", hint: (nil, nil), written: "not (\(matcher.written))",
      describe: { "not (\(matcher.shownDescription(redactedBy: $0)))" },
      matches: { !matcher.matches($0) })
  }

  /// What a hidden value reads.
  private static let redacted = HTTPHeaders.redactedValue

  private static func queryItems(of request: HTTPRequest) -> [URLQueryItem] {
    URLComponents(url: request.url, resolvingAgainstBaseURL: true)?.queryItems ?? []
  }
}

/// Path templates such as `/v1/dogs/{id}`.
enum PathTemplate {
  static func matches(_ template: String, _ path: String) -> Bool {
    matches(template, segments: path.split(separator: "/", omittingEmptySubsequences: false))
  }

  /// Whether `template` matches a path given as its segments, each percent-decoded on its own.
  static func matches<Segment: StringProtocol>(_ template: String, segments actual: [Segment])
    -> Bool
  {
    let expected = template.split(separator: "/", omittingEmptySubsequences: false)
    guard expected.count == actual.count else { return false }
    return zip(expected, actual).allSatisfy { pattern, segment in
      isPlaceholder(pattern) ? !segment.isEmpty : pattern == segment
    }
  }

  /// The URL's path split at its slashes before it is percent-decoded, each segment decoded
  /// on its own: an encoded slash (`a%2Fb`) stays inside its segment instead of splitting it,
  /// as the server that routes the request sees it.
  ///
  /// Read without `URLComponents` (every route's matcher reads it for every request), and
  /// without a trailing slash, as `URL.path` (which templates were matched against) has it.
  /// With `keepingTrailingSlash`, a trailing slash is kept as an empty last segment.
  static func segments(of url: URL, keepingTrailingSlash: Bool = false) -> [String] {
    var encoded = url.absoluteURL.path(percentEncoded: true)
    if !keepingTrailingSlash, encoded.utf8.count > 1, encoded.hasSuffix("/") {
      encoded.removeLast()
    }
    let segments = encoded.split(separator: "/", omittingEmptySubsequences: false)
    guard encoded.utf8.contains(UInt8(ascii: "%")) else { return segments.map(String.init) }
    return segments.map { $0.removingPercentEncoding ?? String($0) }
  }

  /// How alike a template and a path are, from 0 to 1: the share of leading segments that match.
  static func similarity(_ template: String, _ path: String) -> Double {
    let expected = template.split(separator: "/")
    let actual = path.split(separator: "/")
    guard !expected.isEmpty || !actual.isEmpty else { return 1 }
    let shared = zip(expected, actual).prefix { isPlaceholder($0) || $0 == $1 }.count
    return Double(shared) / Double(max(expected.count, actual.count))
  }

  private static func isPlaceholder(_ segment: Substring) -> Bool {
    segment.count > 2 && segment.first == "{" && segment.last == "}"
  }
}

extension Redaction {
  /// Whether a query parameter's value is hidden: one of ``queryParameters``, in any case.
  fileprivate func hidesQueryParameter(_ name: String) -> Bool {
    queryParameters.contains(name.lowercased())
  }
}
