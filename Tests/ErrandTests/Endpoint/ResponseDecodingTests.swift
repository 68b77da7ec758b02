import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct ResponseDecodingTests {
  let client = makeClient()

  private func response(_ body: String, status: Int = 200) -> HTTPResponse {
    HTTPResponse(status: status, body: Data(body.utf8), url: url("https://api.example.com/v1/dogs"))
  }

  /// The decoding failure's description, or `nil` when decoding succeeded or failed otherwise.
  private func decodingFailure<Value>(_ endpoint: Endpoint<Value>, _ response: HTTPResponse)
    -> String?
  {
    do {
      _ = try client.decode(response, for: endpoint)
      return nil
    } catch let APIError.decoding(underlying, failed) {
      #expect(failed == response)
      #expect(underlying is DecodingError)
      return APIError.decoding(underlying, failed).localizedDescription
    } catch {
      return nil
    }
  }

  @Test func decodesJSONFromAFixture() throws {
    let body = try Fixtures.nearest().data("dogs.json")
    let dogs = try client.decode(
      HTTPResponse(status: 200, body: body), for: Endpoint<[FixtureDog]>(path: "dogs"))
    #expect(dogs.map(\.name) == ["Rex", "Bella", "Kuma"])
    #expect(dogs.first == FixtureDog(id: 1, name: "Rex", breed: "Labrador", age: 3))
  }

  @Test func decodesAnEnvelopeFromAFixture() throws {
    let body = try Fixtures.nearest().data("dog-envelope.json")
    let endpoint = Endpoint<FixtureDog>(path: "dogs/1", decoding: .envelope())
    let dog = try client.decode(HTTPResponse(status: 200, body: body), for: endpoint)
    #expect(dog == FixtureDog(id: 1, name: "Rex", breed: "Labrador", age: 3))
  }

  @Test(arguments: [
    (#"{"data":{"name":"Rex"}}"#, "data", "Rex"),
    (#"{"result":{"name":"Bella"},"meta":{"page":1}}"#, "result", "Bella"),
    (#"{"dog":{"name":"Kuma","extra":true}}"#, "dog", "Kuma"),
  ])
  func decodesEnvelopesWithAnyKey(body: String, key: String, name: String) throws {
    let dog = try client.decode(
      response(body), for: Endpoint<Dog>(path: "d", decoding: .envelope(key)))
    #expect(dog == Dog(name: name))
  }

  @Test(arguments: [(204, ""), (205, ""), (200, ""), (204, "ignored")])
  func decodesNoContentAsNilForOptionals(status: Int, body: String) throws {
    let endpoint = Endpoint<Dog?>(path: "d")
    #expect(try client.decode(response(body, status: status), for: endpoint) == nil)
    let enveloped = Endpoint<Dog?>(path: "d", decoding: .envelope())
    #expect(try client.decode(response(body, status: status), for: enveloped) == nil)
  }

  @Test func decodesAPresentOptional() throws {
    #expect(
      try client.decode(response(#"{"name":"Rex"}"#), for: Endpoint<Dog?>(path: "d"))
        == Dog(name: "Rex"))
  }

  @Test(arguments: [
    (#"[{"name":"Rex"},{"name":3}]"#, "[1].name: expected String"),
    (#"[{"name":"Rex"},{}]"#, #"[1].name: missing key "name""#),
    (#"[{"name":null}]"#, "[0].name: expected String, found null"),
    ("not json", "body: The given data was not valid JSON."),
    (#"{"name":"Rex"}"#, "body: expected Array<Any>"),
    ("", "body: the response body is empty; expected JSON for Array<Dog>"),
  ])
  func describesJSONFailuresWithTheirPath(body: String, expectedStart: String) throws {
    let description = try #require(decodingFailure(Endpoint<[Dog]>(path: "dogs"), response(body)))
    let prefix =
      "The body of the HTTP 200 OK answer to https://api.example.com/v1/dogs could not be decoded: "
    #expect(description.hasPrefix(prefix + expectedStart), "\(description)")
  }

  @Test func describesNestedPaths() throws {
    struct Kennel: Decodable { var dogs: [Dog] }
    let body = #"{"dogs":[{"name":"a"},{"name":"b"},{"name":"c"},{"name":false}]}"#
    let description = try #require(decodingFailure(Endpoint<Kennel>(path: "k"), response(body)))
    #expect(description.contains("could not be decoded: dogs[3].name: expected String"))
  }

  @Test(arguments: [
    (#"{"data":{"name":"Rex"}}"#, #"result: missing key "result""#),
    (#"{"result":{"nom":"Rex"}}"#, #"result.name: missing key "name""#),
    (#"{"result":[]}"#, "result: expected Dictionary<String, Any>"),
  ])
  func describesEnvelopeFailuresFromTheKey(body: String, expectedStart: String) throws {
    let description = try #require(
      decodingFailure(Endpoint<Dog>(path: "d", decoding: .envelope()), response(body)))
    #expect(description.contains("could not be decoded: " + expectedStart), "\(description)")
  }

  @Test func usesTheClientsDecoder() throws {
    struct Owner: Decodable, Equatable { var firstName: String }
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    let client = makeClient(configuration: APIClient.Configuration(decoder: decoder))
    let owner = try client.decode(
      response(#"{"first_name":"Ann"}"#), for: Endpoint<Owner>(path: "o"))
    #expect(owner == Owner(firstName: "Ann"))
  }

  @Test func usesTheEndpointsDecoderOverTheClients() throws {
    struct Walk: Decodable, Equatable { var at: Date }
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    let endpoint = Endpoint<Walk>(path: "w", decoding: .json(decoder))
    let walk = try client.decode(response(#"{"at":"2026-11-30T08:00:00Z"}"#), for: endpoint)
    #expect(walk == Walk(at: Date(timeIntervalSince1970: 1_796_025_600)))
  }

  @Test(arguments: ["", "anything at all", #"{"ok":true}"#])
  func voidIgnoresTheBody(body: String) throws {
    try client.decode(response(body), for: Endpoint<Void>(path: "d"))
  }

  @Test(arguments: [Data(), Data([0, 1, 2, 255]), Data("text".utf8)])
  func dataIsTheBodyAsItArrived(body: Data) throws {
    #expect(
      try client.decode(HTTPResponse(status: 200, body: body), for: Endpoint<Data>(path: "d"))
        == body)
  }

  @Test(arguments: ["", "plain text", "café 🐕"])
  func stringIsTheBodyAsUTF8(body: String) throws {
    #expect(try client.decode(response(body), for: Endpoint<String>(path: "d")) == body)
  }

  @Test func stringRejectsInvalidUTF8() throws {
    let invalid = HTTPResponse(status: 200, body: Data([0x66, 0xFF, 0xFE]))
    let description = try #require(decodingFailure(Endpoint<String>(path: "d"), invalid))
    #expect(
      description
        == "The body of the HTTP 200 OK answer could not be decoded: body: the response body is not valid UTF-8 text"
    )
  }

  @Test func customClosureSeesTheWholeResponse() throws {
    let endpoint = Endpoint<Int>(
      path: "d",
      decoding: ResponseDecoding(accept: "text/csv") { response in
        guard let count = response.headers["X-Total-Count"].flatMap(Int.init) else {
          throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "no count"))
        }
        return count
      })
    let counted = HTTPResponse(status: 200, headers: ["x-total-count": "42"])
    #expect(try client.decode(counted, for: endpoint) == 42)
    #expect(try client.makeRequest(for: endpoint).headers["Accept"] == "text/csv")
    #expect(
      decodingFailure(endpoint, HTTPResponse(status: 200))?.hasSuffix("body: no count") == true)
  }

  @Test(arguments: [
    ("json", "application/json"), ("envelope", "application/json"), ("void", "*/*"),
    ("data", "*/*"), ("string", "*/*"),
  ])
  func strategiesAskForTheirMediaType(strategy: String, accept: String) {
    let accepts: [String: String?] = [
      "json": ResponseDecoding<Dog>.json().accept,
      "envelope": ResponseDecoding<Dog>.envelope().accept,
      "void": ResponseDecoding<Void>.empty.accept, "data": ResponseDecoding<Data>.data.accept,
      "string": ResponseDecoding<String>.string.accept,
    ]
    #expect(accepts[strategy] == accept)
  }
}
