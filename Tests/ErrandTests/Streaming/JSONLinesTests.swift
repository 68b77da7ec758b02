import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct JSONLinesTests {
  @Test(arguments: [false, true])
  func decodesEachLineAsItArrives(crlf: Bool) async throws {
    let ending = crlf ? "\r\n" : "\n"
    let text = #"{"name":"Rex"}"# + ending + ending + #"{"name":"Kuma"}"# + ending
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs.jsonl", .chunks([Data(text.utf8)]))
    var dogs: [Dog] = []
    for try await dog in try await client(stub).jsonLines(Endpoint<Dog>(path: "dogs.jsonl")) {
      dogs.append(dog)
    }
    #expect(dogs == [Dog(name: "Rex"), Dog(name: "Kuma")])
  }

  @Test func aBadLineNamesItsNumberAfterTheGoodOnes() async throws {
    let text = "{\"name\":\"Rex\"}\n{\"name\":7}\n{\"name\":\"Kuma\"}\n"
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs.jsonl", .chunks([Data(text.utf8)]))
    var dogs: [Dog] = []
    let error = await #expect(throws: APIError.self) {
      for try await dog in try await client(stub).jsonLines(Endpoint<Dog>(path: "dogs.jsonl")) {
        dogs.append(dog)
      }
    }
    #expect(dogs == [Dog(name: "Rex")])
    #expect(error?.kind == .decoding)
    let line = try #require(error?.underlyingError as? JSONLineError)
    #expect(line.line == 2)
    #expect(
      error?.localizedDescription.hasPrefix(
        "The body of the HTTP 200 OK answer to GET https://api.example.com/v1/dogs.jsonl could not "
          + "be decoded: line 2: name: expected String") == true)
  }
}
