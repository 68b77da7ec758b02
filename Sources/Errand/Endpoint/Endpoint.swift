import Foundation

/// What to call and how to read the answer: a pure value that an ``APIClient`` turns into a
/// request and, once the response arrives, into a `Value`.
///
/// ```swift
/// let dogs = Endpoint<[Dog]>(method: .get, path: "dogs", query: [URLQueryItem(name: "page", value: "2")])
/// let create = Endpoint<Dog>(method: .post, path: "dogs", body: .json(Dog(name: "Rex")),
///                            requiresAuthentication: true)
/// let remove = Endpoint<Void>(method: .delete, path: "dogs/42")
/// ```
///
/// The path is plain text relative to the client's base URL: `/` separates segments, and every
/// other character that a URL path cannot hold as is (space, `?`, `#`, `%`, `+`, non-ASCII) is
/// percent-encoded. Query names and values are plain text too.
public struct Endpoint<Value>: Sendable {
  /// The request method.
  public var method: HTTPMethod
  /// The path relative to the client's base URL, as plain (not percent-encoded) text.
  public var path: String
  /// An absolute URL to call instead of the base URL and ``path`` (a `Link` header's next page,
  /// a presigned upload URL); ``query`` is added to its own. At another origin than the client's,
  /// the request carries neither the client's secret default headers nor authentication.
  public var url: URL?
  /// The query items, in order, as plain text; an item with a `nil` value is sent as `name` alone.
  public var query: [URLQueryItem]
  /// Headers for this endpoint; they win over the client's default headers.
  public var headers: HTTPHeaders
  /// The body, if any.
  public var body: RequestBody?
  /// Whether the request must carry credentials (authentication middleware reads this).
  public var requiresAuthentication: Bool
  /// The longest the whole call may take, retries and their waits included, or `nil` for the
  /// client's default (``APIClient/Configuration/timeout``).
  public var timeout: Duration?
  /// How to turn the response into the value.
  public var decoding: ResponseDecoding<Value>
  /// The status codes that count as success for this endpoint, or `nil` for the client's.
  public var acceptableStatusCodes: Range<Int>?
  /// Whether sending the request twice is safe, which lets retries repeat it; `nil` leaves it
  /// to the method (`GET`, `PUT`, `DELETE`... are idempotent, `POST` and `PATCH` are not) and to
  /// the ``idempotencyKey``, which makes any method retryable.
  public var isIdempotent: Bool?
  /// The `Idempotency-Key` each call sends, or `nil` for none; see ``withIdempotencyKey(_:)``.
  public var idempotencyKey: IdempotencyKey?
  /// Middleware for this endpoint alone, run inside the client's.
  public var middleware: [any Middleware] = []
  /// A sample response, as the real API would answer (Moya's `sampleData`); test doubles such as
  /// `StubTransport.samples()` can answer with it.
  public var sample: HTTPResponse? {
    get { sampleBox?.value }
    set { sampleBox = newValue.map(Boxed.init) }
  }
  /// ``sample``, held by reference: an endpoint is copied at every step of a call.
  package var sampleBox: Boxed<HTTPResponse>?
  /// The longest response body to accept, in bytes, or `nil` for the client's
  /// ``APIClient/Configuration/maximumResponseSize``.
  public var maximumResponseSize: Int?
  /// How a ``CachingMiddleware`` in the chain treats this endpoint's calls, or `nil` for the
  /// middleware's own ``CachingMiddleware/policy``.
  public var cachePolicy: CachePolicy?
  /// How to read the body of an unacceptable answer into the app's error model, or `nil` for the
  /// client's ``APIClient/Configuration/failureDecoding``; see ``failure(_:decoder:)``.
  public var failureDecoding: FailureDecoding?
  /// Names for this endpoint's calls, by which ``APIClient/cancelAll(tagged:)`` ends them (a
  /// screen's, a user's); listed in ``InFlightCall/tags``. Never sent. See ``tagged(_:)``.
  public var tags: Set<String> = []
  /// Where this endpoint's calls wait when the client's ``APIClient/Configuration/callLimits``
  /// hold calls back: ``CallPriority/userInitiated`` ones first, ``CallPriority/background``
  /// ones last; ``CallPriority/normal`` by default.
  public var priority = CallPriority.normal
  /// Whether this endpoint's calls may share an identical call's exchange when the client
  /// shares them (``APIClient/Configuration/sharesInFlightRequests``); `true` by default. Set it
  /// to `false` for a `GET` that must reach the server each time (a poll that counts, a
  /// request with side effects the server should not have).
  public var sharesInFlight = true
  /// Whether the request leaves for an origin that must not see secrets, whoever adds them: a
  /// next page at another origin. The headers the client's redaction names are removed after the
  /// middleware has run, just before the transport.
  var withholdsSecrets = false

  /// Create an endpoint with an explicit decoding strategy.
  /// - Parameters:
  ///   - method: The request method.
  ///   - path: The path relative to the client's base URL, as plain text.
  ///   - query: The query items, as plain text.
  ///   - headers: Headers that win over the client's defaults.
  ///   - body: The body, if any.
  ///   - requiresAuthentication: Whether the request must carry credentials.
  ///   - timeout: The longest the whole call may take, retries and their waits included, or
  ///     `nil` for the client's default.
  ///   - decoding: How to turn the response into the value.
  ///   - acceptableStatusCodes: The status codes that count as success, or `nil` for the client's.
  public init(
    method: HTTPMethod = .get, path: String, query: [URLQueryItem] = [], headers: HTTPHeaders = [:],
    body: RequestBody? = nil, requiresAuthentication: Bool = false, timeout: Duration? = nil,
    decoding: ResponseDecoding<Value>, acceptableStatusCodes: Range<Int>? = nil
  ) {
    self.method = method
    self.path = path
    self.query = query
    self.headers = headers
    self.body = body
    self.requiresAuthentication = requiresAuthentication
    self.timeout = timeout
    self.decoding = decoding
    self.acceptableStatusCodes = acceptableStatusCodes
  }

  /// A copy of this endpoint that may be retried even if its method is not idempotent, for
  /// example a `POST` the server deduplicates by a field of its body; to send an
  /// `Idempotency-Key`, use ``withIdempotencyKey(_:)``, which makes the endpoint retryable too.
  /// - Returns: The changed endpoint.
  public func retryable() -> Endpoint {
    var copy = self
    copy.isIdempotent = true
    return copy
  }

  /// A copy of this endpoint with one more middleware, run inside those added before.
  /// - Parameter middleware: The middleware.
  /// - Returns: The changed endpoint.
  public func adding(_ middleware: any Middleware) -> Endpoint {
    var copy = self
    copy.middleware.append(middleware)
    return copy
  }

  /// A copy of this endpoint with a sample response.
  /// - Parameters:
  ///   - body: The sample body.
  ///   - status: The sample status.
  ///   - headers: The sample headers.
  /// - Returns: The changed endpoint.
  public func withSample(_ body: Data, status: Int = 200, headers: HTTPHeaders = [:])
    -> Endpoint
  {
    var copy = self
    copy.sample = HTTPResponse(status: status, headers: headers, body: body)
    return copy
  }

  /// A copy of this endpoint that accepts these status codes, whatever the client accepts.
  /// - Parameter codes: The status codes that count as success, for example `200..<400`.
  /// - Returns: The changed endpoint.
  public func accepting(_ codes: Range<Int>) -> Endpoint {
    var copy = self
    copy.acceptableStatusCodes = codes
    return copy
  }
}

extension Endpoint where Value: Decodable {
  /// Create an endpoint whose response body is decoded as JSON with the client's decoder.
  /// - Parameters:
  ///   - method: The request method.
  ///   - path: The path relative to the client's base URL, as plain text.
  ///   - query: The query items, as plain text.
  ///   - headers: Headers that win over the client's defaults.
  ///   - body: The body, if any.
  ///   - requiresAuthentication: Whether the request must carry credentials.
  ///   - timeout: The longest the whole call may take, retries and their waits included, or
  ///     `nil` for the client's default.
  public init(
    method: HTTPMethod = .get, path: String, query: [URLQueryItem] = [], headers: HTTPHeaders = [:],
    body: RequestBody? = nil, requiresAuthentication: Bool = false, timeout: Duration? = nil
  ) {
    self.init(
      method: method, path: path, query: query, headers: headers, body: body,
      requiresAuthentication: requiresAuthentication, timeout: timeout, decoding: .json())
  }
}

extension Endpoint where Value == Void {
  /// Create an endpoint that ignores the response body.
  /// - Parameters:
  ///   - method: The request method.
  ///   - path: The path relative to the client's base URL, as plain text.
  ///   - query: The query items, as plain text.
  ///   - headers: Headers that win over the client's defaults.
  ///   - body: The body, if any.
  ///   - requiresAuthentication: Whether the request must carry credentials.
  ///   - timeout: The longest the whole call may take, retries and their waits included, or
  ///     `nil` for the client's default.
  public init(
    method: HTTPMethod = .get, path: String, query: [URLQueryItem] = [], headers: HTTPHeaders = [:],
    body: RequestBody? = nil, requiresAuthentication: Bool = false, timeout: Duration? = nil
  ) {
    self.init(
      method: method, path: path, query: query, headers: headers, body: body,
      requiresAuthentication: requiresAuthentication, timeout: timeout, decoding: .empty)
  }
}

extension Endpoint where Value == Data {
  /// Create an endpoint whose value is the raw response body.
  /// - Parameters:
  ///   - method: The request method.
  ///   - path: The path relative to the client's base URL, as plain text.
  ///   - query: The query items, as plain text.
  ///   - headers: Headers that win over the client's defaults.
  ///   - body: The body, if any.
  ///   - requiresAuthentication: Whether the request must carry credentials.
  ///   - timeout: The longest the whole call may take, retries and their waits included, or
  ///     `nil` for the client's default.
  public init(
    method: HTTPMethod = .get, path: String, query: [URLQueryItem] = [], headers: HTTPHeaders = [:],
    body: RequestBody? = nil, requiresAuthentication: Bool = false, timeout: Duration? = nil
  ) {
    self.init(
      method: method, path: path, query: query, headers: headers, body: body,
      requiresAuthentication: requiresAuthentication, timeout: timeout, decoding: .data)
  }
}

extension Endpoint where Value == String {
  /// Create an endpoint whose value is the response body as UTF-8 text.
  /// - Parameters:
  ///   - method: The request method.
  ///   - path: The path relative to the client's base URL, as plain text.
  ///   - query: The query items, as plain text.
  ///   - headers: Headers that win over the client's defaults.
  ///   - body: The body, if any.
  ///   - requiresAuthentication: Whether the request must carry credentials.
  ///   - timeout: The longest the whole call may take, retries and their waits included, or
  ///     `nil` for the client's default.
  public init(
    method: HTTPMethod = .get, path: String, query: [URLQueryItem] = [], headers: HTTPHeaders = [:],
    body: RequestBody? = nil, requiresAuthentication: Bool = false, timeout: Duration? = nil
  ) {
    self.init(
      method: method, path: path, query: query, headers: headers, body: body,
      requiresAuthentication: requiresAuthentication, timeout: timeout, decoding: .string)
  }
}

extension Endpoint {
  /// An endpoint for an absolute URL: a page a `Link` header points to, a presigned upload URL.
  ///
  /// ```swift
  /// let next = Endpoint<[Dog]>(url: URL(string: "https://api.example.com/v1/dogs?page=2")!)
  /// ```
  /// It goes through the client's middleware like any other. When its origin (scheme, host and
  /// port) is not the base URL's and its host is not in
  /// ``APIClient/Configuration/trustedHosts``, only the client's default headers that
  /// ``APIClient/Configuration/crossOriginHeaders`` names are sent (`Accept`, `User-Agent`, …)
  /// and authentication middleware does not add credentials
  /// (``RequestContext/requiresAuthentication`` is `false`); the endpoint's own headers are sent
  /// as given.
  /// - Parameters:
  ///   - method: The request method.
  ///   - url: The absolute URL.
  ///   - query: More query items, as plain text.
  ///   - headers: Headers that win over the client's defaults.
  ///   - body: The body, if any.
  ///   - requiresAuthentication: Whether the request must carry credentials (only at the client's
  ///     origin or a host in ``APIClient/Configuration/trustedHosts``).
  ///   - timeout: The longest the whole call may take, retries and their waits included, or
  ///     `nil` for the client's default.
  ///   - decoding: How to turn the response into the value.
  public init(
    method: HTTPMethod = .get, url: URL, query: [URLQueryItem] = [], headers: HTTPHeaders = [:],
    body: RequestBody? = nil, requiresAuthentication: Bool = false, timeout: Duration? = nil,
    decoding: ResponseDecoding<Value>
  ) {
    self.init(
      method: method, path: "", query: query, headers: headers, body: body,
      requiresAuthentication: requiresAuthentication, timeout: timeout, decoding: decoding)
    self.url = url
  }
}

extension Endpoint where Value: Decodable {
  /// An endpoint for an absolute URL whose JSON answer decodes as `Value`; see
  /// ``init(method:url:query:headers:body:requiresAuthentication:timeout:decoding:)``.
  /// - Parameters:
  ///   - method: The request method.
  ///   - url: The absolute URL.
  ///   - query: More query items, as plain text.
  ///   - headers: Headers that win over the client's defaults.
  ///   - requiresAuthentication: Whether the request must carry credentials.
  public init(
    method: HTTPMethod = .get, url: URL, query: [URLQueryItem] = [], headers: HTTPHeaders = [:],
    requiresAuthentication: Bool = false
  ) {
    self.init(
      method: method, url: url, query: query, headers: headers,
      requiresAuthentication: requiresAuthentication, decoding: .json())
  }
}

extension Endpoint where Value == String {
  /// An endpoint for an absolute URL whose answer is read as UTF-8 text, as the `path:` form
  /// reads it; see
  /// ``init(method:url:query:headers:body:requiresAuthentication:timeout:decoding:)``.
  /// - Parameters:
  ///   - method: The request method.
  ///   - url: The absolute URL.
  ///   - query: More query items, as plain text.
  ///   - headers: Headers that win over the client's defaults.
  ///   - requiresAuthentication: Whether the request must carry credentials.
  public init(
    method: HTTPMethod = .get, url: URL, query: [URLQueryItem] = [], headers: HTTPHeaders = [:],
    requiresAuthentication: Bool = false
  ) {
    self.init(
      method: method, url: url, query: query, headers: headers,
      requiresAuthentication: requiresAuthentication, decoding: .string)
  }
}

extension Endpoint where Value == Data {
  /// An endpoint for an absolute URL whose value is the raw answer, as the `path:` form gives
  /// it; see
  /// ``init(method:url:query:headers:body:requiresAuthentication:timeout:decoding:)``.
  /// - Parameters:
  ///   - method: The request method.
  ///   - url: The absolute URL.
  ///   - query: More query items, as plain text.
  ///   - headers: Headers that win over the client's defaults.
  ///   - requiresAuthentication: Whether the request must carry credentials.
  public init(
    method: HTTPMethod = .get, url: URL, query: [URLQueryItem] = [], headers: HTTPHeaders = [:],
    requiresAuthentication: Bool = false
  ) {
    self.init(
      method: method, url: url, query: query, headers: headers,
      requiresAuthentication: requiresAuthentication, decoding: .data)
  }
}

extension Endpoint: CustomStringConvertible {
  /// The method and path as written, for example `GET dogs/42` (or the absolute URL, secrets
  /// hidden); error messages use it.
  public var description: String { description(redactedBy: .default) }

  /// The same, with the absolute URL's secrets hidden by `redaction` (a client's own).
  @inline(__always)  // Inlined, a call reads the fields without the endpoint type's metadata.
  func description(redactedBy redaction: Redaction) -> String {
    "\(method) \(url.map(redaction.redact) ?? path)"
  }

  /// Whether the endpoint's absolute URL is at another origin than `baseURL`, on a host that is
  /// not in `trustedHosts` (lowercased): such a request gets no credentials or secret headers.
  @inline(__always)  // As description(redactedBy:) is.
  func leavesOrigin(of baseURL: URL, trustedHosts: Set<String> = []) -> Bool {
    url.map { url in
      !RedirectPolicy.isSameOrigin(url, baseURL)
        && !trustedHosts.contains(url.host?.lowercased() ?? "")
    } ?? false
  }
}
