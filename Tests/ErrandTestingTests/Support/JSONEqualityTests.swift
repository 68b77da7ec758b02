import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// One meaning of "the same JSON": `RequestMatcher.jsonBody(_:)`, a cassette's body matching and
/// `jsonBodyDifferences(from:)` agree, including where they once did not (a negative zero,
/// numbers beyond a `Double`, a key written twice).
@Suite(.timeLimit(.minutes(3))) struct JSONEqualityTests {
  @Test(
    arguments: [
      (["a": 1], #"{ "a": 1.0 }"#, []),
      (["a": 1], #"{"a":1e0}"#, []),
      (["a": 0], #"{"a":0.0e5}"#, []),
      (["a": 0], #"{"a":-0.0}"#, ["$.a: expected 0, sent -0.0"]),
      (["a": 0], #"{"a":-0}"#, ["$.a: expected 0, sent -0"]),
      (["a": 0], #"{"a":1E-400}"#, ["$.a: expected 0, sent 1E-400"]),
      (["a": 1], #"{"a":1,"a":2}"#, ["$.a: expected once, sent 2 times"]),
      (["a": 2], #"{"a":1,"a":2}"#, ["$.a: expected once, sent 2 times"]),
      (["a": 1], #"{"a":1,"b":[]}"#, ["$.b: not expected (sent [])"]),
    ] as [([String: Int], String, [String])])
  func theMatcherMatchesExactlyWhenTheReportFindsNoDifference(
    expected: [String: Int], sent: String, differences: [String]
  ) {
    let sent = request(.post, "/v1/dogs", body: Data(sent.utf8))
    #expect(sent.jsonBodyDifferences(from: expected) == differences)
    #expect(RequestMatcher.jsonBody(expected).matches(sent) == differences.isEmpty)
  }

  @Test(
    arguments: [
      (#"[1e400]"#, #"[ 1e400 ]"#, true),
      (#"[1e400]"#, #"[10e399]"#, true),
      (#"[1e400]"#, #"[2e400]"#, false),
      (#"{"a":1,"a":2}"#, #"{"a":2}"#, false),
      (#"{"a":1,"a":2}"#, #"{"a":1}"#, false),
      (#"{"a":1,"a":2}"#, #"{"a":2,"a":1}"#, false),
      (#"{"a":1,"a":2}"#, #"{ "a": 1, "a": 2.0 }"#, true),
      (#"{"a":-0.0}"#, #"{"a":0}"#, false),
    ])
  func aCassetteMatchesBodiesByTheSameRule(recorded: String, live: String, matches: Bool)
    async throws
  {
    let file = temporaryCassette()
    let address = URL(string: "https://x.example/dogs")!
    let recorder = CassetteTransport(
      url: file, mode: .all, upstream: StubTransport { _ in .status(204) })
    _ = try await recorder.send(
      HTTPRequest(method: .post, url: address, body: Data(recorded.utf8)))
    let player = CassetteTransport(url: file, mode: .none, matching: [.body])
    let request = HTTPRequest(method: .post, url: address, body: Data(live.utf8))
    do {
      _ = try await player.send(request)
      #expect(matches)
    } catch let error as CassetteError {
      guard case .noMatch = error else {
        Issue.record("expected noMatch, got \(error)")
        return
      }
      #expect(!matches)
    }
  }
}
