import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Error bodies read into the app's own error model.
@Suite(.timeLimit(.minutes(3))) struct TypedErrorBodyTests {
  struct Problem: Codable, Equatable, Sendable {
    var title: String
    var status: Int
  }

  @Test func anEndpointReadsItsErrorBodyAsTheAppsModel() async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/dogs/7", .json(Problem(title: "No such dog", status: 404), status: 404))
    let error = await #expect(throws: APIError.self) {
      try await client(stub).send(Endpoint<Dog>(path: "dogs/7").failure(Problem.self))
    }
    #expect(error?.kind == .unacceptableStatus)
    #expect(error?.decodedBody(as: Problem.self) == Problem(title: "No such dog", status: 404))
    #expect(
      error?.response?.decodedFailure as? Problem == Problem(title: "No such dog", status: 404))
  }

  @Test func aClientWideDefaultAppliesWhereTheEndpointSaysNothing() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs/7", .json(Problem(title: "Gone", status: 410), status: 410))
    var configuration = APIClient.Configuration()
    configuration.failureDecoding = .json(Problem.self)
    let client = APIClient(baseURL: base, transport: stub, configuration: configuration)
    let error = await #expect(throws: APIError.self) {
      try await client.send(Endpoint<Dog>(path: "dogs/7"))
    }
    #expect(error?.response?.decodedFailure as? Problem == Problem(title: "Gone", status: 410))
  }

  @Test func aBodyThatIsNotTheModelStaysRaw() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs/7", .status(500, body: Data("database down".utf8)))
    let error = await #expect(throws: APIError.self) {
      try await client(stub).send(Endpoint<Dog>(path: "dogs/7").failure(Problem.self))
    }
    #expect(error?.kind == .unacceptableStatus)
    #expect(error?.response?.body == Data("database down".utf8))
    #expect(error?.decodedBody(as: Problem.self) == nil)
    #expect(error?.response?.decodedFailure == nil)
  }

  @Test func aStreamedCallReadsItsErrorBodyToo() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/feed", .json(Problem(title: "Slow down", status: 429), status: 429))
    let error = await #expect(throws: APIError.self) {
      _ = try await client(stub).stream(
        Endpoint<Data>(path: "feed", decoding: .data).failure(Problem.self))
    }
    #expect(error?.decodedBody(as: Problem.self)?.title == "Slow down")
  }

  @Test func otherErrorsHaveNoDecodedBody() {
    #expect(APIError.timedOut.decodedBody(as: Problem.self) == nil)
  }

  @Test func aContractStatesErrorBodiesWithTheSameType() async throws {
    let contract = Contract(
      "Dogs API",
      [
        .status(
          "unknown dog", Endpoint<Dog>(path: "dogs/999"), 404,
          failure: Problem(title: "No such dog", status: 404))
      ])
    // The stub the contract makes answers with the typed body...
    let stub = contract.stub(baseURL: base)
    let error = await #expect(throws: APIError.self) {
      try await client(stub).send(Endpoint<Dog>(path: "dogs/999").failure(Problem.self))
    }
    #expect(error?.decodedBody(as: Problem.self) == Problem(title: "No such dog", status: 404))
    // ...and the check holds a server to it.
    let server = StubTransport()
    await server.on(.get, "/v1/dogs/999", .json(Problem(title: "Gone", status: 404), status: 404))
    let violations = await contract.violations(against: server, baseURL: base)
    #expect(violations.count == 1)
    #expect(violations.first?.description.contains(#""title":"Gone""#) == true)
    #expect(await contract.violations(against: contract.stub(baseURL: base), baseURL: base).isEmpty)
  }
}
