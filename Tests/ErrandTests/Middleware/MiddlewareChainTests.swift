import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Records the order in which middleware run, and what they saw.
final class Trace: Sendable {
  private let entries = Locked<[String]>([])

  func append(_ entry: String) { entries.withLock { $0.append(entry) } }
  var all: [String] { entries.withLock { $0 } }
}

/// Tags the request with a header and notes its passage.
struct Tagger: Middleware {
  let name: String
  let trace: Trace

  func intercept(
    _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    trace.append("\(name) in, auth=\(RequestContext.current?.requiresAuthentication == true)")
    var request = request
    request.headers.add("X-Via", name)
    let response = try await next(request)
    trace.append("\(name) out \(response.status)")
    return response
  }
}

@Suite(.timeLimit(.minutes(3))) struct MiddlewareChainTests {
  @Test func runsClientMiddlewareOutermostFirstThenTheEndpoints() async throws {
    let trace = Trace()
    let stub = StubTransport { _ in .status(204) }
    let client = APIClient(
      baseURL: url("https://api.example.com"), transport: stub,
      configuration: APIClient.Configuration(middleware: [
        Tagger(name: "a", trace: trace), Tagger(name: "b", trace: trace),
      ]))
    let endpoint = Endpoint<Void>(path: "d", requiresAuthentication: true).adding(
      Tagger(name: "c", trace: trace))
    try await client.send(endpoint)
    #expect(
      trace.all == [
        "a in, auth=true", "b in, auth=true", "c in, auth=true", "c out 204", "b out 204",
        "a out 204",
      ])
    #expect(try await stub.nextRequest().headers.values(for: "X-Via") == ["a", "b", "c"])
  }

  @Test func middlewareSeesTransportFailuresAsAPIErrors() async throws {
    struct Observer: Middleware {
      let trace: Trace
      func intercept(
        _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
      ) async throws -> HTTPResponse {
        do {
          return try await next(request)
        } catch let error as APIError {
          trace.append("saw \(error.kind)")
          throw error
        }
      }
    }
    let trace = Trace()
    let client = APIClient(
      baseURL: url("https://api.example.com"), transport: StubTransport { _ in .connectionLost },
      configuration: APIClient.Configuration(middleware: [Observer(trace: trace)]))
    await #expect(throws: APIError.self) { try await client.send(Endpoint<Void>(path: "d")) }
    #expect(trace.all == ["saw transport"])
  }
}
