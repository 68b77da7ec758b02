import Foundation

extension APIClient {
  /// Settings shared by every request a client sends.
  public struct Configuration: Sendable {
    /// Headers added to every request; an endpoint's own headers win.
    public var headers: HTTPHeaders
    /// The encoder for JSON bodies that have none of their own. By default it sorts keys, so
    /// that bodies are the same bytes every time, and does not escape slashes.
    public var encoder: JSONEncoder
    /// The decoder for JSON responses whose endpoint has none of its own.
    public var decoder: JSONDecoder
    /// The longest a call may take when its endpoint sets no timeout; `nil` leaves it to the
    /// transport.
    ///
    /// A deadline for the whole call, counted from when it starts: every exchange, retries and
    /// their waits included. ``RetryMiddleware`` does not start an attempt that could not start
    /// before it, and the error says so. It ends the call on time whatever other calls are doing.
    ///
    /// With `nil`, Errand sets no deadline at all: a server that sends a byte now and then keeps a
    /// call open for ever. `URLSessionTransport` still gives up when no byte arrives for the
    /// session configuration's `timeoutIntervalForRequest` (60 s by default), but nothing bounds
    /// the whole exchange. In a streamed call the timeout bounds each wait for the next chunk.
    ///
    /// The deadline's timer counts time the system is awake (`DispatchTime`, as URLSession's own
    /// timers do): on a device that sleeps mid-call, it fires that much awake time after the call
    /// started, later in wall time. ``RequestContext/remainingTime`` reads the client's clock,
    /// which on Apple platforms goes on during sleep.
    public var timeout: Duration?
    /// The status codes that count as success.
    public var acceptableStatusCodes: Range<Int>
    /// The `User-Agent` header value, `Errand/<version>` by default; `nil` sends none. Like a
    /// default header, it goes to another origin (an absolute-URL endpoint, a redirect) only
    /// while ``crossOriginHeaders`` names `user-agent`, as it does unless changed.
    public var userAgent: String?
    /// Middleware every request goes through, outermost first.
    public var middleware: [any Middleware]
    /// The clock that timeouts run on; `ContinuousClock()` by default. Tests pass a `TestClock`
    /// so that a 60-second timeout fires the moment they advance it.
    public var clock: any Clock<Duration>
    /// The longest response body to accept, in bytes, when an endpoint sets no limit of its own.
    /// A body that crosses it fails with ``APIError/transport(_:)`` carrying
    /// `URLError(.dataLengthExceedsMaximum)` as soon as it is crossed, whether the call collects
    /// the body or streams it.
    ///
    /// `nil` (the default) means ``defaultBufferedResponseLimit`` (100 MB) for calls that collect
    /// the body in memory (`send`, `response(for:)`), so a hostile or broken server cannot exhaust
    /// the app's memory, and no limit for streamed calls and downloads, whose bodies never sit in
    /// memory whole.
    public var maximumResponseSize: Int?

    /// How to read the body of an unacceptable answer into the app's error model when an endpoint
    /// does not say; `nil` (the default) leaves it raw. See ``Endpoint/failure(_:decoder:)``.
    ///
    /// ```swift
    /// var configuration = APIClient.Configuration()
    /// configuration.failureDecoding = .json(Problem.self)
    /// ```
    public var failureDecoding: FailureDecoding?

    /// How many calls the client sends at once, how fast, and in which order the others wait
    /// (``CallLimits``); `nil` (the default) sends every call at once.
    public var callLimits: CallLimits?

    /// Whether identical buffered `GET` and `HEAD` calls in flight at once share one exchange:
    /// same URL, same headers (credentials included) and size limit; `false` by default. Each
    /// caller gets its own copy of the answer and waits within its own deadline; one that leaves
    /// (cancelled, or past its deadline) does not end the exchange for the others, and the last
    /// one to leave cancels it. Streamed calls are never shared (a caller that joins late would
    /// miss what was read already). An endpoint opts out with ``Endpoint/sharesInFlight``.
    ///
    /// With ``callLimits``, the exchange waits at the highest ``CallPriority`` among its callers
    /// (raised when a higher one joins). Each caller's listeners hear the exchange's events
    /// (queued, dequeued, attempts, heads, redirects) as their own call's; one that joins late
    /// hears those already posted first.
    public var sharesInFlightRequests = false

    /// Whether calls made while the network is down wait for it, and where the client learns
    /// that it is (``ConnectivityPolicy``); `nil` (the default) sends every call at once.
    public var connectivity: ConnectivityPolicy?

    /// The longest line a streamed call's ``ResponseStream/lines`` or ``APIClient/jsonLines(_:)``
    /// holds, in bytes, before it throws ``LineTooLongError``: ``defaultMaximumLineLength``
    /// (1 MiB) unless changed. A stream's total length is not limited by it; see
    /// ``maximumResponseSize``. Server-Sent Events have their own limit, ``maximumEventSize``.
    public var maximumLineLength: Int = Configuration.defaultMaximumLineLength

    /// The default ``maximumLineLength``: 1 MiB.
    public static let defaultMaximumLineLength = 1_048_576

    /// The longest Server-Sent Event (its data, type and ID together, and each line of it) that
    /// ``APIClient/events(_:)`` and ``APIClient/events(_:reconnect:onState:)`` hold, in bytes,
    /// before reading throws ``LineTooLongError`` and ends the stream.
    ///
    /// An event is held in memory whole until the blank line that ends it, as a collected body
    /// is, so `nil` (the default) bounds it as a collected body: by ``maximumResponseSize`` when
    /// set, else by ``defaultBufferedResponseLimit`` (100 MB). Real feeds send large events (a
    /// feature-flag service may send its whole flag set as one); while one is read, memory holds
    /// it about twice (the line, and the data built from it). Set a smaller limit for a feed whose
    /// events are known to be small.
    public var maximumEventSize: Int?

    /// The most bytes one event may hold: ``maximumEventSize``, else the collected-body limit.
    var eventSizeLimit: Int {
      max(1, maximumEventSize ?? maximumResponseSize ?? Self.defaultBufferedResponseLimit)
    }

    /// Which headers, query parameters and body fields are secret; ``Redaction/default`` unless
    /// changed. It decides what is hidden wherever Errand prints a request, a response or an
    /// error, what is scrubbed from an error body that echoes it, and which headers stay behind
    /// when a call leaves the client's origin: an absolute-URL endpoint, a next page's `Link`,
    /// or a redirect (every request carries it as ``HTTPRequest/redaction``).
    ///
    /// ```swift
    /// var configuration = APIClient.Configuration(headers: ["PRIVATE-TOKEN": token])
    /// configuration.redaction.headers.insert("PRIVATE-TOKEN")
    /// ```
    public var redaction: Redaction = .default

    /// Hosts at another origin that may still receive the client's default headers and
    /// credentials through an absolute-URL endpoint or a next page's `Link`; none by default.
    /// Compared without case. Redirects have their own list, on the transport
    /// (`trustedRedirectHosts`).
    public var trustedHosts: Set<String> = [] {
      didSet { trustedHosts = Set(trustedHosts.map { $0.lowercased() }) }
    }

    /// The only default ``headers`` sent to an origin that is neither the base URL's nor a
    /// trusted host's (an absolute-URL endpoint, a next page's `Link`): ``crossOriginSafeHeaders``
    /// unless changed. Compared without case, kept lowercased; a header ``redaction`` hides is
    /// never sent there, even if named here.
    ///
    /// Deny by default: an API key in a header of your own (`PRIVATE-TOKEN`, `X-Tenant-Key`)
    /// stays at your origin even if ``redaction`` does not name it.
    ///
    /// ```swift
    /// var configuration = APIClient.Configuration(headers: ["X-Client-Version": "4.2"])
    /// configuration.crossOriginHeaders.insert("X-Client-Version")  // harmless anywhere
    /// ```
    public var crossOriginHeaders: Set<String> = Configuration.crossOriginSafeHeaders {
      didSet { crossOriginHeaders = Set(crossOriginHeaders.map { $0.lowercased() }) }
    }

    /// The default ``crossOriginHeaders``: `Accept`, `Accept-Encoding`, `Accept-Language` and
    /// `User-Agent`, which say how to answer and nothing about who asks.
    public static let crossOriginSafeHeaders: Set<String> = [
      "accept", "accept-encoding", "accept-language", "user-agent",
    ]

    /// Who hears what happens during each call (``CallEvent``), each on a thread of its own
    /// (shared by every client the listener is registered on) so that none can slow a call or
    /// another listener; none by default, and then calls do no work for events. See
    /// ``EventListener`` for the order of events and what happens to a listener that falls
    /// behind.
    ///
    /// ```swift
    /// let client = APIClient(
    ///   baseURL: base, transport: URLSessionTransport(),
    ///   configuration: .init(eventListeners: [SlowCallReporter()]))
    /// ```
    public var eventListeners: [any EventListener] = []

    /// The cookies the client keeps and sends (``CookieJar``); `nil` (the default) keeps none.
    ///
    /// With a jar, every answer's `Set-Cookie` fields are stored in it, the redirects' that the
    /// transport follows included, and every request, each redirect's too, carries the jar's
    /// cookies for its URL: the same on every transport, since URLSession's own cookie handling
    /// is turned off for the client's requests. A `Cookie` field the app sets itself is kept,
    /// and its value wins over a jar cookie of the same name; it follows a redirect only where
    /// the request's other secrets do, and once a hop has left it behind (at another origin) it
    /// stays behind for the rest of the redirects, back at its own origin too.
    ///
    /// One difference between transports remains: URLSession joins a response's `Set-Cookie`
    /// fields into one value, which is split again where a comma is followed by `name=`; a field
    /// whose value holds such a comma (RFC 6265 allows none; a server that reflects input into
    /// a cookie may send one) is read as two cookies there, and as one by `CurlTransport`. Each
    /// is still checked against the URL that answered: neither can reach another site.
    ///
    /// The jar's cookies are added after the middleware chain, before a ``CachingMiddleware``,
    /// so that the cache sees them (an answer that varies on `Cookie` stays with its caller). A
    /// cached answer stores no cookie (a cache keeps no `Set-Cookie`), nor does a revalidation
    /// the cache makes in the background once its call has returned: a cookie the app has
    /// removed meanwhile (at sign-out) stays removed.
    ///
    /// ```swift
    /// var configuration = APIClient.Configuration()
    /// configuration.cookieJar = CookieJar()
    /// ```
    public var cookieJar: CookieJar?

    /// The limit for calls that collect the body in memory when neither the endpoint nor the
    /// configuration sets one: 100 MB.
    public static let defaultBufferedResponseLimit = 100_000_000

    /// The `User-Agent` that Errand sends unless told otherwise, for example `Errand/0.1.0`.
    public static let defaultUserAgent = "Errand/\(errandVersion)"

    /// Create a configuration.
    /// - Parameters:
    ///   - headers: Headers added to every request.
    ///   - encoder: The encoder for JSON bodies; `nil` for Errand's default (sorted keys).
    ///   - decoder: The decoder for JSON responses.
    ///   - timeout: The longest a call may take, retries included, unless its endpoint says
    ///     otherwise.
    ///   - acceptableStatusCodes: The status codes that count as success.
    ///   - userAgent: The `User-Agent` header value, or `nil` to send none.
    ///   - middleware: Middleware every request goes through, outermost first.
    ///   - clock: The clock that timeouts run on.
    ///   - maximumResponseSize: The longest response body to accept; `nil` means
    ///     ``defaultBufferedResponseLimit`` (100 MB) for buffered calls and no limit for streamed
    ///     calls and downloads.
    ///   - eventListeners: Who hears what happens during each call.
    public init(
      headers: HTTPHeaders = [:], encoder: JSONEncoder? = nil, decoder: JSONDecoder = JSONDecoder(),
      timeout: Duration? = .seconds(60), acceptableStatusCodes: Range<Int> = 200..<300,
      userAgent: String? = Configuration.defaultUserAgent, middleware: [any Middleware] = [],
      clock: any Clock<Duration> = ContinuousClock(), maximumResponseSize: Int? = nil,
      eventListeners: [any EventListener] = []
    ) {
      self.eventListeners = eventListeners
      self.headers = headers
      self.encoder = encoder ?? .sorted()
      self.decoder = decoder
      self.timeout = timeout
      self.acceptableStatusCodes = acceptableStatusCodes
      self.userAgent = userAgent
      self.middleware = middleware
      self.clock = clock
      self.maximumResponseSize = maximumResponseSize
    }
  }
}

/// Errand's version, sent in the default `User-Agent`.
let errandVersion = "0.1.0"
