import Foundation

/// Sends ``Endpoint``s through a ``Transport`` and returns their decoded values.
///
/// ```swift
/// let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, transport: URLSessionTransport())
/// let dogs: [Dog] = try await client.send(Endpoint<[Dog]>(method: .get, path: "dogs"))
/// ```
///
/// Every step is a plain function that tests can call on its own: ``makeRequest(for:)`` builds
/// the request without sending it, ``validate(_:for:)`` checks the status and
/// ``decode(_:for:)`` reads the body. Everything `send` throws is an ``APIError``.
public actor APIClient {
  /// The URL that endpoint paths are joined to.
  public nonisolated let baseURL: URL
  /// The transport that sends requests.
  public nonisolated let transport: any Transport
  /// Settings shared by every request.
  public nonisolated let configuration: Configuration
  /// The base URL split once, for building request URLs; `nil` when it has no scheme or host.
  nonisolated let baseParts: BaseURLParts?
  /// The URLs built for endpoint paths without query items, kept for the next call.
  nonisolated let builtURLs = BuiltURLs()
  /// The transport, when it takes each request with its exchange (and so enforces deadlines
  /// itself): called directly, without a racing task.
  nonisolated let exchangeTransport: (any ExchangeTransport)?
  /// One per listener in the configuration, each posting to its listener's shared mailbox.
  nonisolated let eventDispatchers: [EventDispatcher]
  /// What the client's calls leave running once they return (a cache's revalidation in the
  /// background): cancelled when the client goes away.
  nonisolated let backgroundWork = BackgroundWork()
  /// The calls running now, for ``cancelAll()`` and ``inFlight``.
  nonisolated let calls = CallRegistry()
  /// Holds the client's exchanges to its ``Configuration/callLimits``, when it has any.
  nonisolated let limiter: CallLimiter?
  /// Shares identical calls' exchanges, when ``Configuration/sharesInFlightRequests`` says so.
  nonisolated let sharing: InFlightSharing?
  /// Holds the client's calls while the network is down, when its
  /// ``Configuration/connectivity`` says so.
  nonisolated let connectivityGate: ConnectivityGate?
  /// Whether the transport and the client's middleware are all Errand's own, whose waits end
  /// when ``cancelAll()`` cancels a call: its calls then run in their caller's task.
  nonisolated let endsItsOwnWaits: Bool
  /// The configuration's middleware in the order it runs (``ordered(_:)``), worked out once.
  nonisolated let orderedMiddleware: [any Middleware]
  /// The lowercased names of the client's default headers that are not safe at every origin
  /// (``RequestContext/clientHeaders``), worked out once.
  nonisolated let clientHeaderNames: Set<String>

  /// Create a client for a base URL.
  /// - Parameters:
  ///   - baseURL: The URL that endpoint paths are joined to; a path such as `/v1` is kept.
  ///   - transport: The transport that sends requests.
  ///   - configuration: Headers, coders, timeout and validation shared by every request.
  public init(
    baseURL: URL, transport: any Transport, configuration: Configuration = Configuration()
  ) {
    self.baseURL = baseURL
    self.baseParts = BaseURLParts(baseURL)
    self.transport = transport
    self.exchangeTransport = transport as? any ExchangeTransport
    self.configuration = configuration
    self.eventDispatchers = configuration.eventListeners.map(EventDispatcher.init)
    self.sharing = configuration.sharesInFlightRequests ? InFlightSharing() : nil
    self.limiter = configuration.callLimits.map {
      CallLimiter(limits: $0, clock: configuration.clock)
    }
    self.connectivityGate = configuration.connectivity.map {
      ConnectivityGate(policy: $0, clock: configuration.clock)
    }
    self.endsItsOwnWaits =
      transport is any CallCancellationAware
      && configuration.middleware.allSatisfy { $0 is any CallCancellationAware }
    self.orderedMiddleware = Self.ordered(configuration.middleware)
    self.clientHeaderNames = Set(
      configuration.headers.fields.map { $0.name.lowercased() }
        + (configuration.userAgent == nil ? [] : ["user-agent"])
    ).subtracting(configuration.crossOriginHeaders)
  }

  deinit {
    backgroundWork.cancelAll()
  }

  /// Create a client for a server environment.
  /// - Parameters:
  ///   - server: The environment whose base URL endpoint paths are joined to.
  ///   - transport: The transport that sends requests.
  ///   - configuration: Headers, coders, timeout and validation shared by every request.
  public init(
    server: Server, transport: any Transport, configuration: Configuration = Configuration()
  ) {
    self.init(baseURL: server.baseURL, transport: transport, configuration: configuration)
  }

  /// Send an endpoint's request and return its decoded value.
  /// - Parameter endpoint: What to call and how to read the answer.
  /// - Returns: The decoded value.
  /// - Throws: ``APIError``.
  public nonisolated func send<Value>(_ endpoint: Endpoint<Value>) async throws -> Value {
    try await response(for: endpoint, as: Exchange.buffered).value
  }

  /// Send an endpoint's request and return its decoded value with the request and response.
  ///
  /// It runs outside the actor, so concurrent calls decode in parallel.
  /// - Parameter endpoint: What to call and how to read the answer.
  /// - Returns: The value, the response and the request as sent.
  /// - Throws: ``APIError``.
  public nonisolated func response<Value>(for endpoint: Endpoint<Value>) async throws -> Response<
    Value
  > {
    try await response(for: endpoint, as: Exchange.buffered)
  }

  /// ``response(for:)``, made as `exchange` says; listed as `registration` when the call was
  /// registered before (a call made with a completion handler, listed when it was made).
  nonisolated func response<Value>(
    for endpoint: Endpoint<Value>, as exchange: Exchange,
    registeredAs registration: CallRegistration? = nil
  ) async throws -> Response<Value> {
    let registration = registration ?? register(endpoint, as: .buffered)
    defer { registration.end() }
    // The request once built, for the error of a call that fails: a call that `cancelAll()`
    // counted before it failed (its request found invalid, its exchange failing as the client
    // cancelled it) leaves the list as it learns it, and ends as cancelled.
    var built: HTTPRequest?
    guard let events = beginEvents(for: endpoint) else {
      do {
        let request = try makeRequest(for: endpoint)
        built = request
        let response = try await run(
          request, for: endpoint, as: exchange, registeredAs: registration)
        let value = try read(response, for: endpoint, request: request, as: registration)
        return Response(value: value, response: response, request: request)
      } catch {
        throw registration.ending(with: error, request: built)
      }
    }
    do {
      let request = try makeRequest(for: endpoint)
      built = request
      events.requestBuilt(request)
      var exchange = exchange
      exchange.events = events
      let response = try await run(
        request, for: endpoint, as: exchange, registeredAs: registration)
      let value = try read(response, for: endpoint, request: request, as: registration)
      events.ended(response)
      return Response(value: value, response: response, request: request)
    } catch {
      let error = registration.ending(with: error, request: built)
      events.failed(error)
      throw error
    }
  }

  /// Validate and decode a buffered call's answer, then take the call off the list. A call its
  /// client cancelled meanwhile (while its value or its error was being read) ends as
  /// cancelled, as ``cancelAll()`` counted it.
  private nonisolated func read<Value>(
    _ response: HTTPResponse, for endpoint: Endpoint<Value>, request: HTTPRequest,
    as registration: CallRegistration
  ) throws -> Value {
    let value: Value
    do {
      try validate(response, for: endpoint)
      value = try decode(response, for: endpoint)
    } catch {
      if registration.finish() { throw CallRegistration.cancelled(request) }
      throw error
    }
    if registration.finish() { throw CallRegistration.cancelled(request) }
    return value
  }

  /// The events of a call to `endpoint`, begun; `nil` when the client has no listeners.
  nonisolated func beginEvents<Value>(for endpoint: Endpoint<Value>) -> CallEventSink? {
    guard !eventDispatchers.isEmpty else { return nil }
    return CallEventSink(
      endpoint: endpoint.description(redactedBy: configuration.redaction),
      dispatchers: eventDispatchers, clock: configuration.clock,
      redaction: configuration.redaction)
  }
}
