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

  /// Create a client for a base URL.
  /// - Parameters:
  ///   - baseURL: The URL that endpoint paths are joined to; a path such as `/v1` is kept.
  ///   - transport: The transport that sends requests.
  ///   - configuration: Headers, coders, timeout and validation shared by every request.
  public init(
    baseURL: URL, transport: any Transport, configuration: Configuration = Configuration()
  ) {
    self.baseURL = baseURL
    self.transport = transport
    self.configuration = configuration
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
    try await response(for: endpoint).value
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
    let request = try makeRequest(for: endpoint)
    let context = RequestContext(
      endpoint: endpoint.description, requiresAuthentication: endpoint.requiresAuthentication,
      sample: endpoint.sample, isIdempotent: endpoint.isIdempotent ?? endpoint.method.isIdempotent)
    let chain =
      endpoint.middleware.isEmpty
      ? configuration.middleware : configuration.middleware + endpoint.middleware
    var response: HTTPResponse
    do {
      response = try await RequestContext.$current.withValue(context) {
        try await run(request, through: chain[...])
      }
    } catch {
      throw APIError(transportError: error, request: request)
    }
    response.url = response.url ?? request.url
    response.request = request
    try validate(response, for: endpoint)
    return Response(
      value: try decode(response, for: endpoint), response: response, request: request)
  }

  /// Send a request through the middleware chain, then the transport.
  private nonisolated func run(
    _ request: HTTPRequest, through chain: ArraySlice<any Middleware>
  ) async throws -> HTTPResponse {
    guard let first = chain.first else {
      return try await exchange(request)
    }
    return try await first.intercept(request) { next in
      try await run(next, through: chain.dropFirst())
    }
  }

  /// Send a request through the transport within its timeout, mapping failures to ``APIError``.
  private nonisolated func exchange(_ request: HTTPRequest) async throws -> HTTPResponse {
    do {
      return try await withDeadline(request.timeout, on: configuration.clock) { [transport] in
        try await transport.send(request)
      }
    } catch {
      throw APIError(transportError: error, request: request)
    }
  }

  /// Check a response's status against the endpoint's acceptable status codes, else the client's.
  /// - Parameters:
  ///   - response: The response to check.
  ///   - endpoint: The endpoint that asked for it.
  /// - Throws: ``APIError/unacceptableStatus(_:)`` with the response when the status is outside
  ///   the acceptable range.
  public nonisolated func validate<Value>(_ response: HTTPResponse, for endpoint: Endpoint<Value>)
    throws
  {
    let acceptable = endpoint.acceptableStatusCodes ?? configuration.acceptableStatusCodes
    guard acceptable.contains(response.status) else {
      throw APIError.unacceptableStatus(response)
    }
  }

  /// Decode a response with the endpoint's strategy and the client's default JSON decoder.
  /// - Parameters:
  ///   - response: The response to read.
  ///   - endpoint: The endpoint whose strategy to use.
  /// - Returns: The decoded value.
  /// - Throws: ``APIError/decoding(_:_:)`` with the underlying error and the response.
  public nonisolated func decode<Value>(_ response: HTTPResponse, for endpoint: Endpoint<Value>)
    throws -> Value
  {
    do {
      return try endpoint.decoding.decode(response, defaultDecoder: configuration.decoder)
    } catch let error as APIError {
      throw error
    } catch {
      throw APIError.decoding(error, response)
    }
  }
}
