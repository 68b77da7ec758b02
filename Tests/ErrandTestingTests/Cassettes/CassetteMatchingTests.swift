import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct CassetteMatchingTests {
  /// A cassette holding one GET of `/dogs?a=1&b=2` with a header and a JSON body.
  private func recorded() async throws -> URL {
    let file = temporaryCassette()
    let recorder = CassetteTransport(
      url: file, mode: .all, upstream: StubTransport { _ in .status(204) })
    _ = try await recorder.send(
      HTTPRequest(
        method: .post, url: URL(string: "https://x.example/dogs?a=1&b=2")!,
        headers: ["X-Version": "2", "Content-Type": "application/json"],
        body: Data(#"{"a":1,"b":2}"#.utf8)))
    return file
  }

  @Test(
    arguments: [
      (
        "same request", "POST", "https://x.example/dogs?a=1&b=2", ["X-Version": "2"],
        #"{"a":1,"b":2}"#, CassetteTransport.Matching.default, true
      ),
      ("query in another order", "POST", "https://x.example/dogs?b=2&a=1", [:], "", .default, true),
      ("another query value", "POST", "https://x.example/dogs?a=1&b=3", [:], "", .default, false),
      (
        "an extra query item", "POST", "https://x.example/dogs?a=1&b=2&c=3", [:], "", .default,
        false
      ),
      ("another method", "PUT", "https://x.example/dogs?a=1&b=2", [:], "", .default, false),
      ("another path", "POST", "https://x.example/cats?a=1&b=2", [:], "", .default, false),
      (
        "another host, same path", "POST", "https://y.example/dogs?a=1&b=2", [:], "", .default, true
      ),
      ("method and path only", "POST", "https://x.example/dogs", [:], "", [.method, .path], true),
      (
        "headers required and present", "POST", "https://x.example/dogs?a=1&b=2",
        ["X-Version": "2", "Content-Type": "application/json"], "", [.method, .path, .headers], true
      ),
      (
        "headers required and different", "POST", "https://x.example/dogs?a=1&b=2",
        ["X-Version": "3", "Content-Type": "application/json"], "", [.method, .headers], false
      ),
      (
        "body required, same JSON reordered", "POST", "https://x.example/dogs", [:],
        #"{"b":2,"a":1}"#, [.body], true
      ),
      (
        "body required and different", "POST", "https://x.example/dogs", [:], #"{"a":1}"#, [.body],
        false
      ),
    ] as [(String, String, String, HTTPHeaders, String, CassetteTransport.Matching, Bool)])
  func matchesAsConfigured(
    label: String, method: String, address: String, headers: HTTPHeaders, body: String,
    matching: CassetteTransport.Matching, matches: Bool
  ) async throws {
    let player = CassetteTransport(url: try await recorded(), mode: .none, matching: matching)
    let request = HTTPRequest(
      method: HTTPMethod(rawValue: method), url: URL(string: address)!, headers: headers,
      body: body.isEmpty ? nil : Data(body.utf8))
    do {
      _ = try await player.send(request)
      #expect(matches, "\(label)")
    } catch let error as CassetteError {
      #expect(!matches, "\(label): \(error)")
      guard case .noMatch = error else {
        Issue.record("expected noMatch, got \(error)")
        return
      }
    }
  }

  @Test func eachExchangePlaysOnceUnlessRepeatsAreAllowed() async throws {
    let file = try await recorded()
    let request = HTTPRequest(method: .post, url: URL(string: "https://x.example/dogs?a=1&b=2")!)
    let strict = CassetteTransport(url: file, mode: .none)
    _ = try await strict.send(request)
    let error = try await #require(throws: CassetteError.self) {
      _ = try await strict.send(request)
    }
    #expect(
      error.description == """
        No unplayed exchange in the cassette at \(file.path) matches POST https://x.example/dogs?a=1&b=2. It holds:
          POST https://x.example/dogs?a=1&b=2 (played)
        """)
    let lenient = CassetteTransport(url: file, mode: .none, allowsRepeats: true)
    for _ in 0..<3 {
      #expect(try await lenient.send(request).status == 204)
    }
  }

  @Test func reportsUnplayedExchangesWhereTheTransportWasMade() async throws {
    let file = try await recorded()
    let line = #line + 1
    let player = CassetteTransport(url: file, mode: .none)
    _ = try? await player.send(HTTPRequest(url: URL(string: "https://x.example/nothing")!))
    await withKnownIssue {
      #expect(await player.verifyAllPlayed() == ["POST https://x.example/dogs?a=1&b=2"])
    } matching: { issue in
      issue.sourceLocation?.line == line && String(describing: issue).contains("unplayed exchanges")
    }
  }
}
