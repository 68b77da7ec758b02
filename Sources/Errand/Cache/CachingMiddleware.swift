import Foundation

/// Answers from an ``HTTPCache`` where RFC 9111 allows it, and stores what the network answers.
///
/// ```swift
/// let cache = HTTPCache()
/// let client = APIClient(baseURL: base, transport: URLSessionTransport(),
///                        configuration: .init(middleware: [CachingMiddleware(cache: cache)]))
/// let first = try await client.response(for: Endpoint<[Dog]>(path: "dogs"))  // .miss: stored
/// let again = try await client.response(for: Endpoint<[Dog]>(path: "dogs"))  // .hit while fresh
/// ```
///
/// A stale response with a validator is revalidated (`If-None-Match`, `If-Modified-Since`); a
/// `304 Not Modified` updates its headers and it comes back as a normal `200` whose
/// ``HTTPResponse/cacheStatus`` is ``CacheStatus/revalidated``. A successful `POST`, `PUT`,
/// `PATCH` or `DELETE` drops what is stored for its URL and for the same-origin `Location` and
/// `Content-Location` it answers with. A request that carries its own `If-None-Match` or
/// `If-Modified-Since` is passed through untouched, and so is an event stream (a request that
/// accepts `text/event-stream` or carries `Last-Event-ID`; an answer of that type is never
/// stored): a reconnection must reach the server. A streamed call (``APIClient/stream(_:)`` and
/// the calls built on it) is answered from the cache like any other, its stored body arriving as
/// one chunk; what it reads from the network is stored once read to the end within the memory
/// budget.
///
/// Wherever it is in the list, it runs after every other middleware, just before the transport:
/// it sees, keys and stores the request exactly as it is sent, with the token
/// ``BearerAuthenticationMiddleware`` or a middleware of your own adds. An answer to a request
/// with credentials (a header, query parameter or URL user its ``HTTPRequest/redaction`` hides)
/// is only ever reused for a request with the same credentials (and an answer to a request
/// without any, for one without any), so clients of different users can share one ``HTTPCache``
/// without seeing each other's answers; it is written to disk only when the cache allows it. Retries, authentication and logging run outside it: a hit is
/// logged, and a retry may be answered from the cache. The policy of a call is the endpoint's
/// ``Endpoint/cachePolicy``, else this middleware's.
public struct CachingMiddleware: Middleware {
  /// Where responses are stored.
  public let cache: HTTPCache
  /// The policy of calls whose endpoint sets none.
  public var policy: CachePolicy

  /// Create the middleware.
  /// - Parameters:
  ///   - cache: Where responses are stored; share one between clients to share what they store.
  ///   - policy: The policy of calls whose endpoint sets none; RFC 9111's rules by default.
  public init(cache: HTTPCache, policy: CachePolicy = .useProtocolRules) {
    self.cache = cache
    self.policy = policy
  }

  /// Answer from the cache, revalidate, or send the request and store the answer, as the call's
  /// policy and RFC 9111 say.
  public func intercept(
    _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    let context = RequestContext.current
    let clock = context?.clock ?? ContinuousClock()
    guard request.method == "GET" else {
      let response = try await next(request)
      invalidate(after: request, answered: response)
      return response
    }
    let control = CacheControl(request.headers)
    let policy = context?.cachePolicy ?? self.policy
    // An event stream (or a reconnection to one) always reaches the server.
    let passesThrough =
      request.headers["If-None-Match"] != nil || request.headers["If-Modified-Since"] != nil
      || CacheEntry.isEventStream(request.headers, accept: true)
      || request.headers["Last-Event-ID"] != nil
    if passesThrough || policy == .reloadIgnoringCache || control.noStore {
      // Offline (the policy, or the request's own `only-if-cached`, RFC 9111 §5.2.1.7): nothing
      // reaches the network, whatever else the request says.
      if policy == .onlyIfCached || control.onlyIfCached {
        return Self.gatewayTimeout(for: request)
      }
      return try await fetch(
        request, next: next, clock: clock,
        storingFor: passesThrough
          ? nil : Self.keyed(request, clientHeaders: context?.clientHeaders ?? []))
    }
    // The request as the store sees it: with a fingerprint of the client's own headers.
    let keyed = Self.keyed(request, clientHeaders: context?.clientHeaders ?? [])
    let entry = cache.lookup(keyed, clock: clock)
    if let entry, entry.satisfies(control), !control.noCache {
      return Self.answer(entry, entry.isFresh ? .hit : .stale, to: request)
    }
    if control.onlyIfCached {
      // Asked for by the request (RFC 9111 §5.2.1.7): only what its directives allow, so never
      // a stale answer the server said to revalidate.
      return Self.gatewayTimeout(for: request)
    }
    switch policy {
    case .returnCacheElseLoad, .onlyIfCached:
      // The request's own `no-cache` (RFC 9111 §5.2.1.4) wins over a policy that prefers the
      // store, unless the call may not reach the network at all.
      if let entry, policy == .onlyIfCached || !control.noCache {
        return Self.answer(entry, entry.isFresh ? .hit : .stale, to: request)
      }
      if policy == .onlyIfCached {
        return Self.gatewayTimeout(for: request)
      }
    case .useProtocolRules, .reloadIgnoringCache:
      break
    }
    guard let entry else {
      return try await fetch(request, next: next, clock: clock, storingFor: keyed)
    }
    // A stale entry is revalidated with its validators, else fetched again.
    let conditional = entry.conditional(request)
    let response: HTTPResponse
    do {
      response = try await next(conditional ?? request)
    } catch {
      // RFC 5861: a stored response may stand in for a failed request to the server (a
      // revalidation or not), not for a call its caller cancelled.
      let cancelled = error is CancellationError || (error as? APIError)?.kind == .cancelled
      guard entry.mayStandInForError, !cancelled else { throw error }
      return Self.answer(entry, .stale, to: request)
    }
    if response.status >= 500, entry.mayStandInForError {
      response.bodyStream?.cancel()
      return Self.answer(entry, .stale, to: request)
    }
    guard conditional != nil else {
      return store(response, for: keyed, clock: clock)
    }
    if response.status == 304, !entry.isSelected(by: response) {
      // RFC 9111 §4.3.4: a 304 whose validator is not the stored one's updates nothing, and
      // says nothing of the stored body: ask again, unconditionally.
      response.bodyStream?.cancel()
      return try await fetch(request, next: next, clock: clock, storingFor: keyed)
    }
    guard response.status == 304,
      let updated = entry.revalidated(
        by: response, clock: clock, heuristic: cache.heuristicFreshness)
    else {
      return store(response, for: keyed, clock: clock)
    }
    response.bodyStream?.cancel()  // a streamed call's 304 has an empty body to let go of
    cache.insert(updated)
    var answer = updated.response
    // A cookie the 304 sets is this caller's, though it is not stored.
    for name in CacheEntry.unstoredHeaders {
      for value in response.headers.values(for: name) {
        answer.headers.add(name, value)
      }
    }
    answer.request = request
    answer.attempts = response.attempts
    answer.cacheStatus = .revalidated
    return answer
  }

  /// Send `request`; store the answer for `keyed` (the request as the store sees it) when
  /// allowed, never when `keyed` is `nil`.
  private func fetch(
    _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse,
    clock: any Clock<Duration>, storingFor keyed: HTTPRequest?
  ) async throws -> HTTPResponse {
    let response = try await next(request)
    guard let keyed else { return response }
    return store(response, for: keyed, clock: clock)
  }

  /// `request` as the store sees it: the client's own default headers that are not safe at any
  /// origin (a tenant's key the redaction may not name) folded into one fingerprint under
  /// ``CacheEntry/clientHeadersKey``, which keeps apart the answers of clients that send
  /// different values. Never sent: the network gets `request`.
  static func keyed(_ request: HTTPRequest, clientHeaders: Set<String>) -> HTTPRequest {
    let own = request.headers.fields.filter {
      clientHeaders.contains($0.name.lowercased()) && !request.redaction.hidesHeader($0.name)
    }
    guard !own.isEmpty else { return request }
    let text = own.map { "\($0.name.lowercased()): \($0.value)" }.sorted().joined(separator: "\n")
    var keyed = request
    keyed.headers[CacheEntry.clientHeadersKey] =
      DiskCacheStore.hash(text, seed: 4) + DiskCacheStore.hash(text, seed: 5)
    return keyed
  }

  /// Store `response` if RFC 9111 allows it, and return it marked as a miss.
  private func store(
    _ response: HTTPResponse, for request: HTTPRequest, clock: any Clock<Duration>
  ) -> HTTPResponse {
    if response.bodyStream != nil {
      var answer = recording(response, for: request, clock: clock)
      answer.cacheStatus = .miss
      return answer
    }
    if let entry = CacheEntry(
      response, for: request, clock: clock, heuristic: cache.heuristicFreshness)
    {
      cache.insert(entry)
    } else if CacheControl(response.headers).noStore {
      cache.invalidate(request.url)
    }
    var answer = response
    answer.cacheStatus = .miss
    return answer
  }

  /// The `504 Gateway Timeout` of a request that may only be answered from the cache and cannot
  /// be (RFC 9111 §5.2.1.7).
  private static func gatewayTimeout(for request: HTTPRequest) -> HTTPResponse {
    var offline = HTTPResponse(status: 504, url: request.url)
    offline.request = request
    offline.cacheStatus = .miss
    return offline
  }

  /// A stored answer, for `request`: its ``HTTPResponse/request`` is the caller's own, never
  /// the request that stored it.
  private static func answer(
    _ entry: CacheEntry, _ status: CacheStatus, to request: HTTPRequest
  ) -> HTTPResponse {
    var answer = entry.response
    answer.request = request
    answer.cacheStatus = status
    return answer
  }

  /// RFC 9111 §4.4: a successful unsafe request drops what is stored for its URL, and for the
  /// `Location` and `Content-Location` it names on the same origin.
  private func invalidate(after request: HTTPRequest, answered response: HTTPResponse) {
    guard !["HEAD", "OPTIONS", "TRACE"].contains(request.method),
      (200..<400).contains(response.status)
    else { return }
    cache.invalidate(request.url)
    for name in ["Location", "Content-Location"] {
      guard let value = response.headers[name],
        let target = URL(string: value, relativeTo: request.url)?.absoluteURL,
        RedirectPolicy.isSameOrigin(target, request.url)
      else { continue }
      cache.invalidate(target)
    }
  }
}
