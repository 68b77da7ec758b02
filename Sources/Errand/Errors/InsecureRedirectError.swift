import Foundation

/// A redirect that Errand refused because it would send the request from HTTPS to plain HTTP.
public struct InsecureRedirectError: Error, LocalizedError, Hashable {
  /// The HTTPS URL that answered with the redirect.
  public var from: URL
  /// The plain HTTP URL it pointed to.
  public var to: URL

  /// Create the error.
  /// - Parameters:
  ///   - from: The HTTPS URL that answered with the redirect.
  ///   - to: The plain HTTP URL it pointed to.
  public init(from: URL, to: URL) {
    self.from = from
    self.to = to
  }

  /// Names both URLs and why the redirect was not followed.
  public var errorDescription: String? {
    "refused to follow a redirect from \(from.absoluteString) to \(to.absoluteString): "
      + "it would downgrade HTTPS to plain HTTP"
  }
}
