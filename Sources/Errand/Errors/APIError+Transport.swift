import Foundation

extension APIError {
  /// Map what a transport threw to the error family: cancellation, timeouts and other failures,
  /// with `request` in their context when they carry none yet (``APIError/filling(_:)``), so that
  /// their descriptions name it. A `URLError` also gains the request's URL as its failing URL.
  package init(transportError error: any Error, request: HTTPRequest?) {
    let mapped: APIError
    if let error = error as? APIError {
      mapped = error
    } else if error is CancellationError {
      mapped = .cancelled
    } else if let urlError = error as? URLError {
      switch urlError.code {
      case .cancelled: mapped = .cancelled(urlError.context ?? Context())
      case .timedOut: mapped = .timedOut(urlError.context ?? Context())
      default: mapped = .transport(urlError)
      }
    } else {
      mapped = .transport(error)
    }
    self = request.map(mapped.filling) ?? mapped
  }
}

extension URLError {
  /// This error with the request in its context (unless it has one there already), and its URL
  /// as the failing URL when none is set; every failing URL it carries, here or in the errors
  /// beneath it, has its secrets hidden by `Redaction.default`, so that printing or dumping the
  /// error shows none.
  func adding(_ request: HTTPRequest) -> URLError {
    guard context?.request == nil else { return self }
    var info = userInfo
    info[APIError.Context.userInfoKey] = context.filling(request)
    if info[NSURLErrorFailingURLErrorKey] == nil {
      info[NSURLErrorFailingURLErrorKey] = request.url
    }
    return URLError(
      code, userInfo: Self.hidingSecrets(in: info, by: request.redaction, depth: 0))
  }

  /// The key URLSession also stores the failing URL under, as text
  /// (`NSURLErrorFailingURLStringErrorKey`, deprecated but still set).
  private static let failingURLStringKey = "NSErrorFailingURLStringKey"

  /// User info with failing URLs redacted by the request's redaction (the client's secret names
  /// included), in nested underlying errors too (a few levels deep).
  private static func hidingSecrets(
    in info: [String: Any], by redaction: Redaction, depth: Int
  ) -> [String: Any] {
    var info = info
    if let url = info[NSURLErrorFailingURLErrorKey] as? URL {
      info[NSURLErrorFailingURLErrorKey] = redaction.redactedURL(url)
    }
    if let text = info[failingURLStringKey] as? String, let url = URL(string: text) {
      info[failingURLStringKey] = redaction.redact(url)
    }
    if depth < 4, let underlying = info[NSUnderlyingErrorKey] as? NSError {
      info[NSUnderlyingErrorKey] = NSError(
        domain: underlying.domain, code: underlying.code,
        userInfo: hidingSecrets(in: underlying.userInfo, by: redaction, depth: depth + 1))
    }
    return info
  }
}
