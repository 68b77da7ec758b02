import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// The stub kit's lines that tests outside this repository use, compiled as written.
@Suite(.timeLimit(.minutes(3))) struct StubKitContractTests {
  @Test func snippetCompilesAndBehaves() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.get, "/v1/flaky", .sequence([.status(503), .json(Dog(name: "Rex"))]))
    await stub.on(.get, "/v1/slow", StubResponse.json(Dog(name: "Rex")).delayed(by: .seconds(30)))
    let echo = StubTransport { request in .status(201, body: request.body ?? Data(), headers: [:]) }

    let client = APIClient(baseURL: base, transport: stub)
    await #expect(throws: APIError.self) { try await client.send(Endpoint<Dog>(path: "flaky")) }
    #expect(try await client.send(Endpoint<Dog>(path: "flaky")) == Dog(name: "Rex"))
    let slow = Task { try await client.send(Endpoint<Dog>(path: "slow")) }
    try #require(await clock.waitForSleepers())
    await clock.advance(by: .seconds(30))
    #expect(try await slow.cancellableValue == Dog(name: "Rex"))

    let next: HTTPRequest = try await stub.nextRequest()
    #expect(next.url.path == "/v1/flaky")
    let echoed = try await echo.send(HTTPRequest(method: .post, url: base, body: Data("hi".utf8)))
    #expect(echoed.status == 201)
    #expect(echoed.body == Data("hi".utf8))
  }
}
