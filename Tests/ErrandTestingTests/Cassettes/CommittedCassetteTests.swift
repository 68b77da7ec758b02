import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// `Fixtures/cassettes/dogpatch.json`, committed, replayed offline.
@Suite(.timeLimit(.minutes(3))) struct CommittedCassetteTests {
  struct Listing: Decodable, Equatable {
    var id: Int
    var name: String
    var breed: String
    var age: Int
    var price: Decimal
  }

  struct Owner: Decodable, Equatable {
    var name: String
    var favourites: [Int]
  }

  @Test func replaysTheDogPatchCassette() async throws {
    let cassette = CassetteTransport(named: "dogpatch", mode: .none)
    let client = APIClient(
      baseURL: URL(string: "https://api.dogpatch.example/v1")!, transport: cassette)
    let dogs = try await client.send(Endpoint<[Listing]>(path: "dogs"))
    #expect(dogs.map(\.name) == ["Rex", "Bella", "Kuma"])
    #expect(dogs.map(\.price) == [Decimal(string: "850.00"), Decimal(string: "1200.50"), 1500])
    let owner = try await client.send(
      Endpoint<Owner>(
        path: "me", headers: ["Authorization": "Bearer anything"], requiresAuthentication: true))
    #expect(owner == Owner(name: "Ann", favourites: [1, 3]))
    var events: [ServerSentEvent] = []
    for try await event in try await client.events(
      Endpoint<Data>(path: "dogs/feed", decoding: .data))
    {
      events.append(event)
    }
    #expect(events.map(\.event) == ["dog", "notice", "dog", "dog"])
    #expect(events.map(\.id) == ["4", "4", "5", "6"])
    #expect(await cassette.verifyAllPlayed().isEmpty)
  }

  @Test func theCassetteIsWhereTheNameSays() async throws {
    let cassette = CassetteTransport(named: "dogpatch", mode: .none)
    #expect(cassette.url == (try Fixtures.nearest().url("cassettes/dogpatch.json")))
  }
}
