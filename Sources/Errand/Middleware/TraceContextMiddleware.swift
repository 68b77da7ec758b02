/// Propagates the caller's W3C trace context: each request it sees gets a `traceparent` with
/// the caller's trace and a new span identifier, and the caller's `tracestate`.
///
/// Put it after ``RetryMiddleware`` so that each attempt is its own span. The context comes from
/// ``TraceContext/current`` unless you hand it a closure; without a context it sends nothing,
/// unless `startsNewTraces` says to start one per call. A request that already carries a
/// `traceparent` is left as it is.
///
/// ```swift
/// let client = APIClient(baseURL: base, transport: URLSessionTransport(),
///                        configuration: .init(middleware: [RetryMiddleware(), TraceContextMiddleware()]))
/// ```
///
/// With swift-distributed-tracing, hand it the context the app's instrument injects (Errand does
/// not depend on the package; these lines live in your app):
///
/// ```swift
/// import Tracing
///
/// let tracing = TraceContextMiddleware {
///   var headers: [String: String] = [:]
///   InstrumentationSystem.instrument.inject(
///     ServiceContext.current ?? .topLevel, into: &headers, using: DictionaryInjector())
///   return headers["traceparent"].flatMap { TraceContext(traceparent: $0, tracestate: headers["tracestate"]) }
/// }
///
/// struct DictionaryInjector: Injector {
///   func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
///     carrier[key] = value
///   }
/// }
/// ```
public struct TraceContextMiddleware: Middleware {
  private let context: @Sendable () -> TraceContext?
  private let startsNewTraces: Bool

  /// Create the middleware.
  /// - Parameters:
  ///   - startsNewTraces: Whether a call made outside any trace starts one of its own (a new
  ///     random trace per call); `false` by default, so nothing is sent then.
  ///   - context: The caller's context; ``TraceContext/current`` by default.
  public init(
    startsNewTraces: Bool = false,
    context: @escaping @Sendable () -> TraceContext? = { TraceContext.current }
  ) {
    self.context = context
    self.startsNewTraces = startsNewTraces
  }

  /// Add `traceparent` (a new span of the caller's trace) and `tracestate`, then send.
  public func intercept(
    _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    guard request.headers["traceparent"] == nil,
      let trace = context() ?? (startsNewTraces ? TraceContext.newTrace() : nil)
    else { return try await next(request) }
    var request = request
    let span = trace.childSpan()
    request.headers["traceparent"] = span.traceparent
    if let state = span.state {
      request.headers["tracestate"] = state
    }
    return try await next(request)
  }
}

// Its waits (if any) end when the call's client cancels the call (`CallCancellation`).
extension TraceContextMiddleware: CallCancellationAware {}
