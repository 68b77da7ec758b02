import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// W3C Trace Context: what `traceparent` values are accepted, and what the middleware sends.
@Suite(.timeLimit(.minutes(3))) struct TraceContextTests {
  static let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

  /// The specification's example, and values it says to ignore.
  @Test(arguments: [
    (parent, true),
    ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", true),
    ("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false),  // invalid version
    ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", false),  // all-zero trace
    ("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false),  // all-zero parent
    ("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false),  // uppercase
    ("00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01", false),  // short trace
    ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1", false),  // short flags
    ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", false),  // no flags
    ("", false),
  ])
  func traceparentIsReadAsTheSpecificationSays(_ value: String, _ isValid: Bool) {
    let context = TraceContext(traceparent: value)
    #expect((context != nil) == isValid)
    if let context {
      #expect(context.traceparent == value)
      #expect(context.isSampled == value.hasSuffix("01"))
    }
  }

  /// Each attempt is a new span of the caller's trace, with its state; the trace is the caller's.
  @Test func eachAttemptIsANewSpanOfTheCallersTrace() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs", .sequence([.status(503), .status(200)]))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(middleware: [
        RetryMiddleware(policy: RetryPolicy(maxAttempts: 2, jitter: .none), clock: .immediate),
        TraceContextMiddleware(),
      ]))
    let caller = try #require(TraceContext(traceparent: Self.parent, tracestate: "vendor=1"))
    try await TraceContext.$current.withValue(caller) {
      _ = try await client.send(Endpoint<Data>(path: "dogs", decoding: .data))
    }
    let sent = await stub.requests.compactMap { request in
      request.headers["traceparent"].flatMap {
        TraceContext(traceparent: $0, tracestate: request.headers["tracestate"])
      }
    }
    #expect(sent.count == 2)
    #expect(
      sent.allSatisfy { $0.traceID == caller.traceID && $0.isSampled && $0.state == "vendor=1" })
    #expect(Set(sent.map(\.parentID)).count == 2)
    #expect(!sent.map(\.parentID).contains(caller.parentID))
  }

  /// Outside a trace nothing is sent unless asked to start one; a request's own `traceparent`
  /// stays; a closure can supply the context.
  @Test(arguments: ["outside a trace", "starting traces", "the request's own", "a closure"])
  func whatIsSentDependsOnTheContext(_ setting: String) async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs", .status(200))
    let closure = try #require(TraceContext(traceparent: Self.parent))
    let middleware =
      switch setting {
      case "starting traces": TraceContextMiddleware(startsNewTraces: true)
      case "a closure": TraceContextMiddleware { closure }
      default: TraceContextMiddleware()
      }
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(middleware: [middleware]))
    var endpoint = Endpoint<Data>(path: "dogs", decoding: .data)
    if setting == "the request's own" {
      endpoint.headers["traceparent"] = Self.parent
    }
    _ = try await client.send(endpoint)
    let header = await stub.requests.first?.headers["traceparent"]
    switch setting {
    case "outside a trace":
      #expect(header == nil)
    case "starting traces":
      #expect(header.flatMap { TraceContext(traceparent: $0) } != nil)
    case "the request's own":
      #expect(header == Self.parent)
    default:
      let sent = try #require(header.flatMap { TraceContext(traceparent: $0) })
      #expect(sent.traceID == closure.traceID && sent.parentID != closure.parentID)
    }
  }
}
