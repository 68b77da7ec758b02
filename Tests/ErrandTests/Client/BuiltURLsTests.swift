import Foundation
import Testing

@testable import Errand

/// A client keeps the URLs it built for query-less paths: a second call gets the same URL as
/// the first, bytes for bytes, and the set it keeps stays bounded.
@Suite(.timeLimit(.minutes(3))) struct BuiltURLsTests {
  private static let base = URL(string: "https://api.example.com/v1")!

  private static func client() -> APIClient {
    APIClient(baseURL: base, transport: StubTransportless())
  }

  /// Each path built twice, in a client that has built others since: the same URL each time,
  /// as a client that keeps nothing builds it.
  @Test(arguments: [
    "dogs", "/dogs", "dogs/", "", "dogs/42/photos", "a b/ç", "100%", "%2F", "e\u{301}", "\u{E9}",
  ])
  func aPathCalledAgainGetsTheURLItGotFirst(path: String) throws {
    let client = Self.client()
    let first = try client.makeRequest(for: Endpoint<Data>(path: path)).url
    for other in ["cats", "birds", "é"] {
      _ = try client.makeRequest(for: Endpoint<Data>(path: other))
    }
    let again = try client.makeRequest(for: Endpoint<Data>(path: path)).url
    let fresh = try Self.client().makeRequest(for: Endpoint<Data>(path: path)).url
    #expect(again.absoluteString == first.absoluteString)
    #expect(again.absoluteString == fresh.absoluteString)
  }

  /// `é` as one scalar and as `e` with a combining accent are equal Swift strings, but their
  /// percent-encodings differ: each keeps its own.
  @Test func canonicallyEquivalentPathsKeepTheirOwnBytes() throws {
    let client = Self.client()
    let precomposed = try client.makeRequest(for: Endpoint<Data>(path: "caf\u{E9}")).url
    let decomposed = try client.makeRequest(for: Endpoint<Data>(path: "cafe\u{301}")).url
    #expect(precomposed.absoluteString == "https://api.example.com/v1/caf%C3%A9")
    #expect(decomposed.absoluteString == "https://api.example.com/v1/cafe%CC%81")
  }

  /// A path that would leave the endpoint's path is refused every time, not only the first.
  @Test func aRefusedPathIsRefusedEveryTime() throws {
    let client = Self.client()
    for _ in 0..<3 {
      let error = try #require(throws: APIError.self) {
        try client.makeRequest(for: Endpoint<Data>(path: "dogs/../admin"))
      }
      #expect(error.invalidRequestReason?.contains("the path segment \"..\"") == true)
    }
    #expect(client.builtURLs.count == 0)
  }

  /// Ever new paths (an ID in each) keep at most `capacity` URLs; a path longer than
  /// `longestPath` is built every time and never kept.
  @Test func theKeptURLsStayBounded() throws {
    let client = Self.client()
    for id in 0..<(BuiltURLs.capacity * 3 + 7) {
      _ = try client.makeRequest(for: Endpoint<Data>(path: "dogs/\(id)"))
      #expect(client.builtURLs.count <= BuiltURLs.capacity)
    }
    let long = String(repeating: "a", count: BuiltURLs.longestPath + 1)
    let before = client.builtURLs.count
    let url = try client.makeRequest(for: Endpoint<Data>(path: long)).url
    #expect(url.absoluteString == "https://api.example.com/v1/" + long)
    #expect(client.builtURLs.count == before)
  }

  /// Query items are never kept: each call encodes its own, so two calls to one path with
  /// different queries get different URLs.
  @Test func callsWithQueryItemsBuildTheirOwnURL() throws {
    let client = Self.client()
    let one = try client.makeRequest(
      for: Endpoint<Data>(path: "dogs", query: [URLQueryItem(name: "page", value: "1")]))
    let two = try client.makeRequest(
      for: Endpoint<Data>(path: "dogs", query: [URLQueryItem(name: "page", value: "2")]))
    #expect(one.url.absoluteString == "https://api.example.com/v1/dogs?page=1")
    #expect(two.url.absoluteString == "https://api.example.com/v1/dogs?page=2")
    #expect(client.builtURLs.count == 0)
  }

  /// Two clients with different base URLs never see each other's URLs.
  @Test func eachClientKeepsItsOwn() throws {
    let one = APIClient(
      baseURL: URL(string: "https://one.example.com")!, transport: StubTransportless())
    let two = APIClient(
      baseURL: URL(string: "https://two.example.com")!, transport: StubTransportless())
    #expect(try one.makeRequest(for: Endpoint<Data>(path: "me")).url.host == "one.example.com")
    #expect(try two.makeRequest(for: Endpoint<Data>(path: "me")).url.host == "two.example.com")
  }
}

/// A transport that is never called: these tests only build requests.
private struct StubTransportless: Transport {
  func send(_ request: HTTPRequest) async throws -> HTTPResponse {
    throw APIError.invalidRequest("not sent")
  }
}
