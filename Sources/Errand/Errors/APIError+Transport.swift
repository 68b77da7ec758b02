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

  /// This error with the request's description, and its URL as the failing URL when none is set.
  func adding(_ request: HTTPRequest) -> URLError {
    var info = userInfo
    info[Self.errandRequestKey] = request.description
    if info[NSURLErrorFailingURLErrorKey] == nil {
      info[NSURLErrorFailingURLErrorKey] = request.url
    }
    return URLError(code, userInfo: info)
  }
}
