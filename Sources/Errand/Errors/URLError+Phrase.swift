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
    case .unknown where (userInfo[NSLocalizedDescriptionKey] as? String) == "Failed writing header":
      // URLSession on Linux reads each header line as UTF-8 and gives up on one that is not.
      "the server sent a header that is not UTF-8 (obs-text), which URLSession on Linux cannot "
        + "read; CurlTransport reads it"
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

  /// `host:port` of the failing URL, or `the server`.
  private var hostDescription: String {
    guard let url = failingURL, let host = url.host else { return "the server" }
    return url.port.map { "\(host):\($0)" } ?? host
  }
}
