import Foundation

/// The one error family that Errand's client throws.
///
/// Each case says which step failed, and ``errorDescription`` says it in words a person can act
/// on, naming the request and the attempts made where they are known (``context``).
/// Descriptions never contain the values of `Authorization`, `Proxy-Authorization` or `Cookie`
/// headers, nor secret query values.
public enum APIError: Error, LocalizedError {
  /// The endpoint cannot form a request: a path, header or body is not valid. The reason names
  /// the endpoint and the problem.
  case invalidRequest(String)
  /// The transport failed before a response arrived: the server is unreachable, the connection
  /// was lost, and so on. The underlying error is usually a `URLError`.
  case transport(any Error)
  /// The server answered with a status the endpoint does not accept. The response keeps the body.
  case unacceptableStatus(HTTPResponse)
  /// The body could not be decoded into the endpoint's response type.
  case decoding(any Error, HTTPResponse)
  /// The request took longer than its timeout. The context names the request and the attempts
  /// made.
  ///
  /// `APIError.timedOut`, without the context, still works as a value and as a pattern:
  /// `throw APIError.timedOut` throws a timeout with an empty context, and `case .timedOut:` or
  /// `catch APIError.timedOut` match every timeout, whatever its context.
  case timedOut(_ context: Context)
  /// The task that sent the request was cancelled. The context names the request and the
  /// attempts made.
  ///
  /// `APIError.cancelled`, without the context, still works as a value and as a pattern, as
  /// `APIError.timedOut` does.
  case cancelled(_ context: Context)

  /// A timeout with an empty context: no request, one attempt. Transports and middleware throw
  /// it; the client fills in the request, ``RetryMiddleware`` the attempts.
  public static var timedOut: APIError { .timedOut(Context()) }

  /// A cancellation with an empty context: no request, one attempt.
  public static var cancelled: APIError { .cancelled(Context()) }

  /// What went wrong, in a sentence or two: the request, the status, the start of the body, the
  /// decoding path, or the network failure.
  public var errorDescription: String? {
    switch self {
    case .invalidRequest(let reason):
      return "Cannot form the request: \(reason)"
    case .transport(let underlying):
      let context = self.context
      let subject =
        (context?.request?.description ?? (underlying as? URLError)?.failingURL?.redactedString)
        .map { " for \($0)" }.orEmpty
      let attempts = Self.attempts(
        context?.attempts ?? 1, retryPastDeadline: context?.retryPastDeadline)
      return "\(Self.lead(for: underlying))\(subject)\(attempts): \(Self.describe(underlying))"
    case .unacceptableStatus(let response):
      let subject = Self.subject(of: response).map { " \($0) with" }.orEmpty
      return
        "The server answered\(subject) \(Self.status(response))"
        + "\(Self.attempts(response.attempts, retryPastDeadline: response.retryPastDeadline))."
        + Self.bodyPreview((response.request?.redaction ?? .default).redact(response).body)
        .map { " Body: \($0)" }.orEmpty
    case .decoding(let underlying, let response):
      let subject = Self.subject(of: response).map { " to \($0)" }.orEmpty
      return "The body of the \(Self.status(response)) answer\(subject) could not be decoded: "
        + Self.describe(underlying)
    case .timedOut(let context):
      let held = context.rateLimitWait.map {
        " (not sent: its host's rate limit would have held it \($0.decimalSeconds) s, past the "
          + "call's deadline)"
      }
      let network = context.connectivityWait.map {
        " waiting for the network (still down at the call's deadline, after \($0.decimalSeconds) s "
          + "of waiting)"
      }
      return
        "The request\(Self.subject(of: context)) timed out\(network.orEmpty)"
        + "\(Self.attempts(context))\(held.orEmpty)."
    case .cancelled(let context):
      return "The request\(Self.subject(of: context)) was cancelled\(Self.attempts(context))."
    }
  }

  /// How a transport failure's message starts: "The server could not be reached" only when no
  /// connection could be made; a refused redirect or a failed token refresh says what it is.
  static func lead(for underlying: any Error) -> String {
    switch underlying {
    case is RefusedRedirectError:
      return "The request stopped at a redirect"
    case is AuthenticationError:
      return "The request could not be authenticated"
    case let urlError as URLError where urlError.meansUnreachable:
      return "The server could not be reached"
    default:
      return "The request failed"
    }
  }

  /// ` after N attempts` when there was more than one, then why there was no other when the
  /// call's deadline ruled it out; else nothing.
  static func attempts(_ count: Int, retryPastDeadline wait: Duration? = nil) -> String {
    let made = count > 1 ? " after \(count) attempts" : ""
    guard let wait else { return made }
    return made + " (no further attempt: the retry's wait of \(wait.decimalSeconds) s would end "
      + "after the call's deadline)"
  }

  /// ` after N attempts` and a retry the deadline ruled out, from a context.
  static func attempts(_ context: Context) -> String {
    attempts(context.attempts, retryPastDeadline: context.retryPastDeadline)
  }

  /// ` GET https://…` (secrets hidden) when the context knows the request; else nothing.
  static func subject(of context: Context) -> String {
    context.request.map { " \($0)" }.orEmpty
  }

  /// The status and its reason phrase, for example `HTTP 404 Not Found`.
  static func status(_ response: HTTPResponse) -> String {
    "HTTP \(response.status) \(HTTPStatus.reasonPhrase(response.status))"
  }

  /// The method and URL that produced a response, or just the URL, or `nil` when neither is known.
  static func subject(of response: HTTPResponse) -> String? {
    if let request = response.request {
      return request.description
    }
    return response.url?.redactedString
  }

  /// An underlying error in words: coding errors give their path, URL errors a plain phrase and
  /// their code, others their description.
  static func describe(_ error: any Error) -> String {
    if let decoding = error as? DecodingError {
      return decoding.pathDescription
    }
    if let encoding = error as? EncodingError {
      return encoding.pathDescription
    }
    if let urlError = error as? URLError {
      return "\(urlError.phrase) (URLError \(urlError.code.rawValue))."
    }
    return (error as? any LocalizedError)?.errorDescription ?? String(describing: error)
  }

  /// The first `limit` bytes of a body when it is text, marked when cut; `nil` when the body is
  /// empty or binary.
  static func bodyPreview(_ body: Data, limit: Int = 512) -> String? {
    guard !body.isEmpty else { return nil }
    let prefix = body.prefix(limit)
    // A cut may split a multi-byte character: allow up to three trailing bytes to go.
    let drops = body.count > limit ? 0...3 : 0...0
    guard
      let text = drops.lazy.compactMap({ String(data: prefix.dropLast($0), encoding: .utf8) })
        .first,
      !text.unicodeScalars.contains(where: isBinaryControl)
    else { return nil }
    return body.count > limit ? "\(text)… (\(body.count) bytes in all)" : text
  }

  /// Whether a scalar is a control character that text bodies do not contain.
  private static func isBinaryControl(_ scalar: Unicode.Scalar) -> Bool {
    (scalar.value < 0x20 && !["\n", "\r", "\t"].contains(scalar)) || scalar.value == 0x7F
  }
}

extension Optional where Wrapped == String {
  /// The string, or an empty one.
  var orEmpty: String { self ?? "" }
}
