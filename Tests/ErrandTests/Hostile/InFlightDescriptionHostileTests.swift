import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Probes of what `inFlight` prints: an app logs it at sign-out or in a crash report, so no
/// secret a call carries (in its URL's user info, a query value its client redacts, a link the
/// server wrote, an idempotency key, a header) may show, for any kind of call.
@Suite(.timeLimit(.minutes(3))) struct InFlightDescriptionHostileTests {
  /// Where a secret sits in a call.
  enum Secret: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case userInfo, defaultQueryName, clientsQueryName, nextPageLink, reconnectingQuery
    case headerAndKey
    var testDescription: String { rawValue }

    /// Start a call carrying the secret `SECRET-1` on `client`, which keeps running.
    func start(on client: APIClient) -> Task<Void, any Error> {
      switch self {
      case .userInfo, .defaultQueryName, .clientsQueryName:
        var endpoint = Endpoint<Data>(path: "", decoding: .data)
        endpoint.url = url(
          self == .userInfo
            ? "https://SECRET-1@api.example.com/v1/hang"
            : self == .defaultQueryName
              ? "https://api.example.com/v1/hang?api_key=SECRET-1&page=2"
              : "https://api.example.com/v1/hang?session=SECRET-1")
        return Task { _ = try await client.send(endpoint) }
      case .nextPageLink:
        return Task {
          for try await _ in client.pages(Endpoint<Data>(path: "first", decoding: .data)) {}
        }
      case .reconnectingQuery:
        return Task {
          let events = client.events(reconnect: .default) { _ in
            var endpoint = Endpoint<Data>(path: "", decoding: .data)
            endpoint.url = url("https://api.example.com/v1/sse?token=SECRET-1")
            return endpoint
          }
          for try await _ in events {}
        }
      case .headerAndKey:
        let endpoint = Endpoint<Data>(
          method: .post, path: "hang", headers: ["X-API-Key": "SECRET-1"], decoding: .data
        ).withIdempotencyKey(.fixed("SECRET-1"))
        return Task { _ = try await client.send(endpoint) }
      }
    }

    /// How many calls are listed once it runs.
    var listed: Int { self == .reconnectingQuery ? 2 : 1 }
    /// What every listed call's endpoint names once the call carrying the secret runs.
    var path: String { self == .reconnectingQuery ? "sse" : "hang" }
  }

  /// Whatever the call and wherever its secret sits, what `inFlight` prints of it has none.
  @Test(arguments: Secret.allCases)
  func inFlightPrintsNoSecret(_ secret: Secret) async throws {
    let stub = StubTransport()
    await stub.on(
      .path("/v1/first"),
      .status(
        200, body: Data(),
        headers: ["Link": "<https://api.example.com/v1/hang?access_token=SECRET-1>; rel=next"]))
    await stub.on(
      .path("/v1/sse"), .stalledAfterHeaders(headers: ["Content-Type": "text/event-stream"]))
    await stub.on(.any, .hang)
    var configuration = APIClient.Configuration(timeout: nil)
    configuration.redaction.queryParameters.insert("session")
    let client = APIClient(baseURL: base, transport: stub, configuration: configuration)
    let call = secret.start(on: client)
    defer { call.cancel() }
    #expect(
      await eventually {
        let listed = client.inFlight
        return listed.count == secret.listed
          && listed.allSatisfy { $0.endpoint.contains(secret.path) }
      })
    let printed =
      client.inFlight.map(\.description) + client.inFlight.map(\.endpoint)
      + client.inFlight.map { String(reflecting: $0) }
    #expect(printed.allSatisfy { !$0.contains("SECRET-1") }, "\(printed)")
    #expect(client.cancelAll() == secret.listed)
    await expectCancelled(call)
  }
}
