import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension RedirectPolicy {
  /// The request to send after a redirect, for transports that follow redirects themselves
  /// (`CurlTransport`, a `StubTransport` told to): what URLSession would propose, as this policy
  /// allows it.
  /// - Parameters:
  ///   - request: The request that was redirected.
  ///   - location: The answer's `Location`, as sent.
  ///   - status: The answer's status.
  ///   - trustedHosts: Hosts that may receive credentials and bodies across origins.
  /// - Returns: The next request: a `GET` without a body after a `303` (or a `301`/`302` after a
  ///   `POST`), without the secret headers when it leaves the origin, nor the client's own
  ///   default headers that are not safe there (read from the call's ``RequestContext``).
  /// - Throws: `URLError(.badServerResponse)` for a location that is not a URL, or the
  ///   ``RefusedRedirectError`` of a redirect the policy refuses.
  package static func request(
    following request: HTTPRequest, to location: String, status: Int, trustedHosts: Set<String>
  ) throws -> HTTPRequest {
    guard let target = URL(string: location, relativeTo: request.url)?.absoluteURL else {
      throw URLError(.badServerResponse, userInfo: [NSURLErrorFailingURLErrorKey: request.url])
    }
    // As URLSession: a 303, and a 301 or 302 after a POST, become a GET without a body.
    let becomesGet = becomesGet(status: status, method: request.method.rawValue)
    let hasBody = !becomesGet && (request.body != nil || request.bodyFile != nil)
    switch decide(
      from: request.url, to: target, headers: request.headers, location: location,
      status: status, hasBody: hasBody, method: request.method.rawValue,
      trustedHosts: trustedHosts, redaction: request.redaction,
      staysHome: RequestContext.current?.clientHeaders ?? [])
    {
    case .follow(let url, let headers):
      var followed = request
      followed.url = url
      followed.headers = headers
      if becomesGet {
        followed.method = .get
        followed.body = nil
        followed.bodyFile = nil
      }
      return followed
    case .resend(let url):
      var resent = request
      resent.url = url
      return resent
    case .refuse(let error):
      throw error
    }
  }
}

extension RedirectPolicy {
  /// Where an answer redirects to: its `Location`, when its status is one that is followed and
  /// the location is not empty. A redirect without one is the answer itself, as URLSession
  /// gives it.
  /// - Parameters:
  ///   - status: The answer's status.
  ///   - headers: The answer's headers.
  /// - Returns: The location, as sent; `nil` when there is none to follow.
  package static func location(toFollow status: Int, _ headers: HTTPHeaders) -> String? {
    guard followedStatuses.contains(status), let location = headers["Location"],
      !location.trimmingCharacters(in: .whitespaces).isEmpty
    else { return nil }
    return location
  }

  /// Send `request` with `send`, following redirects by this policy up to `maximum` times, for
  /// transports that follow redirects themselves: each hop's metrics go into the final
  /// response's ``TransferMetrics/redirects``, each redirect followed or refused is told to
  /// the call's listeners through `exchange`, and, when the call has a cookie jar, each
  /// redirect's cookies are stored and the next request carries the jar's cookies for its URL.
  /// - Parameters:
  ///   - request: The request.
  ///   - exchange: The call's exchange, told of each redirect.
  ///   - trustedHosts: Hosts that may receive credentials and bodies across origins.
  ///   - maximum: The most redirects followed.
  ///   - send: Sends one request, without following redirects.
  /// - Returns: The first answer that is not a redirect to follow.
  /// - Throws: What `send` throws, ``RefusedRedirectError``, or
  ///   `URLError(.httpTooManyRedirects)`.
  package static func following(
    _ request: HTTPRequest, _ exchange: Exchange, trustedHosts: Set<String>, maximum: Int,
    send: (HTTPRequest) async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    var current = request
    var hops: [TransferMetrics] = []
    for _ in 0...maximum {
      var response = try await send(current)
      if !hops.isEmpty {
        response.metrics = (response.metrics ?? TransferMetrics())
        response.metrics?.redirects = hops
      }
      guard let location = location(toFollow: response.status, response.headers) else {
        return response
      }
      // Its body, if any is still coming, is not read.
      response.bodyStream?.cancel()
      exchange.receivedCookies(response.headers, from: response.url ?? current.url)
      do {
        current = try self.request(
          following: current, to: location, status: response.status, trustedHosts: trustedHosts)
        if exchange.cookieJar != nil {
          current.headers["Cookie"] = exchange.cookieField(
            forRedirectTo: current.url, proposed: current.headers)
        }
      } catch let refusal as RefusedRedirectError {
        exchange.redirectRefused(refusal)
        throw refusal
      }
      exchange.redirectFollowed(status: response.status, location: current.url)
      var hop = response.metrics ?? TransferMetrics()
      hop.redirects = []
      hops.append(hop)
    }
    throw URLError(.httpTooManyRedirects, userInfo: [NSURLErrorFailingURLErrorKey: current.url])
  }
}
