import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct URLBuildingTests {
  @Test(arguments: [
    ("https://api.example.com/v1", "dogs", "https://api.example.com/v1/dogs"),
    ("https://api.example.com/v1/", "dogs", "https://api.example.com/v1/dogs"),
    ("https://api.example.com/v1", "/dogs", "https://api.example.com/v1/dogs"),
    ("https://api.example.com/v1/", "/dogs", "https://api.example.com/v1/dogs"),
    ("https://api.example.com/v1", "//dogs", "https://api.example.com/v1/dogs"),
    ("https://api.example.com", "dogs", "https://api.example.com/dogs"),
    ("https://api.example.com/", "/dogs", "https://api.example.com/dogs"),
    ("https://api.example.com/v1", "", "https://api.example.com/v1"),
    ("https://api.example.com", "", "https://api.example.com/"),
    ("https://api.example.com/v1", "dogs/42/photos", "https://api.example.com/v1/dogs/42/photos"),
    ("https://api.example.com/v1", "dogs/", "https://api.example.com/v1/dogs/"),
    ("http://127.0.0.1:8080", "health", "http://127.0.0.1:8080/health"),
    ("https://api.example.com/v1?key=abc", "dogs", "https://api.example.com/v1/dogs?key=abc"),
    ("https://api.example.com/a%20b", "c", "https://api.example.com/a%20b/c"),
    ("https://api.example.com/v1#top", "dogs", "https://api.example.com/v1/dogs"),
    ("https://api.example.com?x=1", "", "https://api.example.com/?x=1"),
    (
      "https://user:pw@api.example.com:8443/v1", "dogs",
      "https://user:pw@api.example.com:8443/v1/dogs"
    ),
    ("http://[::1]:8080/", "dogs", "http://[::1]:8080/dogs"),
    ("https://bücher.example/v1", "dogs", "https://xn--bcher-kva.example/v1/dogs"),
    ("https://API.Example.COM/V1", "dogs", "https://API.Example.COM/V1/dogs"),
  ])
  func joinsBaseURLAndPath(base: String, path: String, expected: String) throws {
    let request = try makeClient(base).makeRequest(for: Endpoint<Data>(path: path))
    #expect(request.url.absoluteString == expected)
  }

  @Test(arguments: [
    ("rex the dog", "/rex%20the%20dog"),
    ("a+b", "/a%2Bb"),
    ("q?x", "/q%3Fx"),
    ("frag#1", "/frag%231"),
    ("100%", "/100%25"),
    ("café", "/caf%C3%A9"),
    ("🐕", "/%F0%9F%90%95"),
    ("a=b&c", "/a=b&c"),
    ("user@host:1", "/user@host:1"),
    ("tilde~dash-dot.under_", "/tilde~dash-dot.under_"),
    ("x/y z/w", "/x/y%20z/w"),
    ("[brackets]", "/%5Bbrackets%5D"),
    ("back\\slash", "/back%5Cslash"),
    ("quote\"d", "/quote%22d"),
  ])
  func percentEncodesPathSegments(path: String, expectedPath: String) throws {
    let request = try makeClient("https://h.example").makeRequest(for: Endpoint<Data>(path: path))
    #expect(request.url.absoluteString == "https://h.example" + expectedPath)
  }

  @Test(
    arguments: [
      ([("a", "1"), ("b", "2")], "a=1&b=2"),
      ([("q", "rex the dog")], "q=rex%20the%20dog"),
      ([("q", "a+b")], "q=a%2Bb"),
      ([("q", "a&b=c")], "q=a%26b%3Dc"),
      ([("q", "x/y?z")], "q=x/y?z"),
      ([("q", "#tag")], "q=%23tag"),
      ([("q", "café")], "q=caf%C3%A9"),
      ([("q", "100%")], "q=100%25"),
      ([("q", "")], "q="),
      ([("tags", "a"), ("tags", "b")], "tags=a&tags=b"),
      ([("a b", "1")], "a%20b=1"),
      ([("flag", nil)], "flag"),
      ([("flag", nil), ("page", "2")], "flag&page=2"),
    ] as [([(String, String?)], String)])
  func percentEncodesQueryItems(items: [(String, String?)], expectedQuery: String) throws {
    let endpoint = Endpoint<Data>(
      path: "search", query: items.map { URLQueryItem(name: $0.0, value: $0.1) })
    let request = try makeClient().makeRequest(for: endpoint)
    #expect(request.url.absoluteString == "https://api.example.com/v1/search?" + expectedQuery)
  }

  @Test func omitsQueryWhenThereAreNoItems() throws {
    let request = try makeClient().makeRequest(for: Endpoint<Data>(path: "dogs", query: []))
    #expect(request.url.query == nil)
    #expect(request.url.absoluteString == "https://api.example.com/v1/dogs")
  }

  @Test func appendsEndpointQueryAfterBaseQuery() throws {
    let endpoint = Endpoint<Data>(path: "dogs", query: [URLQueryItem(name: "page", value: "2")])
    let request = try makeClient("https://api.example.com/v1?key=k%201").makeRequest(for: endpoint)
    #expect(request.url.absoluteString == "https://api.example.com/v1/dogs?key=k%201&page=2")
  }

  @Test func serverProvidesTheBaseURL() throws {
    let staging = Server("staging", baseURL: url("https://staging.example.com/v2"))
    let client = APIClient(server: staging, transport: .unimplemented())
    let request = try client.makeRequest(for: Endpoint<Data>(path: "dogs"))
    #expect(client.baseURL == staging.baseURL)
    #expect(request.url.absoluteString == "https://staging.example.com/v2/dogs")
    #expect(staging.description == "staging (https://staging.example.com/v2)")
  }
}
