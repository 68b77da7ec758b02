import Foundation

/// What became of one attempt of a call, as a client with a ``ConnectivityPolicy`` tells its
/// ``ConnectivitySource`` (``ConnectivitySource/learn(from:)``): for a source that judges the
/// network by the client's own calls, such as ``InferredConnectivity``.
public enum ConnectionOutcome: Sendable, Hashable {
  /// A server answered (with any status): the network works.
  case reachedServer
  /// No connection could be made, so nothing of the request reached a server: one of
  /// ``ConnectionOutcome/noConnectionCodes``.
  case couldNotConnect(URLError.Code)

  /// The failures that mean no connection could be made at all, so that nothing of the request
  /// was sent: no internet connection (`notConnectedToInternet`, `dataNotAllowed`,
  /// `internationalRoamingOff`), a host that refused or could not be reached
  /// (`cannotConnectToHost`), and a name that could not be looked up (`cannotFindHost`,
  /// `dnsLookupFailed`). A connection lost midway (`networkConnectionLost`) is not one of them:
  /// the request may have arrived.
  public static let noConnectionCodes: Set<URLError.Code> = [
    .notConnectedToInternet, .dataNotAllowed, .internationalRoamingOff, .cannotConnectToHost,
    .cannotFindHost, .dnsLookupFailed,
  ]

  /// The outcome an error means, when it is a failure to connect (one of
  /// ``noConnectionCodes``); `nil` for any other error.
  static func failure(_ error: any Error) -> ConnectionOutcome? {
    let urlError: URLError?
    switch error {
    case let error as URLError: urlError = error
    case APIError.transport(let underlying as URLError): urlError = underlying
    default: urlError = nil
    }
    guard let code = urlError?.code, noConnectionCodes.contains(code) else { return nil }
    return .couldNotConnect(code)
  }
}
