import DogPatch
import Errand
import ErrandTesting
import Foundation
import Testing

/// The TDD chapter's DogPatch tests, on the stub kit.
@Suite(.timeLimit(.minutes(3))) struct DogPatchClientTests {
  static let base = URL(string: "https://api.dogpatch.example/v1")!

  private func client(_ answer: StubResponse) async -> (DogPatchClient, StubTransport) {
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs", answer)
    return (DogPatchClient(baseURL: Self.base, transport: stub), stub)
  }

  @Test func keepsTheBaseURLAndTransport() async throws {
    let (client, stub) = await client(.status(200))
    #expect(client.baseURL == Self.base)
    #expect(client.api.transport as? StubTransport === stub)
  }

  @Test func getDogsCallsGETOnTheDogsURL() async throws {
    let (client, stub) = await client(.fixture("dogs.json"))
    _ = try await client.getDogs()
    let sent = try await stub.nextRequest()
    #expect(sent.method == .get)
    #expect(sent.url.absoluteString == "https://api.dogpatch.example/v1/dogs")
    #expect(sent.headers["Authorization"] == nil)
  }

  @Test func validJSONDecodesToDogs() async throws {
    let (client, _) = await client(.fixture("dogs.json"))
    let dogs = try await client.getDogs()
    #expect(dogs.map(\.name) == ["Rex", "Bella", "Kuma"])
    #expect(dogs.first == Dog(id: 1, name: "Rex", breed: "Labrador", age: 3, price: 850))
  }

  @Test(arguments: [400, 404, 500, 503])
  func anHTTPErrorStatusGivesAnErrorAndNoDogs(status: Int) async throws {
    let (client, _) = await client(.status(status, body: Data("nope".utf8)))
    let error = await #expect(throws: APIError.self) { try await client.getDogs() }
    guard case .unacceptableStatus(let response) = error else {
      Issue.record("expected unacceptableStatus, got \(String(describing: error))")
      return
    }
    #expect(response.status == status)
  }

  @Test(arguments: [
    URLError.Code.notConnectedToInternet, .cannotConnectToHost, .networkConnectionLost,
  ])
  func aTransportErrorIsPassedThrough(code: URLError.Code) async throws {
    let (client, _) = await client(.error(URLError(code)))
    let error = await #expect(throws: APIError.self) { try await client.getDogs() }
    guard case .transport(let underlying) = error else {
      Issue.record("expected transport, got \(String(describing: error))")
      return
    }
    #expect((underlying as? URLError)?.code == code)
  }

  @Test(arguments: ["error", "{}", #"[{"id":1}]"#, ""])
  func invalidJSONIsRejected(body: String) async throws {
    let (client, _) = await client(.status(200, body: Data(body.utf8)))
    let error = await #expect(throws: APIError.self) { try await client.getDogs() }
    guard case .decoding = error else {
      Issue.record("expected decoding, got \(String(describing: error))")
      return
    }
  }

  @Test func theOwnerEndpointSendsTheToken() async throws {
    let stub = StubTransport()
    await stub.on(
      .header("Authorization", "Bearer t0k3n") && .path("/v1/me"),
      .status(200, body: Data(#"{"name":"Ann","favourites":[1]}"#.utf8)))
    await stub.on(.get, "/v1/me", .json(["name": "Ann"], status: 401))
    let client = DogPatchClient(baseURL: Self.base, transport: stub, token: "t0k3n")
    let owner = try await client.getOwner()
    #expect(owner.favourites == [1])
    #expect(try await stub.nextRequest().headers["Authorization"] == "Bearer t0k3n")
  }

  @Test @MainActor func resultsArriveOnTheMainActor() async throws {
    let (client, _) = await client(.fixture("dogs.json"))
    let dogs = try await client.getDogs()
    MainActor.assertIsolated()
    #expect(dogs.count == 3)
  }

  enum Outcome: String, CaseIterable, Sendable {
    case dogs, status, transport, decoding

    var answer: StubResponse {
      switch self {
      case .dogs: .fixture("dogs.json")
      case .status: .status(500)
      case .transport: .connectionLost
      case .decoding: .invalidJSON
      }
    }
  }

  @Test(arguments: Outcome.allCases)
  func completionRunsOnTheResponseQueueOnceInEveryCase(outcome: Outcome) async throws {
    let (client, _) = await client(outcome.answer)
    let key = DispatchSpecificKey<String>()
    let queue = DispatchQueue(label: "dogpatch.response-queue")
    queue.setSpecific(key: key, value: "response")
    let calls = Locked(0)
    let (onQueue, succeeded): (Bool, Bool) = await withCheckedContinuation { continuation in
      client.getDogs(queue: queue) { result in
        calls.withLock { $0 += 1 }
        continuation.resume(
          returning: (DispatchQueue.getSpecific(key: key) == "response", (try? result.get()) != nil)
        )
      }
    }
    #expect(onQueue)
    #expect(succeeded == (outcome == .dogs))
    // Every block queued on the response queue so far has run once this one does.
    await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
    #expect(calls.withLock { $0 } == 1)
  }

  @Test func theFeedYieldsEachNewDogAsItIsListed() async throws {
    let clock = TestClock()
    let stub = StubTransport(clock: clock)
    let milo = Dog(id: 4, name: "Milo", breed: "Dachshund", age: 1, price: 700)
    let luna = Dog(id: 5, name: "Luna", breed: "Beagle", age: 4, price: 950.5)
    func event(_ dog: Dog) throws -> ServerSentEvent {
      ServerSentEvent(
        event: "dog", data: String(decoding: try JSONEncoder().encode(dog), as: UTF8.self))
    }
    await stub.on(
      .get, "/v1/dogs/feed",
      .events(
        [try event(milo), ServerSentEvent(event: "notice", data: "hello"), try event(luna)],
        interval: .seconds(60)))
    let feed = try await DogPatchClient(baseURL: Self.base, transport: stub).newDogs()
    var dogs = feed.makeAsyncIterator()
    #expect(try await dogs.next() == milo)
    let next = Task { [dogs] in
      var dogs = dogs
      return try await dogs.next()
    }
    try #require(await clock.waitForSleepers(1))
    await clock.advance(by: .seconds(60))
    try #require(await clock.waitForSleepers(1))
    await clock.advance(by: .seconds(60))
    #expect(try await next.value == luna)
  }

  @Test func aDogEventThatIsNotADogIsADecodingError() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs/feed", .events([ServerSentEvent(event: "dog", data: "{}")]))
    let feed = try await DogPatchClient(baseURL: Self.base, transport: stub).newDogs()
    let error = await #expect(throws: APIError.self) {
      for try await _ in feed {}
    }
    #expect(error?.kind == .decoding)
  }
}
