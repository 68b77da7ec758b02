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
/// ``HTTPResponse/cacheStatus`` is ``CacheStatus/revalidated``. Within its
/// `stale-while-revalidate` (RFC 5861) a stale response answers at once, marked
/// ``CacheStatus/stale``, while the cache revalidates it in the background: through the rest of
/// the chain, after the call has returned, with a deadline of its own (the call's timeout, at
/// most ``backgroundRevalidationTimeout``), one at a time for a stored response and at most 16
/// at once for a cache, cancelled when the client goes away (``HTTPCache/waitForRevalidations(timeout:)``
/// waits for them). Within its `stale-if-error`, a stored response stands in for a revalidation
/// that fails: no answer, a connection cut before the body ends (a streamed call's answer is read
/// to its end first, within the memory budget and the call's deadline), or a `5xx`.
///
/// Every answer from the cache carries its current `Age` (RFC 9111 §5.1). A request with its own
/// `If-None-Match` or `If-Modified-Since` is answered from a fresh stored response (a `304` when
/// the caller's copy is current, the stored response when not), and otherwise goes to the server
/// as written (a `304` that confirms the stored response refreshes it). A `206 Partial Content`
/// is never stored; a request for one byte range is answered from a fresh stored whole body with
/// a `206` of that range, and any other `Range` request goes to the server as it is. A
/// successful `POST`, `PUT`, `PATCH` or `DELETE` drops what is stored for its URL and for the
/// same-origin `Location` and `Content-Location` it answers with. An event stream (a request
/// that accepts `text/event-stream` or carries `Last-Event-ID`; an answer of that type is never
/// stored) is passed through untouched: a reconnection must reach the server. A streamed call
/// (``APIClient/stream(_:)`` and the calls built on it) is answered from the cache like any
/// other, its stored body arriving as one chunk; what it reads from the network is stored once
/// read to the end within the memory budget.
///
/// Wherever it is in the list, it runs after every other middleware, just before the transport
/// (only a ``SigningMiddleware`` runs after it, so that a signature is made for each exchange
/// and never keyed): it sees, keys and stores the request as it is sent, with the token
/// ``BearerAuthenticationMiddleware`` or a middleware of your own adds. An answer to a request
/// with credentials (a header, query parameter or URL user its ``HTTPRequest/redaction`` hides)
/// is only ever reused for a request with the same credentials (and an answer to a request
/// without any, for one without any), so clients of different users can share one ``HTTPCache``
/// without seeing each other's answers; it is written to disk only when the cache allows it.
/// Retries, authentication and logging run outside it: a hit is logged, and a retry may be
/// answered from the cache. The policy of a call is the endpoint's
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

  /// The longest a revalidation in the background may take, and its deadline when the call has
  /// no timeout: 60 seconds.
  public static let backgroundRevalidationTimeout: Duration = .seconds(60)

  /// How the middleware sends a request through the rest of the chain after the call has
  /// returned (a revalidation in the background), and whose work that is: given by the client.
  struct Revalidator: Sendable {
    /// The client's work, cancelled when it goes away.
    let work: BackgroundWork
    /// Sends through the rest of the chain, with a deadline of its own.
    let send: @Sendable (HTTPRequest) async throws -> HTTPResponse
  }

  /// Answer from the cache, revalidate, or send the request and store the answer, as the call's
  /// policy and RFC 9111 say.
  public func intercept(
    _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    try await intercept(request, revalidatingWith: nil, next: next)
  }

  /// ``intercept(_:next:)``, able to revalidate in the background through `revalidator` (given
  /// by the client: without one, a response within `stale-while-revalidate` is revalidated before
  /// it answers).
  func intercept(
    _ request: HTTPRequest, revalidatingWith revalidator: Revalidator?,
    next: @Sendable (HTTPRequest) async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    let context = RequestContext.current
    let clock = context?.clock ?? ContinuousClock()
    guard request.method == "GET" else {
      let response = try await next(request)
      await invalidate(after: request, answered: response)
      return response
    }
    let control = CacheControl(request.headers)
    let policy = context?.cachePolicy ?? self.policy
    // An event stream (or a reconnection to one) always reaches the server.
    let passesThrough =
      CacheEntry.isEventStream(request.headers, accept: true)
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
    let entry = await cache.lookup(keyed, clock: clock)
    if let entry, entry.satisfies(control), !control.noCache {
      // A range the stored body cannot serve goes to the server as it is.
      if entry.servesRange(of: request) {
        return entry.answer(to: request, entry.isFresh ? .hit : .stale)
      }
      return try await fetch(request, next: next, clock: clock, storingFor: keyed)
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
        return entry.answer(to: request, entry.isFresh ? .hit : .stale)
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
    if let revalidator, entry.mayServeWhileRevalidating(control), entry.servesRange(of: request) {
      revalidate(entry, for: request, keyed: keyed, through: revalidator, clock: clock)
      return entry.answer(to: request, .stale)
    }
    return try await revalidate(entry, for: request, keyed: keyed, next: next, clock: clock)
  }

  /// Ask the server about a stale `entry` for `request`: with the entry's validators, or, when
  /// the request carries its own conditions or a range, as it is. A `304` about the entry
  /// refreshes it; an error (no answer, or a `5xx`) within `stale-if-error` is answered with it.
  private func revalidate(
    _ entry: CacheEntry, for request: HTTPRequest, keyed: HTTPRequest,
    next: @Sendable (HTTPRequest) async throws -> HTTPResponse, clock: any Clock<Duration>
  ) async throws -> HTTPResponse {
    let asIs = CacheEntry.isConditional(request) || request.headers["Range"] != nil
    let conditional = asIs ? nil : entry.conditional(request)
    let sent = Stopwatch(clock)
    var response: HTTPResponse
    do {
      response = try await next(conditional ?? request)
      if response.bodyStream != nil, response.status != 304, entry.mayStandInForError {
        // A streamed answer is read to its end (within the memory budget, by the call's
        // deadline, or 60 s without one) before the caller sees it, so that one cut short can
        // still be answered from the cache.
        let streamed = response
        let limit = cache.memoryBudget
        let deadline =
          RequestContext.current?.deadline
          ?? RequestDeadline(timeout: Self.backgroundRevalidationTimeout, clock: clock)
        response = try await deadline.race(endedBy: RequestContext.current?.cancellation) {
          try await Self.readingAhead(streamed, upTo: limit)
        }
      }
    } catch {
      // RFC 5861: a stored response may stand in for a failed request to the server (a
      // revalidation or not), not for a call its caller cancelled.
      let cancelled = error is CancellationError || (error as? APIError)?.kind == .cancelled
      guard entry.mayStandInForError, !cancelled else { throw error }
      return entry.answer(to: request, .stale)
    }
    let delay = sent.elapsed
    if (500...599).contains(response.status), entry.mayStandInForError {
      response.bodyStream?.cancel()
      return entry.answer(to: request, .stale)
    }
    if asIs {
      // The caller's own validation: a `304` that confirms what is stored refreshes it too.
      if response.status == 304, entry.isConfirmed(by: response, for: request),
        let updated = refreshed(entry, by: response, clock: clock, delay: delay)
      {
        await cache.insert(updated)
        return response
      }
      return await store(response, for: keyed, clock: clock, delay: delay)
    }
    guard conditional != nil else {
      return await store(response, for: keyed, clock: clock, delay: delay)
    }
    if response.status == 304, !entry.isSelected(by: response) {
      // RFC 9111 §4.3.4: a 304 whose validator is not the stored one's updates nothing, and
      // says nothing of the stored body: ask again, unconditionally.
      response.bodyStream?.cancel()
      return try await fetch(request, next: next, clock: clock, storingFor: keyed)
    }
    guard response.status == 304,
      let updated = refreshed(entry, by: response, clock: clock, delay: delay)
    else {
      return await store(response, for: keyed, clock: clock, delay: delay)
    }
    response.bodyStream?.cancel()  // a streamed call's 304 has an empty body to let go of
    await cache.insert(updated)
    var answer = updated.answer(to: request, .revalidated)
    // A cookie the 304 sets is this caller's, though it is not stored.
    for name in CacheEntry.unstoredHeaders {
      for value in response.headers.values(for: name) {
        answer.headers.add(name, value)
      }
    }
    answer.attempts = response.attempts
    return answer
  }

  /// `entry` refreshed by a `304` that arrived `delay` after its request left.
  private func refreshed(
    _ entry: CacheEntry, by notModified: HTTPResponse, clock: any Clock<Duration>,
    delay: Duration
  ) -> CacheEntry? {
    entry.revalidated(
      by: notModified, clock: clock, heuristic: cache.heuristicFreshness, now: cache.now(),
      responseDelay: delay)
  }

  /// Start revalidating `entry` (stored for `keyed`) in the background, sending `request`
  /// through `revalidator`, unless it is being revalidated already or the cache runs as many as
  /// it may (RFC 5861 §3): the answer then refreshes or replaces what is stored, and an error
  /// leaves it as it is.
  private func revalidate(
    _ entry: CacheEntry, for request: HTTPRequest, keyed: HTTPRequest,
    through revalidator: Revalidator, clock: any Clock<Duration>
  ) {
    // The request as the entry's validators would send it: not the caller's own conditions or
    // range, which concern the caller's answer only. (`keyed` is what the store sees, never
    // sent.)
    var plain = request
    for name in ["If-None-Match", "If-Modified-Since", "Range", "If-Range"] {
      plain.headers.remove(name)
    }
    let request = entry.conditional(plain) ?? plain
    let identity =
      entry.key + "\n"
      + entry.varying.sorted { $0.key < $1.key }
      .map { "\($0.key)=\($0.value ?? "")" }.joined(separator: "\n")
    cache.revalidateInBackground(identity, as: revalidator.work) { [self] in
      let sent = Stopwatch(clock)
      guard let response = try? await revalidator.send(request) else { return }
      let delay = sent.elapsed
      if response.status == 304 {
        if entry.isSelected(by: response),
          let updated = refreshed(entry, by: response, clock: clock, delay: delay)
        {
          await cache.insert(updated)
        }
      } else if !(500...599).contains(response.status) {
        _ = await store(response, for: keyed, clock: clock, delay: delay)
      }
    }
  }

  /// Send `request`; store the answer for `keyed` (the request as the store sees it) when
  /// allowed, never when `keyed` is `nil`.
  private func fetch(
    _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse,
    clock: any Clock<Duration>, storingFor keyed: HTTPRequest?
  ) async throws -> HTTPResponse {
    let sent = Stopwatch(clock)
    let response = try await next(request)
    guard let keyed else { return response }
    return await store(response, for: keyed, clock: clock, delay: sent.elapsed)
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

  /// Store `response`, which arrived `delay` after its request left, if RFC 9111 allows it, and
  /// return it marked as a miss.
  private func store(
    _ response: HTTPResponse, for request: HTTPRequest, clock: any Clock<Duration>,
    delay: Duration
  ) async -> HTTPResponse {
    if response.bodyStream != nil {
      var answer = recording(response, for: request, clock: clock, delay: delay)
      answer.cacheStatus = .miss
      return answer
    }
    if let entry = CacheEntry(
      response, for: request, clock: clock, heuristic: cache.heuristicFreshness, now: cache.now(),
      responseDelay: delay)
    {
      await cache.insert(entry)
    } else if CacheControl(response.headers).noStore {
      await cache.invalidate(request.url)
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

  /// RFC 9111 §4.4: a successful unsafe request drops what is stored for its URL, and for the
  /// `Location` and `Content-Location` it names on the same origin.
  private func invalidate(after request: HTTPRequest, answered response: HTTPResponse) async {
    guard !["HEAD", "OPTIONS", "TRACE"].contains(request.method),
      (200..<400).contains(response.status)
    else { return }
    await cache.invalidate(request.url)
    for name in ["Location", "Content-Location"] {
      guard let value = response.headers[name],
        let target = URL(string: value, relativeTo: request.url)?.absoluteURL,
        RedirectPolicy.isSameOrigin(target, request.url)
      else { continue }
      await cache.invalidate(target)
    }
  }
}

// Its waits end when the call's client cancels the call (`CallCancellation`).
extension CachingMiddleware: CallCancellationAware {}
