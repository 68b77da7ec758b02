import Errand
import Foundation

/// A ``Transport`` that answers from routes registered by the test, without a network.
///
/// Each instance has its own routes and journal, so parallel tests never share state.
///
/// ```swift
/// let stub = StubTransport()
/// await stub.on(.get, "/v1/dogs", .json([Dog(name: "Rex")]))
/// let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, transport: stub)
/// let dogs = try await client.send(Endpoint<[Dog]>(path: "dogs"))
/// let sent = await stub.requests          // every request the stub received
/// ```
///
/// Routes match on method and exact URL path, first registered first. A request that matches no
/// route throws ``UnmatchedRequest``, which names the request and the routes.
public actor StubTransport: Transport {
  /// One registered route.
  struct Route: Sendable {
    var method: HTTPMethod
    var path: String
    var response: StubResponse
  }

  private var routes: [Route] = []
  private let fallback: (@Sendable (HTTPRequest) async throws -> StubResponse)?

  /// Every request received, in order.
  public private(set) var requests: [HTTPRequest] = []

  /// Create a stub with no routes; add them with ``on(_:_:_:)``.
  public init() {
    fallback = nil
  }

  /// Create a stub that answers every request that no route matches with a closure.
  /// - Parameter handler: Sees the request and returns the answer.
  public init(_ handler: @escaping @Sendable (HTTPRequest) async throws -> StubResponse) {
    fallback = handler
  }

  /// Answer requests with this method and URL path.
  /// - Parameters:
  ///   - method: The method to match.
  ///   - path: The URL path to match exactly, for example `/v1/dogs`.
  ///   - response: The answer.
  public func on(_ method: HTTPMethod, _ path: String, _ response: StubResponse) {
    routes.append(Route(method: method, path: path, response: response))
  }

  /// Record the request and answer it from the first matching route.
  /// - Parameter request: The request.
  /// - Returns: The route's response, with the request's URL as its URL.
  /// - Throws: The route's error, or ``UnmatchedRequest``.
  public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
    requests.append(request)
    let answer: StubResponse
    if let route = routes.first(where: {
      $0.method == request.method && $0.path == request.url.path
    }) {
      answer = route.response
    } else if let fallback {
      answer = try await fallback(request)
    } else {
      throw UnmatchedRequest(
        request: request, routes: routes.map { "\($0.method) \($0.path)" })
    }
    switch answer.outcome {
    case .response(var response):
      response.url = response.url ?? request.url
      return response
    case .failure(let error):
      throw error
    }
  }
}

/// A request that matched none of a ``StubTransport``'s routes.
public struct UnmatchedRequest: Error, CustomStringConvertible {
  /// The request that matched nothing.
  public var request: HTTPRequest
  /// The registered routes, as `METHOD /path`.
  public var routes: [String]

  /// Names the request (credentials hidden) and lists the routes.
  public var description: String {
    var text = "StubTransport has no route for \(request.method) \(request.url.absoluteString)"
    let headers = request.headers.description
    if !headers.isEmpty {
      text +=
        "\nheaders:\n" + headers.split(separator: "\n").map { "  \($0)" }.joined(separator: "\n")
    }
    text +=
      routes.isEmpty
      ? "\nno routes are registered"
      : "\nroutes:\n" + routes.map { "  \($0)" }.joined(separator: "\n")
    return text
  }
}
