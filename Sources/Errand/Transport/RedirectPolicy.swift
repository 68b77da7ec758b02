import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What Errand does with a redirect: follow within the origin, strip secrets across origins, and
/// refuse to go from HTTPS to plain HTTP.
enum RedirectPolicy {
  /// The decision for one redirect.
  enum Decision: Equatable {
    /// Follow with this request.
    case follow(URLRequest)
    /// Refuse: the redirect would downgrade from HTTPS to HTTP.
    case refuseDowngrade(from: URL, to: URL)
  }

  /// Decide what to do with a redirect from `source` (the URL that answered with a redirect) to
  /// `proposed`.
  static func decide(from source: URL?, proposed: URLRequest) -> Decision {
    guard let source, let target = proposed.url else { return .follow(proposed) }
    if source.scheme?.lowercased() == "https" && target.scheme?.lowercased() == "http" {
      return .refuseDowngrade(from: source, to: target)
    }
    guard !isSameOrigin(source, target) else { return .follow(proposed) }
    // Every header the redaction engine hides (credentials, API keys, auth tokens) stays behind.
    var stripped = proposed
    for name in (proposed.allHTTPHeaderFields ?? [:]).keys
    where Redaction.default.hidesHeader(name) {
      stripped.setValue(nil, forHTTPHeaderField: name)
    }
    return .follow(stripped)
  }

  /// Whether two URLs share scheme, host and port (default ports made explicit).
  static func isSameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
    origin(lhs) == origin(rhs)
  }

  private static func origin(_ url: URL) -> String {
    let scheme = url.scheme?.lowercased() ?? ""
    let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
    return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
  }
}
