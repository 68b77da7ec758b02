import Errand
import Foundation

/// A request a ``StubTransport`` received and how it answered: what ``StubTransport/exchanges``
/// lists and ``StubTransport/har(redaction:)`` exports.
public struct StubExchange: Sendable, CustomStringConvertible {
  /// The request, with its body.
  public let request: HTTPRequest
  /// When the request arrived, by the wall clock (HAR's `startedDateTime`).
  public let date: Date
  /// The answer, once there is one: the whole response, or the head of a streamed one (its body
  /// empty: a streamed body is not kept); `nil` while the request waits and when the stub threw.
  public internal(set) var response: HTTPResponse?
  /// The error the stub threw instead of answering, if it did.
  public internal(set) var error: (any Error)?
  /// Whether the answer's body was streamed, and so is not in ``response``.
  var streamed = false

  init(request: HTTPRequest, date: Date) {
    self.request = request
    self.date = date
  }

  /// The request and its answer, for example `GET https://api.example.com/v1/dogs → HTTP 200
  /// (12 bytes)`, secrets hidden.
  public var description: String {
    let answer =
      response.map { "\($0)" } ?? error.map { "threw \(StubExchange.summary(of: $0))" }
      ?? "no answer yet"
    return "\(request) → \(answer)"
  }

  /// What an error was, without its message (a `URLError`'s can carry the URL and its secrets):
  /// its type, and its code or kind where it has one.
  static func summary(of error: any Error) -> String {
    if let error = error as? URLError {
      return "URLError \(error.code.rawValue)"
    }
    if let error = error as? APIError {
      return "APIError (\(error.kind))"
    }
    return String(describing: type(of: error))
  }
}

extension StubExchange: CustomReflectable {
  /// The request and its answer redacted as a cassette records them (by `Redaction.default` and
  /// the request's own redaction; a secret the request carried is hidden where the answer echoes
  /// it too), and what was thrown by its type only.
  public var customMirror: Mirror {
    let shown = Cassette.Exchange(request: request, response: response ?? HTTPResponse(status: 0))
      .redacted(with: Redaction.default.merging(request.redaction))
    return Mirror(
      self,
      children: [
        "request": shown.request, "date": date,
        "response": response.map { _ in shown.response } as Any,
        "error": error.map(StubExchange.summary) as Any,
      ], displayStyle: .struct)
  }
}
