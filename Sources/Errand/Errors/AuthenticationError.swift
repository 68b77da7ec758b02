import Foundation

/// Why ``BearerAuthenticationMiddleware`` could not supply a token.
public enum AuthenticationError: Error, LocalizedError {
  /// The token provider failed to refresh the token.
  case refreshFailed(any Error)
  /// More refreshes were needed within the window than the limit allows: the server keeps
  /// rejecting fresh tokens, so Errand stops asking instead of looping.
  case refreshLimitReached(limit: Int, window: Duration)

  /// What went wrong, with the provider's error.
  public var errorDescription: String? {
    switch self {
    case .refreshFailed(let underlying):
      return "the access token could not be refreshed: \(APIError.describe(underlying))"
    case .refreshLimitReached(let limit, let window):
      return "the access token was refreshed \(limit) times within \(window) and the server still "
        + "rejects it; not refreshing again until the window passes"
    }
  }
}
