import Foundation

/// A redirect that a transport refused to follow because following it would do something the
/// caller did not ask for: leave HTTPS for plain HTTP, leave http and https altogether, or send a
/// body where it was not meant to go. Both URLs are kept with their secrets hidden, so printing
/// the error never shows a token from a redirect URL.
public struct RefusedRedirectError: Error, LocalizedError, Hashable {
  /// Why a redirect was refused.
  public enum Reason: Sendable, Hashable {
    /// The `Location` is not an `http` or `https` URL (`file:`, `data:`, `javascript:`, ...),
    /// which URLSession would otherwise turn into a path on the same server.
    case unsupportedScheme
    /// A redirect that keeps the method (`307`, `308`, or a `301`/`302` of anything but `POST`)
    /// asked to repeat a request that has a body at another origin that is not a trusted host.
    /// Errand neither sends the body there nor sends the request without it.
    case bodyWouldBeDropped
    /// The redirect goes from HTTPS to plain HTTP.
    case downgradeToHTTP
  }

  /// The URL that answered with the redirect, secrets hidden.
  public var from: String
  /// The `Location` it pointed to, secrets hidden.
  public var location: String
  /// Why it was refused.
  public var reason: Reason
  /// The call this error ended, where the client knew it: the request, the attempts made and
  /// the transfer's metrics (``APIError/context`` reads it). It does not take part in equality
  /// or hashing.
  public var context: APIError.Context?

  /// Create the error; both URLs are kept with the secrets ``Redaction/default`` knows hidden
  /// (a transport that knows more, such as the request's own ``HTTPRequest/redaction``, redacts
  /// them before).
  /// - Parameters:
  ///   - from: The URL that answered with the redirect.
  ///   - location: Where it pointed.
  ///   - reason: Why it was refused.
  public init(from: String, location: String, reason: Reason) {
    self.from = Redaction.default.redact(urlText: from)
    self.location = Redaction.default.redact(urlText: location)
    self.reason = reason
  }

  /// Compare the URLs and the reason; the context is not part of the value.
  public static func == (lhs: RefusedRedirectError, rhs: RefusedRedirectError) -> Bool {
    lhs.from == rhs.from && lhs.location == rhs.location && lhs.reason == rhs.reason
  }

  /// Hash consistently with `==`.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(from)
    hasher.combine(location)
    hasher.combine(reason)
  }

  /// What was refused and why, in one sentence.
  public var errorDescription: String? {
    switch reason {
    case .unsupportedScheme:
      return "refused to follow a redirect from \(from) to \(location): only http and https "
        + "redirects are followed"
    case .bodyWouldBeDropped:
      return "refused to follow a redirect from \(from) to \(location): the request's body would "
        + "not be sent again to another origin"
    case .downgradeToHTTP:
      return "refused to follow a redirect from \(from) to \(location): it would downgrade HTTPS "
        + "to plain HTTP"
    }
  }
}

extension RefusedRedirectError: CarriesCallContext {}
