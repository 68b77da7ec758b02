import Foundation

extension URLError {
  /// What happened, in plain words, for the failures an API client meets.
  var phrase: String {
    switch code {
    case .notConnectedToInternet: "the device is not connected to the internet"
    case .cannotConnectToHost: "nothing accepted the connection at \(hostDescription)"
    case .cannotFindHost, .dnsLookupFailed: "the host name \(hostDescription) could not be found"
    case .networkConnectionLost: "the connection was lost before the response was complete"
    case .timedOut: "the server did not answer in time"
    case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
      .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected:
      "a secure connection to \(hostDescription) could not be made"
    case .badServerResponse, .cannotParseResponse: "the server's answer was not valid HTTP"
    case .httpTooManyRedirects: "the server redirected too many times"
    case .redirectToNonExistentLocation: "the server redirected to a location that does not exist"
    case .badURL, .unsupportedURL: "the URL is not one URLSession can load"
    case .cancelled: "the request was cancelled"
    case .dataLengthExceedsMaximum: "the response is larger than allowed"
    case .cannotDecodeContentData, .cannotDecodeRawData:
      "the body could not be decoded as its Content-Encoding says"
    case .resourceUnavailable: "the resource is unavailable"
    default: localizedDescription
    }
  }

  /// Whether the failure means no connection to the server could be made at all.
  var meansUnreachable: Bool {
    switch code {
    case .notConnectedToInternet, .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed,
      .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
      .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected,
      .internationalRoamingOff, .dataNotAllowed, .callIsActive:
      true
    default:
      false
    }
  }

  /// The method and URL of the request, when ``APIClient`` recorded them.
  var errandRequest: String? {
    userInfo[Self.errandRequestKey] as? String
  }

  /// How many attempts a retry policy made before giving up with this error, when it did.
  var errandAttempts: Int? {
    userInfo[Self.errandAttemptsKey] as? Int
  }

  /// The wait a retry policy would have made before another attempt, when it made none because
  /// the call's deadline came first.
  var errandRetryPastDeadline: Duration? {
    userInfo[Self.errandRetryPastDeadlineKey] as? Duration
  }

  /// The key under which Errand keeps the number of attempts.
  static let errandAttemptsKey = "ErrandAttempts"

  /// The key under which Errand keeps the wait of a retry the deadline ruled out.
  static let errandRetryPastDeadlineKey = "ErrandRetryPastDeadline"

  /// This error, noting how many attempts were made, and the wait of a retry the call's deadline
  /// ruled out, if one did.
  func noting(attempts: Int, retryPastDeadline: Duration? = nil) -> URLError {
    var info = userInfo
    info[Self.errandAttemptsKey] = attempts
    info[Self.errandRetryPastDeadlineKey] = retryPastDeadline
    return URLError(code, userInfo: info)
  }

  /// `host:port` of the failing URL, or `the server`.
  private var hostDescription: String {
    guard let url = failingURL, let host = url.host else { return "the server" }
    return url.port.map { "\(host):\($0)" } ?? host
  }
}
