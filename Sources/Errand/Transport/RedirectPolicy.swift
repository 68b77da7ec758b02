import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What Errand does with a redirect: follow `http` and `https` locations only, never carry
/// userinfo from a `Location` into credentials, strip secrets across origins (unless the target
/// host is trusted), refuse to go from HTTPS to plain HTTP, and have a redirect that keeps the
/// method (`307`/`308`, and `301`/`302` of anything but `POST`) of a request with a body sent
/// again, body included, within the origin or to a trusted host, and refused elsewhere.
package enum RedirectPolicy {
  /// The decision for one redirect.
  package enum Decision: Equatable {
    /// Follow: send to `url` with `headers` (the secret ones left behind at another origin).
    case follow(URL, HTTPHeaders)
    /// Refuse for another reason.
    case refuse(RefusedRedirectError)
    /// Send the request again, body included, to this URL (of the same origin, or a trusted
    /// host): URLSession would repeat it without its body.
    case resend(URL)
  }

  /// The statuses whose `Location` is followed.
  package static let followedStatuses: Set<Int> = [301, 302, 303, 307, 308]

  /// How many redirects one request follows, as URLSession does: `CurlTransport` and stubs that
  /// follow redirects stop after this many, and `URLSessionTransport` sends a request again
  /// itself (a `307` or `308` within its origin) at most this many times.
  package static let maximumRedirects = 16

  /// Whether a redirect turns the request into a `GET` without a body, as browsers and URLSession
  /// do: a `303`, and a `301` or `302` after a `POST`.
  package static func becomesGet(status: Int, method: String) -> Bool {
    status == 303 || ([301, 302].contains(status) && method.uppercased() == "POST")
  }

  /// Decide what to do with a redirect from `source` (the URL that answered with a redirect) to
  /// `target`.
  /// - Parameters:
  ///   - source: The URL that answered.
  ///   - target: The URL the redirect leads to, resolved against `source`.
  ///   - headers: The headers the next request would carry.
  ///   - location: The answer's `Location` header, as sent.
  ///   - status: The answer's status.
  ///   - hasBody: Whether the request being redirected has a body.
  ///   - method: The method of the request being redirected.
  ///   - trustedHosts: Hosts that may receive credentials and bodies across origins.
  ///   - redaction: Which headers are secret and stay behind at another origin.
  ///   - staysHome: The client's own default headers that stay behind at another origin too
  ///     (lowercased names: those not in its `crossOriginHeaders`).
  /// - Returns: Follow (where, with which headers), resend, or refuse.
  package static func decide(
    from source: URL?, to target: URL, headers: HTTPHeaders, location: String? = nil,
    status: Int = 302, hasBody: Bool = false, method: String = "GET",
    trustedHosts: Set<String> = [], redaction: Redaction = .default,
    staysHome: Set<String> = []
  ) -> Decision {
    // A redirect that keeps the method keeps the body: a 307 or 308, and a 301 or 302 of anything
    // but a POST (which becomes a GET, as in browsers). URLSession on Linux repeats such a
    // request without its body; Errand sends it again itself, where the body may go.
    let keepsMethod =
      followedStatuses.contains(status) && !becomesGet(status: status, method: method)
    let repeatsBody = keepsMethod && hasBody
    guard let source else { return .follow(target, headers) }
    // A refusal names both URLs, with their secrets hidden and every secret the request carried
    // scrubbed from them: a server may put the token it got into the `Location`.
    func refusal(location: String, _ reason: RefusedRedirectError.Reason) -> Decision {
      let secrets = redaction.secretValues(
        in: HTTPRequest(url: source, headers: headers, redaction: redaction))
      func scrubbed(_ text: String) -> String {
        Redaction.scrub(secrets, from: text)
      }
      return .refuse(
        RefusedRedirectError(
          from: scrubbed(redaction.redact(source)), location: scrubbed(location), reason: reason))
    }
    if let location, let scheme = URL(string: location, relativeTo: source)?.absoluteURL.scheme,
      !["http", "https"].contains(scheme.lowercased())
    {
      return refusal(
        location: URL(string: location).map { redaction.redact($0) } ?? "(unreadable)",
        .unsupportedScheme)
    }
    if source.scheme?.lowercased() == "https" && target.scheme?.lowercased() == "http" {
      return refusal(location: redaction.redact(target), .downgradeToHTTP)
    }
    var target = target
    if target.user != nil || target.password != nil,
      var components = URLComponents(url: target, resolvingAgainstBaseURL: true)
    {
      // A user and password in a Location never become credentials.
      components.user = nil
      components.password = nil
      if let stripped = components.url {
        target = stripped
      }
    }
    let trusted = trustedHosts.contains(target.host?.lowercased() ?? "")
    if repeatsBody && (trusted || isSameOrigin(source, target)) {
      return .resend(target)
    }
    guard !isSameOrigin(source, target) else { return .follow(target, headers) }
    if repeatsBody {
      return refusal(location: redaction.redact(target), .bodyWouldBeDropped)
    }
    guard !trusted else { return .follow(target, headers) }
    // Every header the redaction engine hides (credentials, API keys, auth tokens) stays behind,
    // and so does every default header of the client's own that is not safe at every origin
    // (`staysHome`, lowercased: `APIClient.Configuration.crossOriginHeaders` says which are).
    return .follow(
      target,
      HTTPHeaders(
        headers.fields.filter {
          !redaction.hidesHeader($0.name) && !staysHome.contains($0.name.lowercased())
        }))
  }

  /// Whether two URLs share scheme, host and port (default ports made explicit).
  package static func isSameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
    origin(lhs) == origin(rhs)
  }

  private static func origin(_ url: URL) -> String {
    let scheme = url.scheme?.lowercased() ?? ""
    let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
    return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
  }
}
