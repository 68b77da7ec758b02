import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Four common ways of testing networking code (a URLProtocol mock, an injected session,
/// provider-level stubs, a test-driven client), ported to the stub kit: each is a line or two of
/// setup and one assertion.
@Suite(.timeLimit(.minutes(3))) struct MigrationScenarioTests {
  enum Outcome: String, CaseIterable, Sendable {
    case fixtureJSON, serverError, incorrectData, transportError

    var answer: StubResponse {
      switch self {
      case .fixtureJSON: .fixture("dogs.json")
      case .serverError: .status(500)
      case .incorrectData: .status(200, body: Data("error".utf8))
      case .transportError: .error(URLError(.cannotFindHost))
      }
    }

    /// The APIError case, or `nil` for success.
    var expectedError: String? {
      switch self {
      case .fixtureJSON: nil
      case .serverError: "unacceptableStatus"
      case .incorrectData: "decoding"
      case .transportError: "transport"
      }
    }
  }

  struct FixtureDog: Decodable, Equatable {
    var id: Int
    var name: String
  }

  /// A generic request over an injected session, and a test-driven REST client (DogPatch).
  @Test(arguments: Outcome.allCases)
  func getDogs(outcome: Outcome) async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs", outcome.answer)
    do {
      let dogs = try await client(stub).send(Endpoint<[FixtureDog]>(path: "dogs"))
      #expect(outcome.expectedError == nil)
      #expect(dogs.map(\.name) == ["Rex", "Bella", "Kuma"])
    } catch let error as APIError {
      #expect(error.kind.rawValue == outcome.expectedError)
    }
    let sent = try await stub.nextRequest()
    #expect(sent.method == .get)
    #expect(sent.url.absoluteString == "https://api.example.com/v1/dogs")
  }

  /// Endpoint kinds and hosts: a private endpoint carries the bearer token; the envelope is decoded.
  @Test func privateEndpointDecodesAnEnvelope() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/me", .status(200, body: Data(#"{"result":{"name":"Rex"}}"#.utf8)))
    let endpoint = Endpoint<Dog>(
      path: "me", headers: ["Authorization": "Bearer t0k3n"], requiresAuthentication: true,
      decoding: .envelope())
    #expect(try await client(stub).send(endpoint) == Dog(name: "Rex"))
    #expect(try await stub.nextRequest().headers["Authorization"] == "Bearer t0k3n")
  }

  /// Provider-level stubbing: every call answered with 401, as a provider-level stub would.
  @Test func everyCallAnswered401() async throws {
    let client = client(StubTransport { _ in .status(401) })
    for path in ["dogs", "cats", "me"] {
      let error = await #expect(throws: APIError.self) {
        try await client.send(Endpoint<Void>(path: path))
      }
      #expect(error?.kind == .unacceptableStatus)
    }
  }

  /// A test-driven REST client: results reach the main actor.
  @Test @MainActor func resultsArriveOnTheMainActor() async throws {
    let client = client(.stub { $0.on(.get, "/v1/dogs", .json([Dog(name: "Rex")])) })
    let dogs = try await client.send(Endpoint<[Dog]>(path: "dogs"))
    MainActor.assertIsolated()
    #expect(dogs == [Dog(name: "Rex")])
  }
}
