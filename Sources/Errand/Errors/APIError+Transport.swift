import Foundation

extension APIError {
  /// Map what a transport threw to the error family: cancellation, timeouts and other failures.
  /// A `URLError` gains the request's URL and method, so its description can name them.
  package init(transportError error: any Error, request: HTTPRequest?) {
    if let error = error as? APIError {
      self = error
    } else if error is CancellationError {
      self = .cancelled
    } else if let urlError = error as? URLError {
      switch urlError.code {
      case .cancelled: self = .cancelled
      case .timedOut: self = .timedOut
      default: self = .transport(request.map(urlError.adding) ?? urlError)
      }
    } else {
      self = .transport(error)
    }
  }
}

extension URLError {
  /// The key under which Errand keeps the method and URL of the failed request.
  static let errandRequestKey = "ErrandRequest"

  /// This error with the request's description, and its URL as the failing URL when none is set;
  /// every failing URL it carries, here or in the errors beneath it, has its secrets hidden by
  /// `Redaction.default`, so that printing or dumping the error shows none.
  func adding(_ request: HTTPRequest) -> URLError {
    var info = userInfo
    info[Self.errandRequestKey] = request.description
    if info[NSURLErrorFailingURLErrorKey] == nil {
      info[NSURLErrorFailingURLErrorKey] = request.url
    }
    return URLError(code, userInfo: Self.hidingSecrets(in: info, depth: 0))
  }

  /// The key URLSession also stores the failing URL under, as text
  /// (`NSURLErrorFailingURLStringErrorKey`, deprecated but still set).
  private static let failingURLStringKey = "NSErrorFailingURLStringKey"

  /// User info with failing URLs redacted, in nested underlying errors too (a few levels deep).
  private static func hidingSecrets(in info: [String: Any], depth: Int) -> [String: Any] {
    var info = info
    let redaction = Redaction.default
    if let url = info[NSURLErrorFailingURLErrorKey] as? URL {
      info[NSURLErrorFailingURLErrorKey] = redaction.redactedURL(url)
    }
    if let text = info[failingURLStringKey] as? String, let url = URL(string: text) {
      info[failingURLStringKey] = redaction.redact(url)
    }
    if depth < 4, let underlying = info[NSUnderlyingErrorKey] as? NSError {
      info[NSUnderlyingErrorKey] = NSError(
        domain: underlying.domain, code: underlying.code,
        userInfo: hidingSecrets(in: underlying.userInfo, depth: depth + 1))
    }
    return info
  }
}
