import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct StubResponseTests {
  @Test func sequenceAnswersInTurnThenRepeatsTheLast() async throws {
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/flaky", .sequence([.status(503), .status(502), .json(Dog(name: "Rex"))]))
    var statuses: [Int] = []
    for _ in 0..<5 {
      statuses.append(try await stub.send(request(.get, "/v1/flaky")).status)
    }
    #expect(statuses == [503, 502, 200, 200, 200])
  }

  @Test func sequenceDrivesARetryThroughTheClient() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/flaky", .sequence([.status(503), .json(Dog(name: "Rex"))]))
    let client = client(stub)
    let first = await #expect(throws: APIError.self) {
      try await client.send(Endpoint<Dog>(path: "flaky"))
    }
    #expect(first?.kind == .unacceptableStatus)
    #expect(try await client.send(Endpoint<Dog>(path: "flaky")) == Dog(name: "Rex"))
  }

  @Test func handlerSeesTheRequestAndTheCallNumber() async throws {
    let stub = StubTransport()
    await stub.on(
      .post, "/v1/echo",
      .handler { request, call in
        .status(200 + call, body: request.body ?? Data(), headers: ["X-Call": "\(call)"])
      })
    let first = try await stub.send(request(.post, "/v1/echo", body: Data("one".utf8)))
    let second = try await stub.send(request(.post, "/v1/echo", body: Data("two".utf8)))
    #expect([first.status, second.status] == [201, 202] as [Int])
    #expect([first.body, second.body] == [Data("one".utf8), Data("two".utf8)])
    #expect(second.headers["X-Call"] == "2")
  }

  @Test func fixtureAnswersWithTheFilesBytes() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs", .fixture("dogs.json"))
    let response = try await stub.send(request(.get, "/v1/dogs"))
    #expect(response.body == (try Fixtures.nearest().data("dogs.json")))
    #expect(response.headers["Content-Type"] == "application/json")
  }

  @Test func missingFixtureIsThrownWithThePathTried() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/cats", .fixture("cats.json"))
    let error = try await #require(throws: FixtureError.self) {
      _ = try await stub.send(request(.get, "/v1/cats"))
    }
    #expect(error == .fileNotFound("cats.json", path: try Fixtures.nearest().url("cats.json").path))
  }

  @Test(arguments: [
    ("timedOut", StubResponse.timedOut, "timedOut"),
    ("notConnected", .notConnected, "transport"),
    ("connectionLost", .connectionLost, "transport"),
    ("connectionRefused", .connectionRefused, "transport"),
    ("truncated", .truncated([Dog(name: "Rex"), Dog(name: "Bella")]), "transport"),
    ("droppedMidBody", .droppedMidBody(Data("0123456789".utf8)), "transport"),
    ("invalidJSON", .invalidJSON, "decoding"),
    ("status 500", .status(500), "unacceptableStatus"),
    ("error 418", .json(["error": "teapot"], status: 418), "unacceptableStatus"),
  ])
  func presetsBecomeTheRightAPIError(name: String, preset: StubResponse, expectedCase: String)
    async throws
  {
    let client = client(StubTransport { _ in preset })
    let error = await #expect(throws: APIError.self) {
      try await client.send(Endpoint<[Dog]>(path: "dogs"))
    }
    #expect(error?.kind.rawValue == expectedCase, "\(name)")
  }

  @Test(arguments: [
    (StubResponse.notConnected, URLError.Code.notConnectedToInternet),
    (.connectionLost, .networkConnectionLost), (.connectionRefused, .cannotConnectToHost),
  ])
  func networkPresetsThrowTheirURLError(preset: StubResponse, code: URLError.Code) async throws {
    let error = try await #require(throws: URLError.self) {
      _ = try await StubTransport { _ in preset }.send(request(.get, "/x"))
    }
    #expect(error.code == code)
  }

  @Test func aTruncatedBodyStreamsItsFirstHalfThenDrops() async throws {
    let full = try JSONEncoder.sorted().encode([Dog(name: "Rex"), Dog(name: "Bella")])
    let stub = StubTransport { _ in .truncated([Dog(name: "Rex"), Dog(name: "Bella")]) }
    var received = Data()
    let error = await #expect(throws: APIError.self) {
      for try await chunk in try await client(stub).stream(
        Endpoint<Data>(path: "x", decoding: .data))
      {
        received.append(chunk)
      }
    }
    #expect(received == full.prefix(full.count / 2))
    #expect(error?.urlError?.code == .networkConnectionLost)
  }

  @Test func aStallAfterTheHeadersEndsAtTheDeadline() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(.get, "/v1/x", .stalledAfterHeaders(body: Data("part".utf8)))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(timeout: .seconds(30), clock: clock))
    let call = Task { try await client.send(Endpoint<Data>(path: "x", decoding: .data)) }
    try #require(await clock.waitForSleepers(1))
    await clock.advance(by: .seconds(30))
    let error = await #expect(throws: APIError.self) { try await call.cancellableValue }
    #expect(error?.kind == .timedOut)
  }

  @Test func aSlowBodyArrivesPieceByPieceOnTheClock() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    await stub.on(
      .get, "/v1/x", .slowBody(Data("abcdefg".utf8), chunkSize: 3, interval: .seconds(1)))
    let stream = try await client(stub).stream(Endpoint<Data>(path: "x", decoding: .data))
    let reader = Task {
      var pieces: [String] = []
      for try await chunk in stream { pieces.append(String(decoding: chunk, as: UTF8.self)) }
      return pieces
    }
    for _ in 0..<2 {
      try #require(await clock.waitForSleepers(1))
      await clock.advance(by: .seconds(1))
    }
    #expect(try await reader.cancellableValue == ["abc", "def", "g"])
  }
}
